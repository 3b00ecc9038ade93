"""Which findings are shown, and in what order: a specific rule hides the generic one it
supersedes; then best first by confidence, severity, specificity, position."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llamadiag.engine.findings import Finding
from llamadiag.knowledge.levels import Confidence, Severity

if TYPE_CHECKING:
    from llamadiag.knowledge.loader import Knowledge


def finding_key(f: Finding) -> tuple:
    """The sort key of a finding: confidence, severity, known conditions, then position."""
    known = sum(1 for c in f.conditions if c.status == "true")
    return (-Confidence(f.confidence).rank, -Severity(f.severity).rank, -known, f.run, f.first_line)


def rank_findings(findings: list[Finding]) -> list[Finding]:
    """Findings in display order, most certain and most severe first."""
    return sorted(findings, key=finding_key)


def apply_supersedes(findings: list[Finding], k: Knowledge) -> list[Finding]:
    """Findings without those that another finding supersedes."""
    if len(findings) < 2:  # nothing to supersede (most runs; a crash loop assesses thousands)
        return findings
    by_id = {f.rule_id: f for f in findings}
    hidden: set[str] = set()
    for f in findings:
        loaded = k.rule(f.rule_id)
        if loaded is None:
            continue
        for other in loaded.rule.supersedes:
            target = by_id.get(other)
            if target is None:
                continue
            inside = any(f.first_line <= e.line <= f.last_line for e in target.evidence)
            if inside or loaded.rule.supersedes_scope == "run":
                hidden.add(other)
    return [f for f in findings if f.rule_id not in hidden]
