"""Live diagnosis of a stream: each finding as soon as its evidence is complete, once per cause.

The Watcher drives an Analyzer through its hooks. A completed match opens a cause (a rule in a
run); the cause is judged once the next lines are in (a line that rules it out, a richer
signature or a deciding fact often follows right after the evidence; settle.py says how many,
none for a cause nothing can change any more), or when the input goes quiet, or when the run
ends, whichever is first. It is judged with the facts of the
entries up to that point, never by how the input happened to be split into reads, so the
events do not depend on the chunking. Then the first finding is reported; later matches are
counted and summarised as `repeat` events, at most every `repeat_interval` seconds and when the
run or the stream ends. A run that a new server start replaced is finalised (late verdicts,
last repeats) and dropped, so memory does not grow with the length of the stream. Events are
plain dicts (docs/watch.md); a `finding` holds the Finding that `explain --format json` prints.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.envelope import Line
from llamadiag.engine.findings import Finding
from llamadiag.engine.matcher import Match
from llamadiag.engine.reportdata import dump
from llamadiag.engine.run import Run
from llamadiag.features.watch.settle import SettlePolicy
from llamadiag.knowledge.loader import Knowledge
from llamadiag.knowledge.rulemodel import Severity

RELEASE_IDLE = 0.2  # seconds without input before unsettled causes are judged
# seconds without input before the last entry is taken as complete: a multi-line message
# arrives in one write (llama-server writes each message at once), so a later line is new
CONTINUATION_IDLE = 0.02
PREAMBLE_IDLE = 2.0  # ... before lines buffered for the next server start are given to the current run
KEPT_RUNS = 64  # ended runs (and their causes) kept for the end summary
KEPT_CAUSES = 256

Emit = Callable[[dict[str, Any]], None]


def now_iso() -> str:
    """The current UTC time in ISO 8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Cause:
    """One rule in one run: reported once, then counted."""

    rule_i: int
    run_ref: Run
    rule_id: str
    title: str
    severity: str
    run: int
    first: dict[str, Any]
    last: dict[str, Any]
    count: int = 1
    told: int = 0  # count when last reported
    told_at: float = 0.0  # monotonic time of that report
    state: str = "pending"  # pending (until `deadline`) | reported | ruled_out | superseded
    deadline: int = 0
    confidence: str | None = None
    reason: str | None = None
    facts_key: tuple = field(default_factory=tuple)

    def summary(self) -> dict[str, Any]:
        """The cause as reported in the closing summary."""
        return {
            "rule_id": self.rule_id,
            "title": self.title,
            "severity": self.severity,
            "confidence": self.confidence,
            "run": self.run,
            "count": self.count,
            "first_seen": self.first,
            "last_seen": self.last,
            **({"ruled_out": self.reason} if self.state == "ruled_out" else {}),
        }


def _facts_key(run: Run) -> tuple:
    """Changes when the run learns something that could change a verdict."""
    f = run.facts
    return (
        len(f.values),
        len(f.version),
        f.era_min,
        f.era_max,
        len(f.blocked_absent),
        run.startup_seen,
        run.cmdline is not None,
        len(run.excluded),
    )


