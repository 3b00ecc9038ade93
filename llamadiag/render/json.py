"""JSON output of explain and facts: the contract of docs/json-output.md."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from llamadiag.engine.findings import Report

if TYPE_CHECKING:
    from llamadiag.features.redact import Redactor


def _drain(items: list[Any]) -> Iterator[Any]:
    """The items in order, each let go of as it is handed out."""
    items.reverse()
    while items:
        yield items.pop()


def write_report_json(report: Report, redactor: Redactor, why: bool, out: IO[str]) -> None:
    """Write a report, redacted by `redactor`, without keeping several copies of it.

    Each run and finding is dumped and let go of, and the JSON is written as it is encoded: an
    indented json.dumps of a report with hundreds of runs would hold several copies at once
    (the bytes are the same either way). `report` is emptied on the way.
    """
    from llamadiag.features.redact import redact_data

    runs, report.runs = report.runs, []
    findings, report.findings = report.findings, []
    data = report.model_dump(mode="json")
    data["runs"] = [item.model_dump(mode="json") for item in _drain(runs)]
    data["findings"] = [item.model_dump(mode="json") for item in _drain(findings)]
    data, redaction = redact_data(data, redactor)
    if not why:
        del data["ruled_out"]
    data["redaction"] = redaction.model_dump()
    for chunk in json.JSONEncoder(indent=2).iterencode(data):
        out.write(chunk)
    out.write("\n")


def runs_json(report: Report) -> str:
    """The runs of a report (facts with their sources, statistics), as `facts -f json` prints them."""
    return json.dumps([r.model_dump(mode="json") for r in report.runs], indent=2)
