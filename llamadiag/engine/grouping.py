"""One cause, many runs: findings and runs grouped across the runs of a log.

A crash-looping server prints the same start-up and the same failure again and again; a log
of 10,000 restarts is one cause, not 10,000 findings. The analyzer folds each run into a
`Summary` as the run ends, so memory and the report grow with the distinct causes, not with
the runs:

- one finding per cause: the rule and everything the finding says (confidence, diagnosis,
  values, facts used, version verdict, the shape of its evidence); line numbers, counts and
  times are not part of the cause. A run whose finding differs (another build verdict, other
  captured values, another confidence) is a cause of its own and keeps its own finding.
- one run entry per run shape: runs with the same facts that served no requests are shown
  once (`RunOut.seen`); a run that served requests keeps its own entry and statistics.
- ruled-out rules once per (rule, reason).

`combine(a, b)` merges the summary of a stretch of log with the summary of the stretch right
after it (line numbers already absolute). It is pure (neither argument is changed) and
associative, with `Summary()` as identity, so summaries of byte ranges scanned apart, or of
several logs read one after the other, merge in any grouping: `combine(combine(a, b), c) ==
combine(a, combine(b, c))`. Evidence stays bounded: the first run's evidence, the last run's
evidence, the first and last `KEEP` runs, at most `MAX_BUILDS` builds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from llamadiag.engine.findings import Finding, RuledOut, RunOut, RunSeen, RunSpan, RunsSeen, Seen
from llamadiag.engine.reportdata import replace
from llamadiag.knowledge.patterns import compile_pattern

KEEP = 3  # first and last runs kept as examples of a grouped finding or run
MAX_BUILDS = 16


# numbers in evidence text (addresses, timings, ids); compiled (cached) when a finding is first
# grouped, so a log without findings does not import `regex`
_NUMBERS = r"0x[0-9a-fA-F]+|\d+"


@dataclass(frozen=True)
class Summary:
    """Grouped findings, runs and ruled-out rules of a stretch of log, each by its key in the
    order first seen; `run_count` is how many runs the stretch held."""

    findings: dict[str, Finding] = field(default_factory=dict)
    runs: dict[str, RunOut] = field(default_factory=dict)
    ruled_out: dict[str, RuledOut] = field(default_factory=dict)
    run_count: int = 0


def cause_key(f: Finding) -> str:
    """What makes two findings the same cause: all the finding says except where and how often."""
    return _key(
        f.rule_id,
        f.confidence,
        f.severity,
        f.version_status,
        f.diagnosis,
        f.values,
        {k: (v.value, v.source) for k, v in f.facts_used.items()},
        [(c.fact, c.expected, c.status, c.value) for c in f.conditions],
        f.questions,
        [compile_pattern(_NUMBERS).sub("#", e.text) for e in f.evidence],
    )


def run_key(run: RunOut) -> str:
    """What makes two runs the same: instance, start-up and facts, when neither served requests
    (a run that served requests has statistics of its own: it is kept apart, by its index)."""
    served = _served(run.stats)
    return _key(run.instance, run.startup_seen, run.facts, run.index if served else None)


def one_run(run: RunOut, findings: Iterable[Finding], ruled_out: Iterable[RuledOut], build: int | None) -> Summary:
    """The summary of one run: its entry, its findings (with `seen` for this run) and ruled-out rules."""
    grouped: dict[str, Finding] = {}
    for f in findings:
        times = (f.evidence[0].time, f.evidence[-1].time) if f.evidence else (None, None)
        seen = _single(f, build, *times)
        key = cause_key(f)
        prior = grouped.get(key)
        one = replace(f, seen=seen)
        grouped[key] = one if prior is None else merge_findings(prior, one)
    ruled: dict[str, RuledOut] = {}
    for r in ruled_out:
        rkey = _key(r.rule_id, compile_pattern(_NUMBERS).sub("#", r.reason))
        ruled.setdefault(rkey, r)
    return Summary(findings=grouped, runs={run_key(run): run}, ruled_out=ruled, run_count=1)


def combine(a: Summary, b: Summary) -> Summary:
    """The summary of stretch `a` followed by stretch `b` (pure and associative; see the module doc)."""
    return Summary(
        findings=_merge(a.findings, b.findings, merge_findings),
        runs=_merge(a.runs, b.runs, merge_runs),
        ruled_out=_merge(a.ruled_out, b.ruled_out, merge_ruled_out),
        run_count=a.run_count + b.run_count,
    )


def merge_findings(a: Finding, b: Finding) -> Finding:
    """One cause seen in `a`'s runs and then in `b`'s: `a`'s finding with counts, lines and
    runs over both, and the last evidence from `b`."""
    sa, sb = _seen_of(a), _seen_of(b)
    examples = _ends(sa.examples + sb.examples, sa.runs + sb.runs)
    seen = Seen(
        runs=sa.runs + sb.runs,
        first_run=sa.first_run,
        last_run=sb.last_run,
        first_time=sa.first_time if sa.first_time is not None else sb.first_time,
        last_time=sb.last_time if sb.last_time is not None else sa.last_time,
        builds=sorted(set(sa.builds) | set(sb.builds))[:MAX_BUILDS],
        unknown_build_runs=sa.unknown_build_runs + sb.unknown_build_runs,
        examples=examples,
        last_evidence=sb.last_evidence or list(b.evidence),
    )
    return replace(
        a,
        count=a.count + b.count,
        first_line=min(a.first_line, b.first_line),
        last_line=max(a.last_line, b.last_line),
        seen=seen,
    )


def merge_runs(a: RunOut, b: RunOut) -> RunOut:
    """Runs of one shape: `a`'s entry (the first run) with how many runs and which, up to `b`'s last."""
    sa, sb = _runs_seen(a), _runs_seen(b)
    runs = sa.runs + sb.runs
    seen = RunsSeen(runs=runs, last=sb.last, examples=_ends(sa.examples + sb.examples, runs))
    return replace(a, seen=seen)


def merge_ruled_out(a: RuledOut, b: RuledOut) -> RuledOut:
    """A rule ruled out for the same reason in `a`'s runs and in `b`'s."""
    return replace(a, runs=a.runs + b.runs, last_run=b.last_run if b.last_run is not None else b.run)


def shift_runs(summary: Summary, offset: int) -> Summary:
    """The summary with every run index moved up by `offset`: a stretch scanned on its own
    numbers its runs from 0, and is renumbered to follow the `offset` runs before it."""
    if not offset:
        return summary
    runs = [_shift_run(r, offset) for r in summary.runs.values()]
    return Summary(
        findings={key: _shift_finding(f, offset) for key, f in summary.findings.items()},
        runs={run_key(r): r for r in runs},  # a served run's key holds its index
        ruled_out={
            key: replace(r, run=r.run + offset, last_run=None if r.last_run is None else r.last_run + offset)
            for key, r in summary.ruled_out.items()
        },
        run_count=summary.run_count,
    )


def finish(summary: Summary) -> tuple[list[RunOut], list[Finding], list[RuledOut]]:
    """The grouped runs, findings and ruled-out rules of a summary in the order of their first
    run (runs of several instances end out of order), ready for the report."""
    runs = sorted(summary.runs.values(), key=lambda r: r.index)
    findings = sorted(summary.findings.values(), key=lambda f: (f.run, f.first_line))
    ruled = sorted(summary.ruled_out.values(), key=lambda r: r.run)
    return runs, findings, ruled


# -- helpers -------------------------------------------------------------------------------
def _key(*parts: Any) -> str:
    return json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))


def _served(stats: dict[str, Any]) -> bool:
    """Whether a run's statistics show any request."""
    return bool(
        stats.get("prompt_tps", {}).get("count")
        or stats.get("generation_tps", {}).get("count")
        or stats.get("errors")
        or stats.get("http_status")
        or stats.get("draft")
    )


