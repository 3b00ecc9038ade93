"""The fleet report (the JSON contract of docs/fleet.md), built from a merged `Summary` and the
knowledge: per known failure, per build (the build audit: which known failures a build is inside
the version window of), the upgrade plan, and unexplained lines grouped across instances.

Pure: the same summary and knowledge give the same report, and every list has a fixed order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from llamadiag import __version__
from llamadiag.features.fleet.summary import Hit, Instance, Summary, confidence_order, severity_order
from llamadiag.knowledge.loader import Knowledge
from llamadiag.knowledge.rulemodel import Rule

FORMAT_VERSION = 1


def iso(ts: float | None) -> str | None:
    """A log's modification time as ISO 8601 UTC, to the second."""
    return None if ts is None else datetime.fromtimestamp(int(ts), UTC).isoformat().replace("+00:00", "Z")


class IssueRef(BaseModel):
    """A llama.cpp issue or PR of a rule, with its URL."""

    label: str
    role: str
    url: str


class InstanceHit(BaseModel):
    """One instance that hit a known failure."""

    instance: str
    count: int
    runs: int
    confidence: str
    builds: list[int]
    build: int | None = Field(description="The instance's current build (its last run's).")
    seen: str | None


class FailureRow(BaseModel):
    """A known failure across the fleet."""

    rule_id: str
    title: str
    severity: str
    confidence: str = Field(description="The best confidence it had on any instance.")
    instances: int
    count: int
    first_seen: str | None
    last_seen: str | None
    builds: list[int]
    fixed_in: int | None
    introduced_in: int | None
    references: list[IssueRef]
    hits: list[InstanceHit]


class BuildIssue(BaseModel):
    """A known failure whose version window holds a build."""

    rule_id: str
    title: str
    severity: str
    fixed_in: int | None
    seen: bool = Field(description="Whether an instance on this build showed it.")
    references: list[IssueRef]


class BuildRow(BaseModel):
    """The instances on one build (null: the log does not say which) and what affects it."""

    build: int | None
    build_min: int | None = None
    instances: list[str]
    known_issues: list[BuildIssue]


class UpgradeStep(BaseModel):
    """Upgrading these instances to `to_build` or later fixes `rule_id` on all of them."""

    rule_id: str
    title: str
    to_build: int
    references: list[IssueRef]
    instances: list[str] = Field(description="Known to run a build below the fix.")
    unknown_build: list[str] = Field(description="Hit it, build unknown: check `llama-server --version` first.")
    regression: list[str] = Field(description="Hit it on a build that has the fix: upgrading does not help.")
    text: str


class UpgradePlan(BaseModel):
    """One upgrade for the whole fleet, then each fix on its own."""

    to_build: int | None
    instances: list[str]
    fixes: list[str]
    text: str | None
    steps: list[UpgradeStep]


class UnmatchedRow(BaseModel):
    """A warning/error line shape no rule explains, across instances: the next rule to write."""

    template: str
    level: str
    instances: int
    count: int
    example: str
    on: list[str]


class ErrorRow(BaseModel):
    """A log that could not be read, or only in part."""

    log: str
    error: str


class FleetReport(BaseModel):
    """What `llamadiag fleet` reports (docs/fleet.md)."""

    format: int = FORMAT_VERSION
    version: str = __version__
    rules_version: str
    logs: int
    instances: int
    instances_with_failures: int
    failures: list[FailureRow]
    builds: list[BuildRow]
    upgrade: UpgradePlan
    unmatched: list[UnmatchedRow]
    errors: list[ErrorRow]
    instance_list: list[InstanceRow]


class InstanceRow(BaseModel):
    """One instance: build, runs, logs, size and the failures it hit."""

    name: str
    build: int | None
    build_min: int | None
    build_max: int | None
    runs: int
    lines: int
    bytes: int
    seen: str | None
    failures: list[str]
    logs: list[str]


FleetReport.model_rebuild()


