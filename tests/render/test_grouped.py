"""One cause, many runs as users see it: a crash loop of 40 runs (a real failing start-up,
repeated) is one finding with its run count in the terminal, markdown, JSON, the bug-report
draft and watch's closing summary (issue #13 point 4)."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from markdown_it import MarkdownIt
from rich.console import Console

from llamadiag import api
from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.findings import Report
from llamadiag.features.bugreport import draft_report
from llamadiag.features.redact import Redactor
from llamadiag.features.watch.watcher import Watcher
from llamadiag.knowledge.loader import Knowledge
from llamadiag.render.json import report_data, write_json
from llamadiag.render.markdown import draft_markdown, report_markdown
from llamadiag.render.terminal import print_report
from llamadiag.render.watch import RichSink
from tests.paths import SAMPLES

LOOP = (SAMPLES / "real" / "model-file-missing.log").read_text() * 40  # 15 lines a run


@pytest.fixture(scope="module")
def report(knowledge: Knowledge) -> Report:
    return api.diagnose_text(LOOP, name="crash-loop.log", knowledge=knowledge).report


def test_terminal_shows_one_panel_with_the_runs(report: Report) -> None:
    console = Console(record=True, width=200, force_terminal=False)
    print_report(console, report)
    text = console.export_text()
    assert "40 run(s) · 1 finding(s)" in text
    assert text.count("model-file-not-found") == 1  # one panel (its subtitle)
    assert "model-file-not-found · runs 0-39 (40)" in text
    assert "Across runs: seen in 40 runs (0-39): lines 5-9, 20-24, 35-39, ..., 560-564, 575-579, 590-594" in text
    assert "Last seen (run 39)" in text and re.search(r"\b590\s+gguf_init_from_file", text)
    assert text.count("  run ") == 1 and "the same facts in 40 runs: 0, 1, 2, ..., 37, 38, 39" in text
    panel = Console(record=True, width=200, force_terminal=True)  # the rich panel on a terminal
    print_report(panel, report)
    shown = panel.export_text()
    assert shown.count("╭") == 1 and "model-file-not-found · runs 0-39 (40)" in shown and "Across runs:" in shown


def test_markdown_shows_one_section_with_the_runs(report: Report) -> None:
    text = report_markdown(report)
    assert text.count("\n## ") == 1
    assert "1 finding(s) in 40 server run(s)" in text
    assert "**Across runs.** Seen in 40 runs (0-39): lines 5-9, 20-24, 35-39, ..., 560-564, 575-579, 590-594" in text
    assert "· runs 0–39*" in text
    assert text.count("- Run ") == 1
    html = MarkdownIt().render(text)
    assert "<strong>Across runs.</strong> Seen in 40 runs" in html


def test_json_holds_one_finding_with_its_runs(knowledge: Knowledge) -> None:
    fresh = api.diagnose_text(LOOP, name="crash-loop.log", knowledge=knowledge).report  # the writer empties it
    out = io.StringIO()
    write_json(report_data(fresh, Redactor(), why=False), out)
    data = json.loads(out.getvalue())
    assert data["run_count"] == 40 and len(data["runs"]) == 1
    assert data["runs"][0]["seen"]["runs"] == 40 and data["runs"][0]["seen"]["last"]["index"] == 39
    (finding,) = data["findings"]
    assert (finding["run"], finding["count"], finding["first_line"]) == (0, 80, 5)
    seen = finding["seen"]
    assert (seen["runs"], seen["first_run"], seen["last_run"]) == (40, 0, 39)
    assert [e["run"] for e in seen["examples"]] == [0, 1, 2, 37, 38, 39]
    assert seen["last_evidence"][0]["line"] == 590 and seen["first_time"] == 0.013099


def test_the_bug_report_draft_names_the_runs(report: Report) -> None:
    text = draft_markdown(draft_report(report, []))
    assert "model-file-not-found: " in text and "seen in 40 runs (0-39)" in text


def test_watch_summary_has_one_row_for_the_cause(knowledge: Knowledge) -> None:
    events: list[dict[str, Any]] = []
    watcher = Watcher(Analyzer(knowledge), events.append)
    watcher.feed(LOOP.splitlines())
    watcher.finish("end of input", {"name": "crash-loop.log", "lines": 600})
    summary = events[-1]
    assert summary["type"] == "summary" and len(summary["causes"]) == 40  # the event keeps each run's cause
    console = Console(record=True, width=200, force_terminal=False)
    RichSink(console)(summary)
    text = console.export_text()
    rows = [line for line in text.splitlines() if "model-file-not-found" in line]
    assert len(rows) == 1
    assert "0-39 (40 runs)" in rows[0] and "80×" in rows[0] and "5-594" in rows[0]
