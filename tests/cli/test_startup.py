"""Start-up: `--help`, `--version` and shell completion import neither the analyzer nor the
pydantic models (issue #13 point 15, #11 point 4); what they show is what the commands say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llamadiag.cli import COMMANDS, RULES
from llamadiag.cli.lazy import LazyCommand
from tests.paths import ROOT

# what a command's start-up must not pay for when it does not analyse anything
HEAVY = (
    "llamadiag.api",
    "llamadiag.engine.analyze",
    "llamadiag.engine.findings",
    "llamadiag.knowledge.rulemodel",
    "llamadiag.knowledge.formatmodel",
)


def imported(
    *args: str, env: dict[str, str] | None = None, timeout: int = 120, cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run llamadiag with -X importtime; the result and the modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "llamadiag", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "120", **(env or {})},
        timeout=timeout,
        cwd=cwd,
    )
    mods = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc, mods


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--help"], None),
        (["--version"], None),
        (["rules", "--help"], None),
        ([], {"_LLAMADIAG_COMPLETE": "complete_bash", "COMP_WORDS": "llamadiag ex", "COMP_CWORD": "1"}),
        ([], {"_LLAMADIAG_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "llamadiag rules l"}),
    ],
)
def test_light_calls_do_not_import_the_analyzer(args: list[str], env: dict[str, str] | None) -> None:
    proc, mods = imported(*args, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "llamadiag.cli" in mods  # the measurement saw the command line start
    assert not mods & set(HEAVY), sorted(mods & set(HEAVY))


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_do_not_import_rich(args: list[str]) -> None:
    _, mods = imported(*args)
    assert "rich.console" not in mods


def test_help_lists_every_command_and_completion_completes_names() -> None:
    proc, _ = imported("--help")
    for command in COMMANDS:
        assert f"  {command.name} " in proc.stdout
    proc, _ = imported(env={"_LLAMADIAG_COMPLETE": "complete_bash", "COMP_WORDS": "llamadiag ex", "COMP_CWORD": "1"})
    assert proc.stdout.split() == ["explain"]


def test_explain_still_imports_what_it_uses(tmp_path) -> None:
    log = tmp_path / "server.log"
    log.write_text("main: server is listening on http://127.0.0.1:8080 - starting the main loop\n")
    proc, mods = imported("explain", str(log))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "llamadiag.engine.analyze" in mods


@pytest.mark.parametrize("command", [*COMMANDS, *RULES], ids=lambda c: c.name)
def test_registered_help_is_the_commands_own(command: LazyCommand) -> None:
    """The listing shows the registered one-line help; it must say what the command itself says."""
    real = command.load()
    for limit in (45, 80, 200):
        stub_text = type(real)(name=command.name, help=command.help).get_short_help_str(limit)
        assert real.get_short_help_str(limit) == stub_text


def test_version_digest_is_the_knowledge_digest() -> None:
    from llamadiag import api

    proc, _ = imported("--version")
    k = api.load_knowledge(checked=False)
    assert f"rules {k.digest}, {len(k.rules) + len(k.errors)} rule files" in proc.stdout


@pytest.mark.parametrize("command", ["explain", "lookup", "watch", "fleet"])
def test_completing_a_command_option_does_not_import_the_analyzer(command: str) -> None:
    # the command's module is loaded to list its options; the engine's analyzer is not
    env = {"_LLAMADIAG_COMPLETE": "complete_bash", "COMP_WORDS": f"llamadiag {command} --", "COMP_CWORD": "2"}
    proc, mods = imported(env=env)
    assert proc.returncode == 0 and "--help" in proc.stdout, proc.stderr[-2000:]
    assert {"llamadiag.engine.analyze", "llamadiag.engine.diagnose"}.isdisjoint(mods)


def test_explain_on_a_cache_hit_builds_no_knowledge_model_class(tmp_path) -> None:
    """Issue #11 point 4: the start-up cache holds light copies; the pydantic rule and format
    models, their validators and PyYAML are for a cache miss (the first run) only."""
    log = tmp_path / "server.log"
    log.write_text("main: server is listening on http://127.0.0.1:8080 - starting the main loop\n")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc, first = imported("explain", str(log), "-f", "json", env=env, timeout=900)  # a miss: examples run
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc, hit = imported("explain", str(log), "-f", "json", env=env)
    assert proc.returncode == 0 and '"findings": []' in proc.stdout, proc.stderr[-2000:]
    models = {"llamadiag.knowledge.rulemodel", "llamadiag.knowledge.formatmodel", "yaml"}
    assert models <= first  # the miss validated the knowledge files
    assert "llamadiag.engine.analyze" in hit and not models & hit, sorted(models & hit)


def test_the_command_line_does_not_scan_for_pydantic_plugins(tmp_path) -> None:
    """Looking for pydantic plugins reads the metadata of every installed distribution (~10 ms of
    each start): the command line turns it off unless the user set PYDANTIC_DISABLE_PLUGINS."""
    log = tmp_path / "server.log"
    log.write_text("main: server is listening on http://127.0.0.1:8080 - starting the main loop\n")
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['llamadiag', 'explain', {str(log)!r}, '-f', 'json']\n"
        "try:\n    runpy.run_module('llamadiag', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "import pydantic.plugin._loader as loader\nprint('plugins', loader._plugins)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-1] == "plugins None"  # never looked for


@pytest.mark.parametrize("fmt", ["rich", "json", "markdown", "sarif"])
def test_explain_does_not_import_pydantic(tmp_path, fmt: str) -> None:
    """Issue #11 point 4 / #12: the report models are plain dataclasses (engine/findings.py), so
    `explain` in any format imports no pydantic on a cache hit (its import and the model classes
    were ~235 ms of a start and weigh on every fleet worker). Only the schema and validating a
    report read back (engine/reportdata.py) import it."""
    log = tmp_path / "server.log"
    log.write_text("main: loading model\n")
    args = ("explain", str(log), "-f", fmt)
    proc, _ = imported(*args, timeout=900)  # the knowledge cache may be cold (a code change)
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc, mods = imported(*args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "llamadiag.engine.findings" in mods and "llamadiag.engine.analyze" in mods
    assert not {m for m in mods if m.split(".")[0] in ("pydantic", "pydantic_core")}


@pytest.fixture(scope="module")
def small_log_modules(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The modules `explain` imports on a one-line log, with a warm start-up cache and no
    $XDG_CONFIG_HOME (the native config folder is looked up)."""
    tmp = tmp_path_factory.mktemp("small")
    log = tmp / "server.log"
    log.write_text("main: loading model\n")
    env = {"XDG_CACHE_HOME": str(tmp / "cache"), "HOME": str(tmp), "XDG_CONFIG_HOME": "", "PYTHONPATH": str(ROOT)}
    proc, _ = imported("explain", str(log), env=env, timeout=900, cwd=tmp)  # fills the cache
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc, mods = imported("explain", str(log), env=env, cwd=tmp)  # no config file around
    assert proc.returncode == 0 and "No known failure" in proc.stdout, proc.stderr[-2000:]
    assert "llamadiag.engine.analyze" in mods
    return mods


@pytest.mark.parametrize(
    "module",
    [
        "regex",  # only plain rule patterns are touched: the standard library compiles them
        "platformdirs",  # Linux's folders are said without it (userdirs._native)
        "tomllib",  # no config file here to read
        "statistics",  # no request served: no percentiles
        "gzip",  # a plain file: no decompressor
        "lzma",
        "bz2",
        "tempfile",  # written to stdout, not to a file
        "shlex",  # no --cmdline to split
        "llamadiag.engine.unmatched",  # no --unmatched
    ],
)
def test_a_small_log_does_not_import_what_it_does_not_use(small_log_modules: set[str], module: str) -> None:
    """Issue #11 point 4: each of these cost milliseconds of every start and a one-line log needs none."""
    if module == "platformdirs" and not sys.platform.startswith("linux"):
        pytest.skip("platformdirs gives the native folders off Linux")
    assert module not in small_log_modules
