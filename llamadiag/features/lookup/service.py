"""`lookup`: from a support query to the known issues it points at, best first, each with why.

API (the CLI and the desk call this):

    lookup(knowledge, query: str, build: int | None = None, cmdline: str | None = None,
           limit: int = 5) -> LookupResponse

`query` is pasted error text (one line or a whole log, any wrapper), an issue or PR number
(`30204`, `#30257`), a rule id, or free words ("images fail with MTP"); it may be empty when
`build` or `cmdline` is given ("which known issues affect this build with these flags?").
`LookupResponse.results` holds `LookupResult`s best first; `error` is set (and results empty)
for a query that cannot be read (empty, punctuation, binary); `notes` says what was assumed.

Ranking, most reliable first (lookup_rank.py): a rule named by id, issue or PR number; a rule
signature matching the pasted text (the real engine runs on the paste); some entries of a
signature matching; the rule's conditions and version window holding for the build and flags;
then the word search (lookup_index.py). Facts known false (a flag, a build before the failure
appeared) push a rule down and say why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from llamadiag import api
from llamadiag.engine.cmdline import FlagTable
from llamadiag.engine.findings import ReferenceOut, StepOut, WorkaroundOut
from llamadiag.engine.reasoning import reference_out, steps_out, workarounds_out
from llamadiag.features.lookup.query import parse_query
from llamadiag.features.lookup.rank import Candidate, rank
from llamadiag.knowledge.loader import Knowledge

if TYPE_CHECKING:  # the rules are light copies from the start-up cache
    from llamadiag.knowledge.rulemodel import Rule


class LookupResult(BaseModel):
    """One rule that answers a lookup: its score, why, references and what to do."""

    rule_id: str
    title: str
    score: float = Field(
        description="0-100; bands: 95+ named, 85+ signature, 70+ partial signature, 50+ applies, words below 50"
    )
    why: list[str] = Field(description="Why this rule matched, strongest reason first.")
    references: list[ReferenceOut]
    fixed_in: int | None = None
    introduced_in: int | None = None
    affects_build: bool | None = Field(
        None, description="True: the build is inside the rule's version window; False: outside; None: unknown."
    )
    build_status: str = Field(description="What the known build means for this rule (upgrade, has the fix ...).")
    applies: bool | None = Field(None, description="False when a known fact rules the rule out for this setup.")
    confidence: str | None = Field(None, description="The engine's confidence when a signature matched the paste.")
    severity: str
    category: str
    summary: str
    diagnosis: str | None = None
    remediation: list[StepOut] = Field(default_factory=list)
    workarounds: list[WorkaroundOut] = Field(default_factory=list)
    verification: list[str] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)


class QueryOut(BaseModel):
    """How the query was read."""

    kind: list[str] = Field(description="What the query was read as: paste, reference, rule-id, words, build, flags.")
    build: int | None = None
    build_source: str | None = None
    flags: dict[str, Any] = Field(default_factory=dict)
    lines: int = 0


class LookupResponse(BaseModel):
    """The answer to a lookup: how the query was read, the results and notes."""

    query: QueryOut
    results: list[LookupResult]
    notes: list[str] = Field(default_factory=list)
    error: str | None = None


def lookup(
    knowledge: Knowledge, query: str, build: int | None = None, cmdline: str | None = None, limit: int = 5
) -> LookupResponse:
    """Find the known issues that match a query (log text, reference, rule id or words)."""
    flag_table = FlagTable(knowledge.flags)
    q = parse_query(query or "", flag_table, allow_empty=bool(build or cmdline))
    if q.error:
        return LookupResponse(query=QueryOut(kind=[]), results=[], notes=q.notes, error=q.error)
    build_opt = build if build is not None else q.build
    flags_text = " ".join(filter(None, [cmdline or "", q.flag_text])) or None
    diagnosis = api.diagnose_text(q.text, knowledge=knowledge, cmdline=flags_text, build=build_opt)
    report, facts = diagnosis.report, diagnosis.last_run_facts
    cands = rank(knowledge, q, report, facts)
    results = [_result(knowledge, c, facts) for c in cands[: max(1, limit)]]
    kinds = [
        name
        for name, present in (
            ("paste", bool(report.findings) or len(q.lines) > 1),
            ("reference", any(c.named for c in cands)),
            ("build", "build" in facts),
            ("flags", any(k.startswith("flag.") for k in facts)),
            ("words", bool(q.search_text.strip())),
        )
        if present
    ]
    notes = list(q.notes)
    if build is None and q.build is not None and q.build_text:
        notes.append(f"read '{q.build_text}' in the query as build b{q.build}")
    for n in q.bare_numbers:
        if not any(n in r for c in cands for r in c.named):
            notes.append(f"no rule references #{n}; if {n} is a build number, write b{n} or use --build {n}")
    if not results:
        notes.append("no known issue matches; `llamadiag report LOG` drafts an upstream bug report")
    source = facts["build"].source if "build" in facts else None
    return LookupResponse(
        query=QueryOut(
            kind=kinds,
            build=facts["build"].value if "build" in facts else None,
            build_source=source,
            flags={k[5:]: v.value for k, v in facts.items() if k.startswith("flag.")},
            lines=len(q.lines),
        ),
        results=results,
        notes=notes,
    )


def _result(k: Knowledge, c: Candidate, facts: dict) -> LookupResult:
    rule: Rule = k.rule(c.rule_id).rule  # type: ignore[union-attr]  # candidates are loaded rules
    scope = {name: v.value for name, v in facts.items()} | c.values
    finding = c.finding
    return LookupResult(
        rule_id=rule.id,
        title=rule.title,
        score=round(c.score, 1),
        why=c.why,
        references=[reference_out(r) for r in rule.references],
        fixed_in=rule.versions.fixed_in,
        introduced_in=rule.versions.introduced_in,
        affects_build=c.affects_build,
        build_status=finding.version_status if finding else c.build_status,
        applies=c.applies,
        confidence=finding.confidence if finding else None,
        severity=rule.severity.value,
        category=rule.category,
        summary=rule.summary.strip(),
        diagnosis=finding.diagnosis if finding else None,
        remediation=finding.remediation if finding else steps_out(rule, scope),
        workarounds=workarounds_out(rule),
        verification=[s.strip() for s in rule.verification.steps],
        questions=finding.questions if finding else c.questions,
    )