def refs(rule: Rule | None) -> list[IssueRef]:
    """The rule's issue and PR references (report and fix first)."""
    if rule is None:
        return []
    order = {"report": 0, "fix": 1, "cause": 2, "related": 3, "workaround": 4}
    out = []
    for r in sorted(rule.references, key=lambda r: order.get(r.role, 9)):
        if r.kind not in ("issue", "pr"):
            continue
        kind = "pull" if r.kind == "pr" else "issues"
        label = f"{'PR ' if r.kind == 'pr' else ''}#{r.id}"
        if r.repo != "ggml-org/llama.cpp":
            label = f"{r.repo} {label}"
        out.append(IssueRef(label=label, role=r.role, url=f"https://github.com/{r.repo}/{kind}/{r.id}"))
    return out


def build_report(summary: Summary, k: Knowledge) -> FleetReport:
    """The fleet report of a merged summary."""
    rules = {r.rule.id: r.rule for r in k.rules}
    failures = _failures(summary.instances, rules)
    return FleetReport(
        rules_version=k.digest,
        logs=summary.logs,
        instances=len(summary.instances),
        instances_with_failures=sum(1 for i in summary.instances if i.hits),
        failures=failures,
        builds=_builds(summary.instances, rules),
        upgrade=_upgrade(summary.instances, rules),
        unmatched=_unmatched(summary.instances),
        errors=[ErrorRow(log=e.log, error=e.error) for e in summary.errors],
        instance_list=[
            InstanceRow(
                name=i.name,
                build=i.build,
                build_min=i.build_min,
                build_max=i.build_max,
                runs=i.runs,
                lines=i.lines,
                bytes=i.bytes,
                seen=iso(i.seen),
                failures=[h.rule_id for h in i.hits],
                logs=list(i.logs),
            )
            for i in summary.instances
        ],
    )


def _failures(instances: tuple[Instance, ...], rules: dict[str, Rule]) -> list[FailureRow]:
    by_rule: dict[str, list[tuple[Instance, Hit]]] = defaultdict(list)
    for inst in instances:
        for h in inst.hits:
            by_rule[h.rule_id].append((inst, h))
    rows = []
    for rule_id, pairs in by_rule.items():
        rule = rules.get(rule_id)
        firsts = [h.first_seen for _, h in pairs if h.first_seen is not None]
        lasts = [h.last_seen for _, h in pairs if h.last_seen is not None]
        rows.append(
            FailureRow(
                rule_id=rule_id,
                title=rule.title if rule else rule_id,
                severity=rule.severity if rule else "error",
                confidence=min((h.confidence for _, h in pairs), key=confidence_order),
                instances=len(pairs),
                count=sum(h.count for _, h in pairs),
                first_seen=iso(min(firsts)) if firsts else None,
                last_seen=iso(max(lasts)) if lasts else None,
                builds=sorted({b for _, h in pairs for b in h.builds}),
                fixed_in=rule.versions.fixed_in if rule else None,
                introduced_in=rule.versions.introduced_in if rule else None,
                references=refs(rule),
                hits=[
                    InstanceHit(
                        instance=i.name,
                        count=h.count,
                        runs=h.runs,
                        confidence=h.confidence,
                        builds=list(h.builds),
                        build=i.build,
                        seen=iso(h.last_seen),
                    )
                    for i, h in pairs
                ],
            )
        )
    return sorted(
        rows, key=lambda r: (-r.instances, severity_order(r.severity), confidence_order(r.confidence), r.rule_id)
    )


def affects(rule: Rule, build: int) -> bool:
    """Whether a known build lies in the rule's version window (it can show the failure and
    lacks the fix); rules without a window are not part of a build audit."""
    v = rule.versions
    if v.fixed_in is None and v.introduced_in is None:
        return False
    if v.introduced_in is not None and build < v.introduced_in:
        return False
    return v.fixed_in is None or build < v.fixed_in