def _ends(items: list[Any], total: int) -> list[Any]:
    """The first and last KEEP of `total` items, given the first and last KEEP of each part in order."""
    if total <= 2 * KEEP:
        return items
    return items[:KEEP] + items[-KEEP:]


def _seen_of(f: Finding) -> Seen:
    return f.seen if f.seen is not None else _single(f, None, None, None)


def _single(f: Finding, build: int | None, first_time: float | None, last_time: float | None) -> Seen:
    """`seen` of a finding in its one run."""
    example = RunSeen(run=f.run, first_line=f.first_line, last_line=f.last_line, count=f.count, build=build)
    return Seen(
        runs=1,
        first_run=f.run,
        last_run=f.run,
        first_time=first_time,
        last_time=last_time,
        builds=[build] if build is not None else [],
        unknown_build_runs=0 if build is not None else 1,
        examples=[example],
        last_evidence=[],
    )


def _runs_seen(run: RunOut) -> RunsSeen:
    if run.seen is not None:
        return run.seen
    span = RunSpan(index=run.index, first_line=run.first_line, last_line=run.last_line)
    return RunsSeen(runs=1, last=span, examples=[span])


def _shift_finding(f: Finding, offset: int) -> Finding:
    seen = f.seen
    if seen is not None:
        seen = replace(
            seen,
            first_run=seen.first_run + offset,
            last_run=seen.last_run + offset,
            examples=[replace(e, run=e.run + offset) for e in seen.examples],
        )
    return replace(f, run=f.run + offset, seen=seen)


def _shift_run(run: RunOut, offset: int) -> RunOut:
    seen = run.seen
    if seen is not None:
        seen = replace(
            seen,
            last=replace(seen.last, index=seen.last.index + offset),
            examples=[replace(e, index=e.index + offset) for e in seen.examples],
        )
    return replace(run, index=run.index + offset, seen=seen)


def _merge(a: dict[str, Any], b: dict[str, Any], merge: Any) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        prior = out.get(key)
        out[key] = value if prior is None else merge(prior, value)
    return out
