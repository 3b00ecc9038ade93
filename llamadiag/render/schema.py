"""The JSON Schema of `explain --format json` (docs/output-schema.json), generated from the
report model and the wrapper render/json.py adds: the same models that produce the output
describe it. Regenerate with `python -m llamadiag.render.schema > docs/output-schema.json`
(a test fails while the file is stale, and checks the output of every sample log against it).

The report models are plain dataclasses (engine/findings.py); pydantic, which writes the schema
from them, is imported only when the schema is asked for (engine/reportdata.json_schema)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from llamadiag.engine.findings import Evidence, Report
from llamadiag.engine.reportdata import json_schema
from llamadiag.features.bugreport import LineTemplate, LooksLike
from llamadiag.features.redact import RedactionSummary
from llamadiag.render.json import SCHEMA_VERSION


@dataclass(kw_only=True)
class UnmatchedOut(LineTemplate):
    """A group of warning/error lines no rule explains (`--unmatched`), its examples like evidence."""

    examples: list[Evidence] = field(  # type: ignore[assignment]
        default_factory=list, metadata={"description": "The first occurrences: line and text."}
    )
    looks_like: list[LooksLike] = field(default_factory=list)


@dataclass(kw_only=True)
class ExplainOutput(Report):
    """The JSON output of `llamadiag explain --format json` (docs/json-output.md)."""

    schema_version: Literal[SCHEMA_VERSION] = field(  # type: ignore[valid-type]
        metadata={
            "description": "The version of this contract: major for a changed meaning or shape, minor for added fields."
        }
    )
    version: str = field(metadata={"description": "llamadiag's version."})
    rules_version: str = field(metadata={"description": "Digest of the knowledge files used."})
    unmatched: list[UnmatchedOut] = field(
        default_factory=list, metadata={"description": "With --unmatched: warning/error templates no finding explains."}
    )
    redaction: RedactionSummary = field(
        metadata={"description": "What shareable output replaced (counts by kind); enabled is false with --no-redact."}
    )


def output_schema() -> dict[str, Any]:
    """The JSON Schema of the explain JSON output."""
    schema = json_schema(ExplainOutput)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


if __name__ == "__main__":
    print(json.dumps(output_schema(), indent=2))
