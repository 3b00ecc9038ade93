"""The console script's entry (cli/entry.py): a plain `explain` runs without typer (issue #11
point 4) and gives the same output, stderr and exit status as the typer application; everything
it does not take whole is handed to the application."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llamadiag.cli import app
from llamadiag.cli.entry import _plain_start, lean_explain, main
from llamadiag.knowledge.files import builtin_rules_dir, rule_files_in

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted(p for p in (ROOT / "sample_logs").glob("*.log")) + sorted((ROOT / "sample_logs" / "real").glob("*.log"))


def imported_modules(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run `python -m llamadiag` with -X importtime: the result and the modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "llamadiag", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
        cwd=cwd,
        timeout=120,
    )
    mods = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc, mods


def both(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(exit status, stdout, stderr) of the entry and of the typer application, in this process."""
    results = []
    for run in (lambda: main(args, prog_name="llamadiag"), lambda: app(args=args, prog_name="llamadiag")):
        with pytest.raises(SystemExit) as end:
            run()
        out, err = capsys.readouterr()
        code = end.value.code
        results.append((code if isinstance(code, int) else (0 if code is None else 1), out, err))
    return results[0], results[1]


def test_plain_explain_does_not_import_typer(tmp_path: Path) -> None:
    proc, mods = imported_modules("explain", str(ROOT / "sample_logs" / "seed-snippet.log"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]  # the seed snippet holds an error finding
    assert "llamadiag.cli.entry" in mods and "llamadiag.engine.analyze" in mods
    assert not {m for m in mods if m == "typer" or m.startswith("typer.")}


def test_a_call_it_does_not_take_goes_to_typer(tmp_path: Path) -> None:
    log = str(ROOT / "sample_logs" / "seed-snippet.log")
    proc, mods = imported_modules("explain", log, "--format", "xml", cwd=tmp_path)
    assert proc.returncode == 2 and "'xml' is not one of" in proc.stderr
    assert "typer" in mods


@pytest.mark.parametrize("fmt", ["rich", "json"])
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_same_output_as_the_application(
    log: Path, fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no config file, no checkout notice
    monkeypatch.setenv("COLUMNS", "100")
    lean, typer_app = both(["explain", str(log), "-f", fmt], capsys)
    assert lean == typer_app
    assert lean[1]  # a report was written


@pytest.mark.parametrize(
    "extra",
    [
        ["--why", "--unmatched", "--no-redact", "-q"],
        ["--format=markdown", "--fail-on", "warning", "--fail-confidence", "likely"],
        ["-f", "jsonl", "--build", "b5060", "--no-progress", "--color", "never", "--no-pager"],
        ["-f", "sarif", "--jobs", "auto", "--cmdline", "llama-server -m m.gguf -ngl 99"],
        ["-f", "github", "--fail-on", "none"],
        ["-f", "json", "-o", "OUT"],
        ["-f", "json", "--rules", "RULES"],
    ],
)
def test_options_mean_the_same(
    extra: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "RULES").mkdir()
    logs = [str(ROOT / "sample_logs" / "seed-snippet.log"), str(ROOT / "sample_logs" / "nearmiss-spec-text-only.log")]
    args = ["explain", *logs, *extra]
    assert lean_explain(args) is not None  # taken by the lean path
    lean, typer_app = both(args, capsys)
    assert lean == typer_app
    if "-o" in extra:
        assert (tmp_path / "OUT").read_text().startswith("{")


@pytest.mark.parametrize(
    "args",
    [
        ["explain"],
        ["explain", "LOG", "--format", "xml"],
        ["explain", "LOG", "--build", "x12"],
        ["explain", "LOG", "-j", "0"],
        ["explain", "LOG", "--bogus"],
        ["explain", "LOG", "-f"],
        ["explain", "LOG", "-o", "--why"],
        ["explain", "LOG", "--why=yes"],
        ["explain", "LOG", "--output="],
        ["explain", "LOG", "--cmdline", ""],
        ["explain", "LOG", "-qf", "json"],
        ["explain", "--", "LOG"],
        ["explain", "--help"],
        ["explain", "LOG", "--server", "http://127.0.0.1:9"],
        ["lookup", "CUDA error: out of memory"],
    ],
)
def test_what_it_does_not_take_whole_is_the_applications(args: list[str]) -> None:
    assert lean_explain(args) is None


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "LOG", "--format", "xml"],
        ["explain", "LOG", "--build", "x12"],
        ["explain", "LOG", "-j", "0"],
        ["explain", "LOG", "--bogus"],
        ["explain", "/no/such/file.log"],
        ["explain", "LOG", "/no/such/file.log", "-f", "json"],
    ],
)
def test_errors_are_worded_as_the_application_words_them(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    args = [str(ROOT / "sample_logs" / "seed-snippet.log") if a == "LOG" else a for a in args]
    lean, typer_app = both(args, capsys)
    assert lean == typer_app
    assert lean[0] == 2 and lean[2]  # worded on stderr


def test_help_still_shows_explains_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as end:
        main(["explain", "--help"], prog_name="llamadiag")
    out = capsys.readouterr().out
    assert end.value.code == 0
    for option in ("--format", "--output", "--fail-on", "--jobs", "--rules", "--why"):
        assert option in out


def test_a_config_file_still_applies(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "llamadiag.toml").write_text('[explain]\nformat = "json"\nfail-on = "none"\n')
    monkeypatch.chdir(tmp_path)
    lean, typer_app = both(["explain", str(ROOT / "sample_logs" / "seed-snippet.log")], capsys)
    assert lean == typer_app
    assert lean[0] == 0 and lean[1].startswith("{")


def test_a_notice_before_the_command_goes_to_the_application(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LLAMADIAG_RULES_PATH", raising=False)
    monkeypatch.delenv("LLAMADIAG_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user config file, no user rules
    assert _plain_start()
    shipped = rule_files_in(builtin_rules_dir())[0]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / shipped.name).write_text(shipped.read_text())
    monkeypatch.setenv("LLAMADIAG_RULES_PATH", str(tmp_path / "mine"))  # the application notes the override
    assert not _plain_start()
