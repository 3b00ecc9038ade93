"""The plain console (render/plainconsole.py) writes what rich writes on a console that is not a
terminal, byte for byte, without importing rich; the terminal view is unchanged."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from rich.console import Console

from llamadiag import api
from llamadiag.render.plainconsole import PlainConsole, writes_plain
from llamadiag.render.terminal import print_facts, print_report
from tests.paths import SAMPLES

# the top-level sample logs (every wrapper and era) and every fourth real-binary log
LOGS = sorted(SAMPLES.glob("*.log")) + sorted((SAMPLES / "real").glob("*.log"))[::4]


@pytest.fixture(scope="module")
def knowledge() -> api.Knowledge:
    return api.load_knowledge()


def rendered(console: PlainConsole | Console, report: api.Report) -> None:
    print_report(console, report, why=True)  # type: ignore[arg-type]  # both are printers
    print_facts(console, report)  # type: ignore[arg-type]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_plain_console_writes_what_rich_writes_in_a_pipe(log, knowledge) -> None:
    report = api.diagnose(log, knowledge=knowledge, unmatched=True).report
    ours, theirs = io.StringIO(), io.StringIO()
    rendered(PlainConsole(ours, highlight=False), report)
    rendered(Console(file=theirs, highlight=False), report)
    assert ours.getvalue() == theirs.getvalue()
    assert ours.getvalue().count("\n") > 3


def test_tabs_markup_and_controls_from_the_log_come_out_as_rich_writes_them(tmp_path, knowledge) -> None:
    # a tab (rich expands it by display width), a markup-looking bracket, a bell and a CR
    log = tmp_path / "odd.log"
    log.write_text(
        "main: loading model\n"
        "llama_model_load: error loading model: [bold]tab\there\x07\r\n"
        "llama_load_model_from_file: failed to load model\n"
        "srv    load_model: failed to load model, '/models/\tx.gguf'\n"
    )
    report = api.diagnose(log, knowledge=knowledge, unmatched=True).report
    ours, theirs = io.StringIO(), io.StringIO()
    rendered(PlainConsole(ours, highlight=False), report)
    rendered(Console(file=theirs, highlight=False), report)
    assert ours.getvalue() == theirs.getvalue()
    assert "[bold]" in ours.getvalue() and "\t" not in ours.getvalue()


def test_the_environment_can_make_rich_treat_a_pipe_as_a_terminal(monkeypatch) -> None:
    pipe = io.StringIO()
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    assert writes_plain(pipe)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not writes_plain(pipe)  # then rich draws panels, and the rich console is used


def _explain_in_a_pipe(env: dict[str, str]) -> tuple[str, str]:
    code = (
        "import sys\n"
        "from llamadiag.cli import entry\n"
        "try:\n"
        f"    entry.main(['explain', {str(SAMPLES / 'seed-ticket.txt')!r}])\n"
        "except SystemExit:\n"
        "    print('rich' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    return done.stdout, done.stderr.strip().splitlines()[-1]


def test_explain_in_a_pipe_does_not_import_rich_and_a_forced_terminal_does() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR")}
    out, rich_imported = _explain_in_a_pipe(env)
    assert rich_imported == "False"
    assert "== CONFIRMED Speculative draft (MTP / EAGLE3) loses position sync on image requests [error]" in out
    out, rich_imported = _explain_in_a_pipe(env | {"FORCE_COLOR": "1"})
    assert rich_imported == "True"
    assert "╭" in out  # the panels of the terminal layout
