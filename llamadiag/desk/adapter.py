"""The desk's one door to `lookup` and redaction, which live in their own modules.

TEMPORARY: until llamadiag.lookup and llamadiag.redact are merged, lookup answers from the
rule signatures alone (a pasted error is a log line) and redaction is reported as not applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llamadiag.analyze import Analyzer
from llamadiag.findings import Report
from llamadiag.knowledge import Knowledge
from llamadiag.reader import read_text


@dataclass
class Redacted:
    report: Report
    note: str  # the closing line: what was redacted and how many times


@dataclass
class Looked:
    data: dict[str, Any]  # the JSON of `lookup --format json`
    markdown: str


def redact_report(report: Report) -> Redacted:
    return Redacted(report, "redaction not applied (llamadiag.redact missing)")


def lookup(k: Knowledge, query: str) -> Looked:
    analyzer = Analyzer(k)
    for block in read_text(query):
        analyzer.feed(block)
    report = analyzer.report({"name": "query"})
    results = [
        {
            "rule_id": f.rule_id,
            "title": f.title,
            "score": 1.0,
            "why": "signature matched the pasted text",
            "references": [{"kind": r.kind, "id": r.id, "role": r.role} for r in f.references],
            "fixed_in": f.fixed_in,
            "affects_build": None,
        }
        for f in report.findings
    ]
    md = "\n".join(f"- `{r['rule_id']}`: {r['title']}" for r in results) or "No known issue matched."
    return Looked({"results": results}, md + "\n")
