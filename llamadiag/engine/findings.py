"""What the engine concludes: findings (and, for --why, the rules it ruled out).

These models are the JSON output contract (docs/json-output.md); renderers read them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


def reference_label(kind: str, ident: str, repo: str, title: str | None) -> str:
    """`#30204`, `PR #30257`, `commit a748c27057`; references to other repositories name them."""
    if kind == "doc":
        return title or ident
    prefix = "" if repo == "ggml-org/llama.cpp" else f"{repo} "
    mark = {"issue": "#", "pr": "PR #", "commit": "commit ", "discussion": "discussion #"}.get(kind, "")
    return f"{prefix}{mark}{ident}"


class Evidence(BaseModel):
    """One log line quoted as evidence."""

    line: int
    text: str


class FactUse(BaseModel):
    """A fact's value as used by a finding, with its line and source."""

    value: Any
    line: int | None = None
    source: str

    @classmethod
    def of(cls, fact: Any) -> FactUse:
        """From a facts.FactValue (same three fields)."""
        return cls(value=fact.value, line=fact.line, source=fact.source)


class ReferenceOut(BaseModel):
    """A reference (issue, PR, commit ...) of a finding, with its URL."""

    kind: str
    id: str
    repo: str = "ggml-org/llama.cpp"
    role: str
    build: int | None = None
    title: str | None = None
    url: str
    confirmed: bool = True
    note: str | None = None

    @property
    def label(self) -> str:
        """A short label: `#30204`, `PR #30257`, `commit a748c27057`, or a doc's title."""
        return reference_label(self.kind, self.id, self.repo, self.title)


class StepOut(BaseModel):
    """A remediation step, with its command when it has one."""

    text: str
    command: str | None = None


class WorkaroundOut(BaseModel):
    """A workaround, its caveat, and its command when it has one."""

    text: str
    caveat: str
    command: str | None = None


class ConditionOut(BaseModel):
    """One condition of a rule and whether the run's facts make it true, false or unknown."""

    fact: str
    expected: str
    value: Any = None
    status: str  # true | false | unknown


class Finding(BaseModel):
    """A rule that fits a run: the diagnosis, its evidence, confidence and what to do."""

    rule_id: str
    title: str
    category: str
    severity: str
    confidence: str
    run: int
    summary: str
    evidence: list[Evidence]
    values: dict[str, Any] = Field(default_factory=dict)
    facts_used: dict[str, FactUse] = Field(default_factory=dict)
    conditions: list[ConditionOut] = Field(default_factory=list)
    count: int = 1
    first_line: int
    last_line: int
    references: list[ReferenceOut] = Field(default_factory=list)
    fixed_in: int | None = None
    introduced_in: int | None = None
    version_status: str
    diagnosis: str
    root_cause: str
    remediation: list[StepOut]
    workarounds: list[WorkaroundOut] = Field(default_factory=list)
    not_to_do: list[str] = Field(default_factory=list)
    verification: list[str]
    questions: list[str] = Field(default_factory=list)
    source_file: str | None = None  # the rule's file: rules/<category>/<id>.yaml, or a user rule's path


class RuledOut(BaseModel):
    """A rule whose signature matched but that the run's facts or lines ruled out."""

    rule_id: str
    run: int
    reason: str
    evidence_line: int


class RunOut(BaseModel):
    """One server run in the report: its lines, facts, their sources and request statistics."""

    index: int
    instance: str | None = None
    first_line: int
    last_line: int
    startup_seen: bool
    facts: dict[str, Any]
    fact_sources: dict[str, FactUse]
    stats: dict[str, Any] = Field(default_factory=dict)


class Report(BaseModel):
    """The diagnosis of a whole input: its runs, findings, ruled-out rules and notes."""

    version: str
    rules_version: str
    input: dict[str, Any]
    runs: list[RunOut]
    findings: list[Finding]
    ruled_out: list[RuledOut] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    unmatched: list[Any] = Field(
        default_factory=list, description="With --unmatched: warning/error templates no finding explains."
    )


def facts_for_output(facts: dict[str, Any]) -> dict[str, Any]:
    """Fact values (FactValue by name) as RunOut shows them, the parsed flags grouped under "flags"."""
    out: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    for name, value in sorted(facts.items()):
        if name.startswith("flag."):
            flags[name[5:]] = value.value
        else:
            out[name] = value.value
    out["flags"] = flags
    return out
