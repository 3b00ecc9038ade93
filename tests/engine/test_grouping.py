"""One cause, many runs (engine/grouping.py): a crash loop built from real failing logs is one
finding with its runs, runs that differ keep their own finding, and `combine` is associative."""

from __future__ import annotations

import json
from functools import reduce

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.diagnose import diagnose_blocks
from llamadiag.engine.findings import Report
from llamadiag.engine.grouping import Summary, combine, finish
from llamadiag.engine.reportdata import dump
from llamadiag.knowledge.loader import Knowledge
from tests.paths import SAMPLES

MISSING = (SAMPLES / "real" / "model-file-missing.log").read_text()  # start-up, then exit: no such file
PORT = (SAMPLES / "server-port-in-use-b5060-windows.log").read_text()  # a served run, then a restart that fails


def explain(knowledge: Knowledge, text: str) -> Report:
    """The report of a log given as text (one block)."""
    report, _ = diagnose_blocks(knowledge, [text.encode()])
    return report


def test_a_crash_loop_is_one_finding_seen_in_every_run(knowledge: Knowledge) -> None:
    report = explain(knowledge, MISSING * 40)
    (finding,) = report.findings
    assert finding.rule_id == "model-file-not-found"
    seen = finding.seen
    assert seen is not None and seen.runs == 40
    assert (seen.first_run, seen.last_run) == (0, 39)
    assert [e.run for e in seen.examples] == [0, 1, 2, 37, 38, 39]  # first and last three, bounded
    assert finding.count == 40 * seen.examples[0].count
    assert finding.first_line == 5 and finding.last_line == 39 * 15 + seen.examples[0].last_line
    assert seen.last_evidence[0].line == 39 * 15 + 5 and seen.last_evidence[0].time == 13.099e-3
    assert seen.first_time == 13.099e-3 and seen.unknown_build_runs == 40 and not seen.builds
    assert "seen in 40 runs (0-39): lines 5-9, 20-24, 35-39, ..., 560-564" in seen.sentence()
    assert report.run_count == 40
    (run,) = report.runs  # 40 runs with the same facts and no request: one entry
    assert run.seen is not None and run.seen.runs == 40 and run.seen.last.index == 39


def test_a_run_that_differs_keeps_its_own_finding(knowledge: Knowledge) -> None:
    other = MISSING.replace("no-such-model.gguf", "other-model.gguf")
    report = explain(knowledge, MISSING * 10 + other + MISSING * 9)
    by_path = {f.values["path"]: f for f in report.findings}
    assert set(by_path) == {"no-such-model.gguf", "other-model.gguf"}
    assert by_path["no-such-model.gguf"].seen.runs == 19  # type: ignore[union-attr]
    odd = by_path["other-model.gguf"]
    assert odd.run == 10 and odd.seen is not None and odd.seen.runs == 1
    assert report.run_count == 20 and len(report.runs) == 2  # the run with the other model is shown apart


def test_the_builds_of_the_runs_are_listed(knowledge: Knowledge) -> None:
    newer = PORT.replace("build: 5060 (7a84777f)", "build: 5070 (1b2c3d4e)")
    report = explain(knowledge, PORT * 3 + newer * 2)
    (port,) = [f for f in report.findings if f.rule_id == "port-already-in-use"]
    assert port.seen is not None and port.seen.runs == 5
    assert port.seen.builds == [5060, 5070]
    assert [e.build for e in port.seen.examples] == [5060, 5060, 5060, 5070, 5070]
    # the runs that served requests keep their own entries (their statistics are their own)
    served = [r for r in report.runs if r.stats.get("http_status")]
    assert len(served) == 5 and all(r.seen is None for r in served)


def _per_run(knowledge: Knowledge, text: str) -> tuple[list[Summary], Report]:
    """The one-run summaries the analyzer folds, in order, and its report."""
    analyzer = Analyzer(knowledge)
    parts: list[Summary] = []
    plain = analyzer.run_summary

    def spy(run, facts=None):  # type: ignore[no-untyped-def]
        part = plain(run, facts)
        parts.append(part)
        return part

    analyzer.run_summary = spy  # type: ignore[method-assign]
    analyzer.feed_bytes(text.encode())
    return parts, analyzer.report()


def _dump(summary: Summary) -> str:
    runs, findings, ruled = finish(summary)
    return json.dumps([[dump(x, json=True) for x in part] for part in (runs, findings, ruled)])


def test_combine_is_associative_with_an_identity(knowledge: Knowledge) -> None:
    """The speed and fleet helpers merge summaries of byte ranges and of logs in any grouping."""
    parts, report = _per_run(knowledge, MISSING * 3 + PORT * 2 + MISSING.replace("no-such", "gone") + MISSING * 8)
    assert len(parts) == 3 + 4 + 1 + 8
    left = reduce(combine, parts)
    right = reduce(lambda acc, part: combine(part, acc), reversed(parts))
    for cut in (1, 5, 9, 15):
        middle = combine(reduce(combine, parts[:cut]), reduce(combine, parts[cut:]))
        assert _dump(middle) == _dump(left)
    assert _dump(right) == _dump(left)
    assert _dump(combine(Summary(), left)) == _dump(left) == _dump(combine(left, Summary()))
    _, findings, _ = finish(left)
    assert [dump(f) for f in sorted(findings, key=lambda f: f.rule_id + str(f.run))] == [
        dump(f) for f in sorted(report.findings, key=lambda f: f.rule_id + str(f.run))
    ]


def test_combine_changes_neither_argument(knowledge: Knowledge) -> None:
    parts, _ = _per_run(knowledge, MISSING * 3)
    before = [_dump(p) for p in parts]
    combine(combine(parts[0], parts[1]), parts[2])
    assert [_dump(p) for p in parts] == before
