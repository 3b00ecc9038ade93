"""The JSON Schema of `explain --format json` (docs/output-schema.json), generated from the
report model and the wrapper render/json.py adds: the same models that produce the output
describe it. Regenerate with `python -m llamadiag.render.schema > docs/output-schema.json`
(a test fails while the file is stale, and checks the output of every sample log against it)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from llamadiag.engine.findings import Evidence, Report
from llamadiag.features.bugreport import LineTemplate, LooksLike
from llamadiag.features.redact import RedactionSummary
from llamadiag.render.json import SCHEMA_VERSION


class UnmatchedOut(LineTemplate):
    """A group of warning/error lines no rule explains (`--unmatched`), its examples like evidence."""

    examples: list[Evidence] = Field(  # type: ignore[assignment]
        default_factory=list, description="The first occurrences: line and text."
    )
    looks_like: list[LooksLike] = Field(default_factory=list)


class ExplainOutput(Report):
    """The JSON output of `llamadiag explain --format json` (docs/json-output.md)."""

    schema_version: Literal[SCHEMA_VERSION] = Field(  # type: ignore[valid-type]
        description="The version of this contract: major for a changed meaning or shape, minor for added fields."
    )
    version: str = Field(description="llamadiag's version.")
    rules_version: str = Field(description="Digest of the knowledge files used.")
    unmatched: list[UnmatchedOut] = Field(
        default_factory=list, description="With --unmatched: warning/error templates no finding explains."
    )
    redaction: RedactionSummary = Field(
        description="What shareable output replaced (counts by kind); enabled is false with --no-redact."
    )


def output_schema() -> dict[str, Any]:
    """The JSON Schema of the explain JSON output."""
    schema = ExplainOutput.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


if __name__ == "__main__":
    print(json.dumps(output_schema(), indent=2))
