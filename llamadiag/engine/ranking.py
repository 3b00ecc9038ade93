"""Which findings are shown, and in what order: a specific rule hides the generic one it
supersedes; then best first by confidence, severity, specificity, position."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from llamadiag.engine.findings import Finding
from llamadiag.knowledge.levels import Confidence, Severity

if TYPE_CHECKING:
    from llamadiag.knowledge.loader import Knowledge
    from llamadiag.knowledge.rulemodel import Rule


def finding_key(f: Finding, demoted: bool = False) -> tuple:
    """The sort key of a finding: confidence, severity, whether a finding of another run names its
    cause (`demoted`), known conditions, then position."""
    known = sum(1 for c in f.conditions if c.status == "true")
    return (-Confidence(f.confidence).rank, -Severity(f.severity).rank, demoted, -known, f.run, f.first_line)


def rank_findings(findings: list[Finding], k: Knowledge | None = None) -> list[Finding]:
    """Findings in display order, most certain and most severe first.

    With the knowledge, a finding that another finding's rule supersedes, but that was not hidden
    because the two are in different runs (a router's "instance exited" and its child's own
    error), comes after the findings as certain and as severe as it: the cause before its symptom.
    """
    superseded: set[str] = set()
    if k is not None and len(findings) > 1:
        superseded = {target.rule_id for _, _, target in _superseding(findings, k)}
    return sorted(findings, key=lambda f: finding_key(f, f.rule_id in superseded))


def _superseding(findings: list[Finding], k: Knowledge) -> Iterator[tuple[Finding, Rule, Finding]]:
    """(finding, its rule, a finding of a rule that rule supersedes) for each such pair present."""
    by_id = {f.rule_id: f for f in findings}
    for f in findings:
        loaded = k.rule(f.rule_id)
        if loaded is None:
            continue
        for other in loaded.rule.supersedes:
            target = by_id.get(other)
            if target is not None and other != f.rule_id:
                yield f, loaded.rule, target


def apply_supersedes(findings: list[Finding], k: Knowledge) -> list[Finding]:
    """Findings without those that another finding supersedes."""
    if len(findings) < 2:  # nothing to supersede (most runs; a crash loop assesses thousands)
        return findings
    hidden: set[str] = set()
    for f, rule, target in _superseding(findings, k):
        inside = any(f.first_line <= e.line <= f.last_line for e in target.evidence)
        if inside or rule.supersedes_scope == "run":
            hidden.add(target.rule_id)
    return [f for f in findings if f.rule_id not in hidden]
