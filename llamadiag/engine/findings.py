"""What the engine concludes: findings (and, for --why, the rules it ruled out).

These models are the JSON output contract (docs/json-output.md); renderers read them. They are
plain dataclasses so that `explain` never imports pydantic (start-up time, fleet worker memory):
engine/reportdata.py dumps, copies and (lazily, with pydantic) validates them, and describes them
as JSON Schema (render/schema.py). A field's `description` sits in its metadata, where pydantic
reads it.
"""

from __future__ import annotations

# Every class is keyword-only (a required field may follow a defaulted one, as in a pydantic
# model) and slotted (memory: a report of thousands of runs holds thousands of these).
from dataclasses import dataclass, field
from typing import Any


def reference_label(kind: str, ident: str, repo: str, title: str | None) -> str:
    """`#30204`, `PR #30257`, `commit a748c27057`; references to other repositories name them."""
    if kind == "doc":
        return title or ident
    prefix = "" if repo == "ggml-org/llama.cpp" else f"{repo} "
    mark = {"issue": "#", "pr": "PR #", "commit": "commit ", "discussion": "discussion #"}.get(kind, "")
    return f"{prefix}{mark}{ident}"


@dataclass(slots=True, kw_only=True)
class Evidence:
    """One log line quoted as evidence."""

    line: int
    text: str
    time: float | None = field(
        default=None,
        metadata={"description": "Seconds since the server started, from llama's log prefix, where the log has it."},
    )


@dataclass(slots=True, kw_only=True)
class FactUse:
    """A fact's value as used by a finding, with its line and source."""

    value: Any
    line: int | None = None
    source: str

    @classmethod
    def of(cls, fact: Any) -> FactUse:
        """From a facts.FactValue (same three fields)."""
        return cls(value=fact.value, line=fact.line, source=fact.source)


@dataclass(slots=True, kw_only=True)
class ReferenceOut:
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


@dataclass(slots=True, kw_only=True)
class StepOut:
    """A remediation step, with its command when it has one."""

    text: str
    command: str | None = None


@dataclass(slots=True, kw_only=True)
class WorkaroundOut:
    """A workaround, its caveat, and its command when it has one."""

    text: str
    caveat: str
    command: str | None = None


@dataclass(slots=True, kw_only=True)
class ConditionOut:
    """One condition of a rule and whether the run's facts make it true, false or unknown."""

    fact: str
    expected: str
    value: Any = None
    status: str  # true | false | unknown


@dataclass(slots=True, kw_only=True)
class RunSeen:
    """One run a grouped finding was seen in: where, how often, and the build it ran."""

    run: int
    first_line: int
    last_line: int
    count: int = 1
    build: int | None = None


