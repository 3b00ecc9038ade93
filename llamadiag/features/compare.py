"""`compare BEFORE AFTER`: did the fix work, judged from the logs themselves.

Per run: request throughput, draft acceptance, errors. For each finding of BEFORE: is it
gone in AFTER, and do the rule's machine checks (signature absent, a line present,
throughput within tolerance, no errors) pass on AFTER? And which failures are new in AFTER?

Throughput (prompt and generation tokens/s, `throughput`): the median and the p90 of the last
run with timings in each log. A loss is a drop of more than LOSS at both; a gain of more than
GAIN at both is suspicious (a smaller model or quant, other hardware, shorter requests: check
that both logs measure the same thing). When only one of them moves, the request mix differs
more than the speed ("mixed"). These flags do not change the exit status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llamadiag.engine.findings import Finding, Report
from llamadiag.knowledge.loader import Knowledge
from llamadiag.knowledge.patterns import compile_pattern
from llamadiag.source.reader import read_blocks

LOSS = 0.10  # a drop of more than 10% at median and p90 is a loss
GAIN = 0.50  # a rise of more than 50% at both is suspicious rather than good news
METRICS = (("prompt", "prompt_tps"), ("generation", "generation_tps"))
STATS = ("median", "p90")


@dataclass
class Throughput:
    """One throughput metric (prompt or generation tok/s) of BEFORE against AFTER."""

    metric: str  # prompt | generation
    before: dict[str, Any]  # median, p90, count, run (empty when the log has no timings)
    after: dict[str, Any]
    change: dict[str, float] = field(default_factory=dict)  # median, p90: (after - before) / before
    verdict: str = "unknown"  # loss | gain | steady | mixed | unknown

    @property
    def note(self) -> str:
        """The verdict in words."""
        return {
            "loss": f"slower: both median and p90 dropped by more than {LOSS:.0%}",
            "gain": f"suspicious gain: both rose by more than {GAIN:.0%}; check that both logs run the same "
            "model, hardware and kind of requests",
            "steady": "steady",
            "mixed": "mixed: median and p90 disagree, the two logs likely hold different requests",
            "unknown": "no timings in one of the logs",
        }[self.verdict]


def _timed(report: Report, key: str) -> dict[str, Any]:
    """Median, p90 and count of a metric in the last run of the report that has timings."""
    for run in reversed(report.runs):
        series = run.stats.get(key) or {}
        if series.get("count"):
            return {"run": run.index, "count": series["count"], **{s: series[s] for s in STATS}}
    return {}


def throughput(before: Report, after: Report) -> list[Throughput]:
    """Prompt and generation throughput of the two logs, compared by median and p90."""
    out = []
    for metric, key in METRICS:
        t = Throughput(metric, _timed(before, key), _timed(after, key))
        if t.before and t.after:
            t.change = {s: (t.after[s] - t.before[s]) / t.before[s] for s in STATS if t.before[s]}
            changes = list(t.change.values())
            if len(changes) < len(STATS):
                t.verdict = "unknown"
            elif all(c < -LOSS for c in changes):
                t.verdict = "loss"
            elif all(c > GAIN for c in changes):
                t.verdict = "gain"
            elif any(c < -LOSS or c > GAIN for c in changes):
                t.verdict = "mixed"
            else:
                t.verdict = "steady"
        out.append(t)
    return out


@dataclass
class CheckResult:
    """One verification check of a fix, and whether the after-log passes it."""

    text: str
    status: str  # pass | fail | unknown
    detail: str = ""


@dataclass
class FindingVerdict:
    """Whether a finding of the before-log is gone from the after-log, with the checks of its fix."""

    rule_id: str
    title: str
    gone: bool
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def fixed(self) -> bool:
        """Gone, and no check failed."""
        return self.gone and all(c.status != "fail" for c in self.checks)


def _generation_fast_end(report: Report) -> float | None:
    """p90 of per-request generation tok/s in the last run that has timings.

    The fast end is compared, not the median: two logs rarely hold the same mix of
    prompts (code drafts far better than prose), but losing speculation or a slower
    kernel lowers the fast end too.
    """
    values = [r.stats.get("generation_tps", {}).get("p90") for r in report.runs]
    values = [v for v in values if v is not None]
    return values[-1] if values else None


def _line_present(path: str, regex: str) -> bool:
    pattern = compile_pattern(regex)
    return any(pattern.search(line) for block in read_blocks(path) for line in block)


def new_in_after(before: Report, after: Report) -> list[Finding]:
    """Findings of the after-log whose cause the before-log did not show (a fix that broke
    something else), one per rule, ranked as the after-log's report ranks them."""
    before_ids = {f.rule_id for f in before.findings}
    seen: set[str] = set()
    out = []
    for f in after.findings:
        if f.rule_id not in before_ids and f.rule_id not in seen:
            seen.add(f.rule_id)
            out.append(f)
    return out


def compare(k: Knowledge, before: Report, after: Report, after_path: str) -> list[FindingVerdict]:
    """A verdict for each finding of the before-log, judged on the after-log."""
    verdicts: list[FindingVerdict] = []
    after_ids = {f.rule_id for f in after.findings}
    for f in before.findings:
        if any(v.rule_id == f.rule_id for v in verdicts):
            continue
        loaded = k.rule(f.rule_id)
        verdict = FindingVerdict(f.rule_id, f.title, f.rule_id not in after_ids)
        for check in loaded.rule.verification.checks if loaded else []:
            verdict.checks.append(_check(check, f.rule_id, before, after, after_ids, after_path))
        verdicts.append(verdict)
    return verdicts


def _check(
    check: Any, rule_id: str, before: Report, after: Report, after_ids: set[str], after_path: str
) -> CheckResult:
    if check.kind == "signature_absent":
        ok = rule_id not in after_ids
        return CheckResult(check.text, "pass" if ok else "fail", "" if ok else "the signature is still in AFTER")
    if check.kind == "line_present":
        ok = _line_present(after_path, check.regex or "")
        return CheckResult(check.text, "pass" if ok else "fail", "" if ok else f"no line matches {check.regex!r}")
    if check.kind == "no_errors":
        errors = sum(r.stats.get("errors", 0) for r in after.runs)
        return CheckResult(check.text, "pass" if errors == 0 else "fail", f"{errors} error line(s) in AFTER")
    b, a = _generation_fast_end(before), _generation_fast_end(after)
    if b is None or a is None:
        return CheckResult(check.text, "unknown", "no generation timings in one of the logs")
    drop = (b - a) / b if b else 0.0
    ok = drop <= (check.tolerance or 0.1)
    return CheckResult(check.text, "pass" if ok else "fail", f"generation p90 {b:.2f} -> {a:.2f} tok/s ({-drop:+.0%})")


@dataclass
class Comparison:
    """Everything `compare` says about two logs."""

    before: Report
    after: Report
    verdicts: list[FindingVerdict]
    new: list[Finding]
    throughput: list[Throughput]


def compare_logs(k: Knowledge, before: Report, after: Report, after_path: str) -> Comparison:
    """The verdict on each finding of BEFORE, the failures new in AFTER, and the throughput."""
    return Comparison(
        before, after, compare(k, before, after, after_path), new_in_after(before, after), throughput(before, after)
    )
