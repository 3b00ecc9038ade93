"""The two layouts (#13 point 7): rich panels and tables on a terminal; in a pipe, plain lines
that never cut a title, an id or a value, whatever the width rich guesses for a pipe (80)."""

from __future__ import annotations

import io
import re
import subprocess
import sys

from rich.console import Console
from rich.text import Text

from llamadiag import api
from llamadiag.render.layout import Block, TableView, stdout_console
from llamadiag.render.terminal import print_facts, print_report
from tests.paths import ROOT

TICKET = ROOT / "sample_logs" / "seed-ticket.txt"
TITLE = "Speculative draft (MTP / EAGLE3) loses position sync on image requests"


def llamadiag(*args: str) -> subprocess.CompletedProcess:
    """The command behind a pipe, at the width rich guesses for one (no COLUMNS)."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "llamadiag", *args], capture_output=True, env=env, timeout=120)


def console(terminal: bool, width: int = 80) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    c = Console(file=out, force_terminal=terminal, width=width, highlight=False, color_system=None)
    if not terminal:
        c.soft_wrap = True
    return c, out


def test_piped_explain_keeps_the_whole_title_and_the_rule_id_on_their_lines() -> None:
    out = llamadiag("explain", str(TICKET)).stdout.decode()
    assert f"== CONFIRMED {TITLE} [error]" in out.splitlines()
    assert "  -- spec-vision-draft-position-gap · run 0" in out.splitlines()
    assert "╭" not in out and "│" not in out  # no box in a pipe
    # an evidence line is one line, whole
    assert any(
        re.fullmatch(r"\s+51\s+srv\s+decode: failed to process speculative batch", line) for line in out.splitlines()
    )


def test_the_terminal_keeps_its_panels() -> None:
    report = api.diagnose(str(TICKET)).report
    c, out = console(terminal=True, width=100)
    print_report(c, report)
    text = out.getvalue()
    assert "╭" in text and "spec-vision-draft-position-gap · run 0" in text
    assert "== CONFIRMED" not in text


def test_piped_facts_keep_a_long_value_whole() -> None:
    report = api.diagnose(str(ROOT / "sample_logs" / "seed-b11503-default.log")).report
    c, out = console(terminal=False)
    print_facts(c, report)
    lines = out.getvalue().splitlines()
    model = next(line for line in lines if line.startswith("model_path"))
    assert re.fullmatch(r"model_path\s+GLM-5\.3-Flash-UD-IQ2_XXS-00001-of-00004\.gguf\s+line \d+", model)


def test_a_plain_table_pushes_a_long_cell_along_instead_of_cutting_it() -> None:
    table = TableView(["id", "severity", "title"], "rules")
    table.add_row("a-very-long-rule-identifier-that-is-wider-than-forty-columns-x", "critical", "one")
    table.add_row("short", "info", Text("two\nlines"))
    c, out = console(terminal=False, width=30)
    c.print(table)
    lines = out.getvalue().splitlines()
    assert lines[0] == "rules"
    assert lines[1].split() == ["id", "severity", "title"]
    assert lines[2] == "a-very-long-rule-identifier-that-is-wider-than-forty-columns-x  critical  one"
    assert lines[3].split() == ["short", "info", "two;", "lines"]


def test_a_block_is_a_panel_on_a_terminal_and_lines_in_a_pipe() -> None:
    block = Block(
        [Text(("body text that is rather long " * 5).rstrip())], title=Text(" TITLE  words "), subtitle=Text("an-id")
    )
    c, out = console(terminal=False, width=40)
    c.print(block)
    assert out.getvalue().splitlines() == [
        "== TITLE words",
        "  " + ("body text that is rather long " * 5).rstrip(),
        "  -- an-id",
    ]
    c, out = console(terminal=True, width=40)
    c.print(block)
    assert out.getvalue().startswith("╭")


def test_a_rich_table_inside_a_block_becomes_aligned_lines_in_a_pipe() -> None:
    from rich.table import Table

    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right")
    grid.add_column()
    grid.add_row("7", "a line of log text that is far longer than the forty columns of this console")
    grid.add_row("123", "short")
    c, out = console(terminal=False, width=40)
    c.print(Block([grid], title=Text("T")))
    assert out.getvalue().splitlines()[1:] == [
        "    7  a line of log text that is far longer than the forty columns of this console",
        "  123  short",
    ]


def test_stdout_console_does_not_wrap_in_a_pipe() -> None:
    assert stdout_console().soft_wrap  # pytest's stdout is captured, not a terminal


def test_piped_lookup_keeps_titles_and_ids_whole() -> None:
    from llamadiag.features.lookup.service import lookup
    from llamadiag.render.lookup import print_lookup

    resp = lookup(api.load_knowledge(), "failed to process speculative batch", None, None, 3)
    c, out = console(terminal=False, width=40)
    print_lookup(c, resp)
    lines = out.getvalue().splitlines()
    best = resp.results[0]
    assert any(line.startswith("== ") and best.title in line for line in lines)
    assert any(line.startswith("  -- " + best.rule_id + " · ") for line in lines)


def test_piped_watch_summary_shows_whole_columns_and_times() -> None:
    out = llamadiag("watch", "--format", "rich", str(ROOT / "sample_logs" / "seed-b11503-default.log")).stdout.decode()
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("rule "))
    assert header.split() == ["rule", "run", "severity", "confidence", "seen", "lines", "last", "seen"]
    row = next(line for line in lines if line.startswith("spec-vision-draft-position-gap "))
    assert re.fullmatch(r"spec-vision-draft-position-gap\s+0\s+error\s+likely\s+2×\s+70-84\s+\d\d:\d\d:\d\d", row)
