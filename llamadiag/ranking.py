"""Ordering findings best first: confidence, then severity, then specificity, then position."""

from __future__ import annotations

from llamadiag.findings import Finding
from llamadiag.rulemodel import Confidence, Severity


def finding_key(f: Finding) -> tuple:
    known = sum(1 for c in f.conditions if c.status == "true")
    return (-Confidence(f.confidence).rank, -Severity(f.severity).rank, -known, f.run, f.first_line)


def rank_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=finding_key)