@dataclass(slots=True, kw_only=True)
class Seen:
    """Where one cause was seen across runs: a crash loop repeats the same failure in every run,
    and its finding is shown once with this summary (engine/grouping.py builds it)."""

    runs: int = 1
    first_run: int
    last_run: int
    first_time: float | None = None
    last_time: float | None = None
    builds: list[int] = field(
        default_factory=list, metadata={"description": "Distinct known builds of those runs (at most 16)."}
    )
    unknown_build_runs: int = 0
    examples: list[RunSeen] = field(
        default_factory=list,
        metadata={"description": "The first and the last runs it was seen in (at most 3 of each)."},
    )
    last_evidence: list[Evidence] = field(
        default_factory=list,
        metadata={"description": "The evidence of the last run it was seen in, when that is not the first."},
    )

    def sentence(self) -> str:
        """`seen in 40 runs (0-39): lines 5-9, 20-24, 35-39, ..., 587-591; build b5060` and the times."""
        spans = [
            f"{e.first_line}-{e.last_line}" if e.last_line != e.first_line else str(e.first_line) for e in self.examples
        ]
        if self.runs > len(self.examples):
            spans.insert(len(spans) // 2, "...")
        text = f"seen in {self.runs} runs ({self.first_run}-{self.last_run}): lines {', '.join(spans)}"
        if self.builds:
            text += "; build" + ("s " if len(self.builds) > 1 else " ") + ", ".join(f"b{b}" for b in self.builds)
            if self.unknown_build_runs:
                text += f" ({self.unknown_build_runs} run(s) of unknown build)"
        else:
            text += "; build unknown"
        if self.first_time is not None and self.last_time is not None:
            text += f"; first at {self.first_time:.3f} s into its run, last at {self.last_time:.3f} s into its run"
        return text


@dataclass(slots=True, kw_only=True)
class Finding:
    """A rule that fits a run: the diagnosis, its evidence, confidence and what to do."""

    rule_id: str
    title: str
    category: str
    severity: str
    confidence: str
    run: int
    summary: str
    evidence: list[Evidence]
    values: dict[str, Any] = field(default_factory=dict)
    facts_used: dict[str, FactUse] = field(default_factory=dict)
    conditions: list[ConditionOut] = field(default_factory=list)
    count: int = 1
    first_line: int
    last_line: int
    references: list[ReferenceOut] = field(default_factory=list)
    fixed_in: int | None = None
    introduced_in: int | None = None
    version_status: str
    diagnosis: str
    root_cause: str
    remediation: list[StepOut]
    workarounds: list[WorkaroundOut] = field(default_factory=list)
    not_to_do: list[str] = field(default_factory=list)
    verification: list[str]
    questions: list[str] = field(default_factory=list)
    seen: Seen | None = field(
        default=None,
        metadata={"description": "In a report: the runs this same cause was seen in (`run` is the first)."},
    )
    source_file: str | None = field(
        default=None, metadata={"description": "The rule's file: rules/<category>/<id>.yaml, or a user rule's path."}
    )


@dataclass(slots=True, kw_only=True)
class RuledOut:
    """A rule whose signature matched but that the run's facts or lines ruled out."""

    rule_id: str
    run: int
    reason: str
    evidence_line: int
    runs: int = field(default=1, metadata={"description": "Runs in which the rule was ruled out for this same reason."})
    last_run: int | None = None


@dataclass(slots=True, kw_only=True)
class RunSpan:
    """A run by its index and lines."""

    index: int
    first_line: int
    last_line: int


@dataclass(slots=True, kw_only=True)
class RunsSeen:
    """Runs with the same facts as the run that shows them (a crash loop restarts identically)."""

    runs: int = 1
    last: RunSpan
    examples: list[RunSpan] = field(
        default_factory=list, metadata={"description": "The first and last runs (at most 3 of each)."}
    )

    def sentence(self) -> str:
        """`the same facts in 20 runs: 0, 1, 2, ..., 17, 18, 19; the last on lines 287-300`."""
        indices = [str(e.index) for e in self.examples]
        if self.runs > len(self.examples):
            indices.insert(len(indices) // 2, "...")
        return (
            f"the same facts in {self.runs} runs: {', '.join(indices)}; "
            f"the last on lines {self.last.first_line}-{self.last.last_line}"
        )


@dataclass(slots=True, kw_only=True)
class RunOut:
    """One server run in the report: its lines, facts, their sources and request statistics."""

    index: int
    instance: str | None = None
    first_line: int
    last_line: int
    startup_seen: bool
    facts: dict[str, Any]
    fact_sources: dict[str, FactUse]
    stats: dict[str, Any] = field(default_factory=dict)
    seen: RunsSeen | None = field(
        default=None, metadata={"description": "Other runs with the same facts and no requests, folded into this one."}
    )


@dataclass(slots=True, kw_only=True)
class Report:
    """The diagnosis of a whole input: its runs, findings, ruled-out rules and notes."""

    version: str
    rules_version: str
    input: dict[str, Any]
    runs: list[RunOut]
    run_count: int | None = field(
        default=None,
        metadata={"description": "Server runs read; runs with the same facts are shown once (RunOut.seen)."},
    )
    findings: list[Finding]
    ruled_out: list[RuledOut] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unmatched: list[Any] = field(
        default_factory=list, metadata={"description": "With --unmatched: warning/error templates no finding explains."}
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
