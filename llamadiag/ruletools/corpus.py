"""The annotated corpus: sample logs beside the expectations of what each must produce.

`sample_logs/<name>` holds a realistic log; `tests/expectations/*.yaml` lists, per log, the
findings it must produce (strict: nothing else may appear) and near-miss rules it must not.
`rules test` runs them; `--bless` rewrites the findings lists after a deliberate change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from llamadiag.knowledge.loader import Knowledge
from llamadiag.ruletools.selftest import analyze_file, check_expectation


@dataclass
class CorpusCase:
    """A sample log's expectation entry, what the engine found, and the problems."""

    file: Path
    entry: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    got: list[tuple[str, str]] = field(default_factory=list)


def find_root(start: Path | None = None) -> Path | None:
    """The checkout holding sample_logs/ and tests/expectations/, if any."""
    here = (start or Path.cwd()).resolve()
    for candidate in [here, *here.parents, Path(__file__).resolve().parents[2]]:
        if (candidate / "sample_logs").is_dir() and (candidate / "tests" / "expectations").is_dir():
            return candidate
    return None


def load_cases(root: Path) -> list[CorpusCase]:
    """Every expectation entry of tests/expectations/*.yaml."""
    cases = []
    for path in sorted((root / "tests" / "expectations").glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text()) or []:
            cases.append(CorpusCase(path, entry))
    return cases


def run_cases(k: Knowledge, root: Path, cases: list[CorpusCase]) -> list[CorpusCase]:
    """Diagnose each case's sample log and record its problems against the expectation."""
    for case in cases:
        e = case.entry
        log = root / "sample_logs" / e["log"]
        if not log.is_file():
            case.problems = [f"sample log {e['log']} does not exist"]
            continue
        report = analyze_file(k, log, e.get("cmdline"), e.get("version_text"))
        seen: dict[str, str] = {}
        for f in report.findings:
            seen.setdefault(f.rule_id, f.confidence)
        case.got = sorted(seen.items())
        case.problems = check_expectation(report, e)
    return cases


def unlisted_logs(root: Path, cases: list[CorpusCase]) -> list[str]:
    """Sample logs that no expectation lists."""
    listed = {c.entry["log"] for c in cases}
    return sorted(p.name for p in (root / "sample_logs").iterdir() if p.is_file() and p.name not in listed)


def bless(cases: list[CorpusCase]) -> int:
    """Rewrite the `findings:` list of each failing case to what the engine now produces."""
    changed = 0
    by_file: dict[Path, list[CorpusCase]] = {}
    for case in cases:
        if case.problems:
            by_file.setdefault(case.file, []).append(case)
    for path, failing in by_file.items():
        text = path.read_text()
        for case in failing:
            text, n = _replace_findings(text, case.entry["log"], case.got)
            changed += n
        path.write_text(text)
    return changed


def _replace_findings(text: str, log: str, got: list[tuple[str, str]]) -> tuple[str, int]:
    start = re.search(rf"^- log: {re.escape(log)}\s*$", text, re.M)
    if not start:
        return text, 0
    nxt = re.search(r"^- log: ", text[start.end() :], re.M)
    end = start.end() + nxt.start() if nxt else len(text)
    block = text[start.end() : end]
    items = "".join(f"\n    - {{rule: {rule}, confidence: {conf}}}" for rule, conf in got)
    new_block, n = re.subn(
        r"\n  findings:(?:[ \t]*\[\][^\n]*|(?:\n    - [^\n]*)+)", f"\n  findings:{items or ' []'}", block, count=1
    )
    return text[: start.end()] + new_block + text[end:], n
