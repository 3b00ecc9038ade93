"""JSON output of explain and facts: the contract of docs/json-output.md (and its JSON Schema,
docs/output-schema.json). Both carry the same wrapper: `schema_version` (of this contract),
`version` (llamadiag's), `rules_version` (the digest of the knowledge used)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from llamadiag.engine.findings import Report
from llamadiag.engine.reportdata import dump

if TYPE_CHECKING:
    from llamadiag.features.redact import RedactionSummary, Redactor

# The version of the JSON contract: the major part changes when a field changes its meaning or
# shape, the minor part when fields are added. 1.0: the first published schema. 2.0: a cause
# repeated across runs is one finding (`seen`), runs with the same facts one entry (`run_count`).
SCHEMA_VERSION = "2.0"


def _drain(items: list[Any]) -> Iterator[Any]:
    """The items in order, each let go of as it is handed out."""
    items.reverse()
    while items:
        yield items.pop()


def _wrapper(report: Report) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "version": report.version, "rules_version": report.rules_version}


def _examples_as_evidence(unmatched: list[Any]) -> None:
    """`unmatched[].examples` as objects like `evidence` ({line, text}), not [line, text] pairs."""
    for template in unmatched:
        if isinstance(template, dict):
            template["examples"] = [
                {"line": e[0], "text": e[1]} if isinstance(e, list | tuple) else e for e in template.get("examples", [])
            ]


def report_data(report: Report, redactor: Redactor, why: bool) -> dict[str, Any]:
    """The report as the JSON contract's data, redacted by `redactor`, without keeping several
    copies of it: each run and finding is dumped and let go of (`report` is emptied on the way)."""
    from llamadiag.features.redact import redact_data

    runs, report.runs = report.runs, []
    findings, report.findings = report.findings, []
    data = _wrapper(report) | dump(report, json=True)
    data["runs"] = [dump(item, json=True) for item in _drain(runs)]
    data["findings"] = [dump(item, json=True) for item in _drain(findings)]
    _examples_as_evidence(data["unmatched"])
    data, redaction = redact_data(data, redactor)
    if not why:
        del data["ruled_out"]
    data["redaction"] = dump(redaction)
    return data


def redacted_report_data(report: Report, redaction: RedactionSummary) -> dict[str, Any]:
    """The JSON contract's data of a report that was already redacted (the desk's API), without
    `ruled_out`: the same as `explain --format json` prints."""
    data = _wrapper(report) | dump(report, json=True, exclude={"ruled_out"})
    _examples_as_evidence(data["unmatched"])
    data["redaction"] = dump(redaction)
    return data


def write_json(data: dict[str, Any], out: IO[str]) -> None:
    """Write indented JSON as it is encoded (an indented json.dumps of a report with hundreds
    of runs would hold the whole text at once; the bytes are the same either way)."""
    for chunk in json.JSONEncoder(indent=2).iterencode(data):
        out.write(chunk)
    out.write("\n")


def facts_data(report: Report, redactor: Redactor) -> dict[str, Any]:
    """What `facts -f json` prints: the wrapper, the input, the runs (facts with their sources,
    statistics), the notes and what redaction replaced."""
    from llamadiag.features.redact import redact_data

    data = _wrapper(report) | {
        "input": report.input,
        "runs": [dump(r, json=True) for r in report.runs],
        "notes": list(report.notes),
    }
    data, redaction = redact_data(data, redactor)
    data["redaction"] = dump(redaction)
    return data