def _builds(instances: tuple[Instance, ...], rules: dict[str, Rule]) -> list[BuildRow]:
    by_build: dict[int | None, list[Instance]] = defaultdict(list)
    for inst in instances:
        by_build[inst.build].append(inst)
    rows = []
    for build, insts in by_build.items():
        seen = {h.rule_id for i in insts for h in i.hits}
        issues = []
        if build is not None:
            for rule in rules.values():
                if affects(rule, build) and rule.versions.fixed_in is not None:
                    issues.append(
                        BuildIssue(
                            rule_id=rule.id,
                            title=rule.title,
                            severity=rule.severity,
                            fixed_in=rule.versions.fixed_in,
                            seen=rule.id in seen,
                            references=refs(rule),
                        )
                    )
        issues.sort(key=lambda b: (not b.seen, severity_order(b.severity), b.rule_id))
        mins = [i.build_min for i in insts if i.build_min is not None]
        rows.append(
            BuildRow(
                build=build,
                build_min=min(mins) if build is None and mins else None,
                instances=sorted(i.name for i in insts),
                known_issues=issues,
            )
        )
    return sorted(rows, key=lambda r: (r.build is None, -(r.build or 0)))


def _upgrade(instances: tuple[Instance, ...], rules: dict[str, Rule]) -> UpgradePlan:
    steps = []
    for rule_id in sorted({h.rule_id for i in instances for h in i.hits}):
        rule = rules.get(rule_id)
        if rule is None or rule.versions.fixed_in is None:
            continue
        fix = rule.versions.fixed_in
        hit = [(i, h) for i in instances for h in i.hits if h.rule_id == rule_id]
        below = sorted(i.name for i, h in hit if h.confidence != "regression" and _below(i, fix))
        regression = sorted(i.name for i, h in hit if h.confidence == "regression" or (i.build or 0) >= fix)
        unknown = sorted(i.name for i, _ in hit if i.name not in below and i.name not in regression)
        reference = next((r.label for r in refs(rule) if r.role == "report"), rule_id)
        text = (
            f"Upgrading these {len(below)} instance(s) to b{fix} or later fixes {reference} on all of them."
            if below
            else f"No instance that hit {reference} is known to run a build below b{fix}."
        )
        steps.append(
            UpgradeStep(
                rule_id=rule_id,
                title=rule.title,
                to_build=fix,
                references=refs(rule),
                instances=below,
                unknown_build=unknown,
                regression=regression,
                text=text,
            )
        )
    steps.sort(key=lambda s: (-len(s.instances), s.to_build, s.rule_id))
    useful = [s for s in steps if s.instances]
    if not useful:
        return UpgradePlan(to_build=None, instances=[], fixes=[], text=None, steps=steps)
    target = max(s.to_build for s in useful)
    names = sorted({n for s in useful for n in s.instances})
    fixes = sorted(s.rule_id for s in useful)
    text = f"Upgrading {len(names)} instance(s) to b{target} or later fixes {len(fixes)} known failure(s) they hit."
    return UpgradePlan(to_build=target, instances=names, fixes=fixes, text=text, steps=steps)


def _below(inst: Instance, fix: int) -> bool:
    top = inst.build if inst.build is not None else inst.build_max
    return top is not None and top < fix


def _unmatched(instances: tuple[Instance, ...]) -> list[UnmatchedRow]:
    groups: dict[str, list[tuple[str, int, str, str]]] = defaultdict(list)
    for inst in instances:
        for t in inst.unmatched:
            groups[t.template].append((inst.name, t.count, t.level, t.example))
    rows = [
        UnmatchedRow(
            template=template,
            level=min(level for _, _, level, _ in on),
            instances=len(on),
            count=sum(c for _, c, _, _ in on),
            example=min(e for _, _, _, e in on),
            on=sorted(n for n, _, _, _ in on),
        )
        for template, on in groups.items()
    ]
    return sorted(rows, key=lambda r: (-r.instances, r.level != "E", -r.count, r.template))


def redacted(report: FleetReport, redact_text: Callable[[str], str]) -> FleetReport:
    """The report with its log text (the unexplained lines' examples) redacted; instance names
    and paths stay, since they are what an operator acts on."""
    rows = [u.model_copy(update={"example": redact_text(u.example)}) for u in report.unmatched]
    return report.model_copy(update={"unmatched": rows})
