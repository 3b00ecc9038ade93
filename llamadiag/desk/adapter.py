"""The desk's one door to `lookup` and redaction (llamadiag.features.lookup.service, llamadiag.features.redact).

Both answers are redacted before anything is rendered: the report (evidence lines, facts,
flags) and the lookup response (the query's flags and notes can quote a pasted command line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from llamadiag import __version__
from llamadiag.api import Report, dump
from llamadiag.features.lookup.service import LookupResponse
from llamadiag.features.lookup.service import lookup as run_lookup
from llamadiag.features.redact import RedactionSummary, Redactor, redact_report
from llamadiag.knowledge.loader import Knowledge
from llamadiag.render.json import redacted_report_data
from llamadiag.render.lookup import lookup_markdown


@dataclass
class Redacted:
    """A redacted report and the summary of what was redacted."""

    report: Report
    summary: RedactionSummary

    def json(self) -> str:
        """The same JSON as `llamadiag explain --format json`: the report and what was redacted."""
        return json.dumps(redacted_report_data(self.report, self.summary), indent=2)


@dataclass
class Looked:
    """A redacted lookup response, its summary, and its markdown rendering."""

    response: LookupResponse  # redacted
    summary: RedactionSummary
    markdown: str  # the same as `llamadiag lookup --format markdown`

    def json(self) -> str:
        """The same JSON as `llamadiag lookup --format json`."""
        return json.dumps(self.response.model_dump(mode="json") | {"redaction": dump(self.summary)}, indent=2)


def redact(report: Report) -> Redacted:
    """The report with sensitive text redacted, and what was replaced."""
    return Redacted(*redact_report(report))


def redact_query(query: str, cmdline: str = "") -> str:
    """A query as the page may show it again (the search box): redacted like the rest of the page."""
    redactor = Redactor()
    redactor.learn([query, cmdline])
    return redactor.text(query)


def lookup(k: Knowledge, query: str, build: int | None = None, cmdline: str | None = None) -> Looked:
    """Look up a pasted query and return the redacted response and its markdown."""
    response = run_lookup(k, query, build=build, cmdline=cmdline)
    redactor = Redactor()
    redactor.learn_input([query, cmdline or ""])  # a key or host of the paste is masked wherever it recurs
    clean, summary = redactor.model(response), redactor.summary()
    versions = f"llamadiag {__version__}, rules {k.digest}"
    return Looked(clean, summary, lookup_markdown(clean, versions, summary.line()))
