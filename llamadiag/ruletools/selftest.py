"""Running a rule's inline examples, and the annotated corpus, through the real engine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llamadiag.engine.diagnose import diagnose_blocks
from llamadiag.engine.findings import Finding, Report
from llamadiag.knowledge.loader import Knowledge, LoadedRule
from llamadiag.source.blocks import read_byte_blocks
from llamadiag.source.reader import ReadReport, read_text


@dataclass
class ExampleResult:
    """Whether a rule's inline example gave the expected verdict, and why not."""

    rule_id: str
    name: str
    ok: bool
    detail: str


def analyze_text(k: Knowledge, text: str, cmdline: str | None = None, version_text: str | None = None) -> Report:
    """The report of an inline example (no input description, as the rule file holds it)."""
    return diagnose_blocks(k, read_text(text), cmdline=cmdline, version_text=version_text)[0]


def analyze_file(k: Knowledge, path: Path, cmdline: str | None = None, version_text: str | None = None) -> Report:
    """The report of a corpus log, with the reader's notes."""
    read = ReadReport(str(path))
    blocks = read_byte_blocks(str(path), read)
    described = lambda: (None, read.notes())  # noqa: E731
    return diagnose_blocks(k, blocks, cmdline=cmdline, version_text=version_text, describe=described)[0]


def run_examples(k: Knowledge, loaded: LoadedRule) -> list[ExampleResult]:
    """Run a rule's inline examples."""
    results = []
    rule = loaded.rule
    for ex in rule.examples:
        report = analyze_text(k, ex.log, ex.cmdline, ex.version_text)
        mine = [f for f in report.findings if f.rule_id == rule.id]
        if ex.expect == "none":
            ok = not mine
            detail = "" if ok else f"expected no finding, got {mine[0].confidence}"
        elif not mine:
            why = [r.reason for r in report.ruled_out if r.rule_id == rule.id]
            ok, detail = False, f"expected {ex.expect}, got no finding" + (f" (ruled out: {why[0]})" if why else "")
        else:
            got = mine[0]
            ok = got.confidence == ex.expect
            detail = "" if ok else f"expected {ex.expect}, got {got.confidence}"
            bad = {k_: v for k_, v in ex.values.items() if got.values.get(k_) != v}
            if bad:
                ok = False
                detail += f" values differ: expected {bad}, got { {k_: got.values.get(k_) for k_ in bad} }"
        results.append(ExampleResult(rule.id, ex.name, ok, detail.strip()))
    return results


def check_expectation(report: Report, expected: dict[str, Any]) -> list[str]:
    """Problems with a corpus log's findings against its expectation entry (strict)."""
    problems = []
    want = {(e["rule"]): e for e in expected.get("findings") or []}
    got: dict[str, Finding] = {}
    f: Finding | None
    for f in report.findings:
        got.setdefault(f.rule_id, f)
    for rule_id, e in want.items():
        f = got.get(rule_id)
        if f is None:
            problems.append(f"missing finding {rule_id}")
        elif e.get("confidence") and f.confidence != e["confidence"]:
            problems.append(f"{rule_id}: expected {e['confidence']}, got {f.confidence}")
        elif "run" in e and f.run != e["run"]:
            problems.append(f"{rule_id}: expected in run {e['run']}, got run {f.run}")
    for rule_id in got:
        if rule_id not in want:
            problems.append(f"unexpected finding {rule_id} ({got[rule_id].confidence})")
    for rule_id in expected.get("must_not") or []:
        if rule_id in got and rule_id not in want:
            problems.append(f"must-not finding {rule_id} present")
    return problems