class Watcher:
    """Drives an Analyzer over a live stream and emits run starts, findings, repeats and a summary."""

    @classmethod
    def start(
        cls, knowledge: Knowledge, emit: Emit, cmdline: str | None = None, repeat_interval: float = 60.0
    ) -> Watcher:
        """A watcher with a fresh analyzer over `knowledge` (and the command line, if given)."""
        return cls(Analyzer(knowledge, cmdline), emit, repeat_interval)

    def __init__(self, analyzer: Analyzer, emit: Emit, repeat_interval: float = 60.0) -> None:
        self.a = analyzer
        self.emit = emit
        self.repeat_interval = repeat_interval
        analyzer.on_matches = self._on_matches
        analyzer.on_entry = self._on_entry
        self.rule_index = {loaded.rule.id: i for i, loaded in enumerate(analyzer.k.rules)}
        self.settle = SettlePolicy(analyzer)
        self.causes: dict[tuple[int, int], Cause] = {}  # causes of live runs
        self.announced: set[int] = set()  # live runs whose run_start was emitted
        self.dirty: set[tuple[int, int]] = set()  # causes with repeats not yet reported
        self.pending: set[tuple[int, int]] = set()  # causes waiting to be judged
        self.next_deadline = 0
        self.ended_runs: deque[dict[str, Any]] = deque(maxlen=KEPT_RUNS)
        self.ended_causes: deque[dict[str, Any]] = deque(maxlen=KEPT_CAUSES)
        self.runs_seen = 0
        self.findings = 0
        self.notices = 0
        self.worst = -1  # highest severity rank reported

    # -- input ---------------------------------------------------------------------
    def feed(self, lines: list[str]) -> None:
        """Analyze new lines, judging the causes whose settle deadline they passed."""
        self.a.feed(lines)
        if self.pending:
            # every entry that starts by a deadline is processed (a held one may still grow)
            read, held = self.a.line_number, self.a.held
            self._settle(lambda c: read >= c.deadline and (held is None or held.number > c.deadline))
        self._after_input()

    def wake_within(self, default: float, quiet_for: float = 0.0) -> float:
        """How long the input loop may sleep while the input is quiet (`quiet_for` so far): no
        longer than until a held entry or a pending cause is due, so neither waits for a tick."""
        if self.a.held is not None:
            due = CONTINUATION_IDLE
        elif self.pending:
            due = RELEASE_IDLE
        else:
            return default
        return min(default, max(0.001, due - quiet_for))

    def idle(self, quiet_for: float) -> None:
        """Called while no input arrives; `quiet_for` is the time since the last data."""
        if quiet_for >= CONTINUATION_IDLE and self.a.held is not None:
            self.a.release_held()
            if self.pending:  # causes judged at once were waiting only for the entry to complete
                read = self.a.line_number
                self._settle(lambda c: read >= c.deadline)
        if quiet_for >= RELEASE_IDLE and self.pending:
            self._settle(lambda c: True)
        if quiet_for >= PREAMBLE_IDLE and self.a.preamble_has_signatures():
            self.a.flush()  # the server said nothing more: the buffered lines are all there is
            self._settle(lambda c: True)
        self._after_input()

    def _on_entry(self, line: Line, targets: object) -> None:
        """Before each entry is processed: judge causes whose settle window it lies beyond."""
        if self.pending and line.number > self.next_deadline:
            self._settle(lambda c: line.number > c.deadline)
        if len(self.a.runs) > len(self.a.streams):
            self._end_replaced_runs()
        run = self.a.streams[line.instance].run
        if run.startup_seen and run.index not in self.announced:
            self._announce(run)  # with the facts of the startup, before anything after it

    def notice(self, kind: str, message: str, line: int | None = None) -> None:
        """Emit a notice event (about the input, not the log)."""
        self.notices += 1
        self.emit({"type": "notice", "at": now_iso(), "kind": kind, "message": message, "line": line})

    def finish(self, reason: str, input_info: dict[str, Any]) -> dict[str, Any]:
        """End of the stream (or a signal): finalise every run and emit the summary."""
        self.a.flush()
        for run in list(self.a.runs):
            self._end_run(run)
        summary = {
            "type": "summary",
            "at": now_iso(),
            "reason": reason,
            "input": input_info,
            "runs_seen": self.runs_seen,
            "findings": self.findings,
            "notices": self.notices,
            "runs": list(self.ended_runs),
            "causes": list(self.ended_causes),
        }
        self.emit(summary)
        return summary

    # -- runs ------------------------------------------------------------------------
    def _after_input(self) -> None:
        self._end_replaced_runs()
        for run in self.a.current_runs():
            if run.startup_seen and run.index not in self.announced:
                self._announce(run)
        if self.dirty:
            self._repeats(final=False)

    def _end_replaced_runs(self) -> None:
        current = self.a.current_runs()
        for run in list(self.a.runs):
            if all(run is not c for c in current):
                self._end_run(run)

    def _announce(self, run: Run) -> None:
        self.announced.add(run.index)
        self.runs_seen += 1
        out = dump(self.a.run_out(run), json=True, exclude={"stats"})
        self.emit({"type": "run_start", "at": now_iso(), "run": out})

    def _end_run(self, run: Run) -> None:
        """Final verdicts for a run that ended: late findings, last repeats; then forget it."""
        findings, ruled_out = self.a.assess_run(run)
        if run.index not in self.announced and (run.has_start or run.startup_seen or findings):
            self._announce(run)
        cause: Cause | None
        for f in findings:
            cause = self.causes[(run.index, self.rule_index[f.rule_id])]
            if cause.state != "reported":
                self._report(cause, f)  # a verdict that only the run's later lines allowed
            cause.confidence = f.confidence
        for r in ruled_out:
            cause = self.causes.get((run.index, self.rule_index[r.rule_id]))
            if cause is not None and cause.state == "reported":
                cause.state, cause.reason = "ruled_out", r.reason  # facts seen later contradict it
        self._repeats(final=True, run=run.index)
        for key in [k for k in self.causes if k[0] == run.index]:
            cause = self.causes.pop(key)
            self.dirty.discard(key)
            self.pending.discard(key)
            if cause.told:
                self.ended_causes.append(cause.summary())
        if run.index in self.announced:
            out = self.a.run_out(run)
            self.ended_runs.append(
                {
                    "index": run.index,
                    "instance": run.instance,
                    "first_line": run.first_line,
                    "last_line": run.last_line,
                    "build": out.facts.get("build"),
                    "stats": out.stats,
                }
            )
        self.announced.discard(run.index)
        self.a.retire(run)

    # -- matches ------------------------------------------------------------------------
    def _on_matches(self, run: Run, matches: list[tuple[Run, int, Match]]) -> None:
        stamp = now_iso()
        for _, rule_i, match in matches:
            hits = run.hits[rule_i]
            key = (run.index, rule_i)
            cause = self.causes.get(key)
            if cause is None:
                rule = self.a.k.rules[rule_i].rule
                seen = {"line": match.first, "at": stamp}
                cause = Cause(rule_i, run, rule.id, rule.title, rule.severity.value, run.index, seen, seen)
                self.causes[key] = cause
                self._wait(key, cause, match.last + self.settle.lines(rule_i, run, match))
                continue
            cause.count = max(hits.count, cause.count)
            cause.last = {"line": hits.last_line, "at": stamp}
            if cause.state == "reported":
                self.dirty.add(key)
            elif cause.state == "ruled_out" and cause.facts_key != _facts_key(run):
                # the run learnt something since: judge it again
                self._wait(key, cause, match.last + self.settle.lines(rule_i, run, match))

    def _wait(self, key: tuple[int, int], cause: Cause, deadline: int) -> None:
        cause.state, cause.deadline = "pending", deadline
        self.next_deadline = cause.deadline if not self.pending else min(self.next_deadline, cause.deadline)
        self.pending.add(key)

    def _settle(self, due: Callable[[Cause], bool]) -> None:
        """Judge the pending causes that are due, per run, together (supersedes need the group)."""
        by_run: dict[int, list[Cause]] = {}
        # in the order of their evidence (then of the rules): a set's order would depend on how
        # the scanner reached them, and causes judged together must come out the same either way
        for key in sorted(self.pending, key=lambda k: (k[0], self.causes[k].first["line"], k[1])):
            cause = self.causes[key]
            if due(cause):
                self.pending.discard(key)
                by_run.setdefault(key[0], []).append(cause)
        for causes in by_run.values():
            self._assess(causes[0].run_ref, causes)
        self.next_deadline = min((self.causes[k].deadline for k in self.pending), default=0)

    def _assess(self, run: Run, fresh: list[Cause]) -> None:
        reported = {k[1] for k, c in self.causes.items() if k[0] == run.index and c.state == "reported"}
        findings, ruled_out = self.a.assess_run(run, reported | {c.rule_i for c in fresh})
        by_id = {f.rule_id: f for f in findings}
        reasons = {r.rule_id: r.reason for r in ruled_out}
        for cause in fresh:
            finding = by_id.get(cause.rule_id)
            if finding is not None:
                if run.index not in self.announced:
                    self._announce(run)
                self._report(cause, finding)
            elif cause.rule_id in reasons:
                cause.state, cause.reason, cause.facts_key = "ruled_out", reasons[cause.rule_id], _facts_key(run)
            else:
                cause.state = "superseded"  # a more specific rule already explains this evidence

    def _report(self, cause: Cause, finding: Finding) -> None:
        cause.state, cause.confidence = "reported", finding.confidence
        cause.count = max(cause.count, finding.count)
        cause.told, cause.told_at = cause.count, time.monotonic()
        self.findings += 1
        self.worst = max(self.worst, Severity(finding.severity).rank)
        self.emit({"type": "finding", "at": now_iso(), "finding": finding})

    def _repeats(self, final: bool, run: int | None = None) -> None:
        clock = time.monotonic()
        for key in list(self.dirty):
            cause = self.causes[key]
            if run is not None and key[0] != run:
                continue
            if not final and clock - cause.told_at < self.repeat_interval:
                continue
            self.dirty.discard(key)
            if cause.count <= cause.told:
                continue
            self.emit(
                {
                    "type": "repeat",
                    "at": now_iso(),
                    "rule_id": cause.rule_id,
                    "run": cause.run,
                    "count": cause.count,
                    "new": cause.count - cause.told,
                    "first_seen": cause.first,
                    "last_seen": cause.last,
                }
            )
            cause.told, cause.told_at = cause.count, clock
