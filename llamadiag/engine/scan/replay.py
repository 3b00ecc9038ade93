"""Crash loops: a run that repeats the run before it is replayed, not read again.

A crash-looping server prints the same start-up and failure thousands of times. Each such
run is assessed to the same summary, only with other run indices, line numbers and times
(`grouping.cause_key` and `run_key` leave them out), so once two runs in a row were read and
summarised alike, the runs after them that repeat their lines are not read line by line:
their summaries are the template run's, shifted, and `grouping.combine` merges them.

What makes a skip exact (every condition is checked; any doubt reads the runs as usual):

- a template: two consecutive runs R, C whose lines (from each one's first line to the
  next one's) are the same, whose summaries are the same up to the shift, that nothing of
  the run after them reached (R ended before C's first line, C before the next one's), in
  a single stream with no hook that watches entries (watch, --unmatched, a live server);
- the skip is taken at the boundary after the current run X (whose lines repeat the
  template, and whose predecessor was verified against the template), over the k runs
  whose lines repeat the template and that are each followed by another such run (the
  last one, W, is read as usual: it ends the last skipped run the way the next run ended C);
- lines "repeat" when their bytes are equal, or when they peel to the same entry (text,
  level, tag, instance, wrappers ...) and hold the same literals, their prefixes differing
  only in a time stamp; the times then come from the skipped lines themselves. A line
  whose bytes differ from the template's only in digits of its llama prefix's time stamp
  (same length, same shape) is known to peel alike without peeling it (`Stamp`,
  `_only_time`): the patterns that read the prefix treat all digits alike (`digit_blind`)
  and the rule literals that hold a digit are looked for in it.

The skipped runs' summary is merged right after X's own (`fold`), so the order of runs and
every count, line and example is what reading them would give.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Protocol, cast

from llamadiag.engine.envelope import plain
from llamadiag.engine.grouping import KEEP, Summary, combine
from llamadiag.engine.reportdata import replace
from llamadiag.engine.run import Run
from llamadiag.engine.scan.host import ScanHost
from llamadiag.engine.scan.multimatch import Engine
from llamadiag.lines import clean_line

MAX_PERIOD = 1 << 19  # bytes of one run replayed; a longer run is read as usual
ENV_OFF = "LLAMADIAG_NO_REPLAY"  # set (tests, measurements): every run is read line by line


class ReplayHost(ScanHost, Protocol):
    """The analyzer as the replay sees it: the grouped summary, the run counter, and what
    says whether anything carries state from run to run."""

    summary: Summary
    run_count: int
    on_entry: Any
    on_matches: Any
    fold_runs: bool
    every_line: bool
    server_facts: Any
    child_argv: dict[str, list[str]]
    _argv_port: str | None
    bridge_queue: list[Any]


class ReplayScanner(Protocol):
    """The scanner as the replay sees it."""

    a: ScanHost
    engine: Engine
    literals: list[str]
    shortcuts: bool


@dataclass
class Folded:
    """A run as folded: where it was and what it summarised to (`verified`: it repeats the template)."""

    index: int
    first_line: int
    last_line: int
    summary: Summary | None
    verified: bool = False


@dataclass(frozen=True)
class Stamp:
    """Where a template line's time stamp (llama's own prefix) lies, and what a repeat may
    change: only digits inside [start, end), the other bytes of the line kept. `shape` is the
    stamp with every digit as 0; `literals` the rule literals holding a digit that could be
    in such a repeat (each must be there exactly when it is in the template line)."""

    start: int
    end: int
    shape: bytes
    literals: tuple[tuple[bytes, bool], ...]


@dataclass(frozen=True)
class Whole:
    """The cheap comparison of a whole run (see `Stamp`) as a few operations on its bytes:
    `zero` the template with every digit as 0, `number` its bytes as one integer, `outside`
    a mask of the bytes outside every time stamp, `literals` the lines whose digit literals
    must be looked for (offsets in the run, and each literal with whether the template's has it)."""

    zero: bytes
    number: int
    outside: int
    literals: tuple[tuple[int, int, tuple[tuple[bytes, bool], ...]], ...]


@dataclass
class Template:
    """The run whose summary skipped runs replay, and its lines."""

    index: int
    first_line: int
    last_line: int
    lines: int
    data: bytes
    summary: Summary
    split: list[bytes]
    peeled: dict[int, Any]
    stamps: dict[int, Stamp | None]  # per line: where its time stamp is, for the cheap comparison
    evidence: frozenset[int]  # line numbers (of the template) whose time the summary shows
    timed: bool  # the summary's times are those of its evidence lines: they can be re-read
    whole: Whole | None = None  # the cheap comparison of a whole run, once made


class Replay:
    """Finds runs that repeat a template run and skips them (see the module doc)."""

    def __init__(self, scanner: ReplayScanner) -> None:
        self.s = scanner
        self.a = cast(ReplayHost, scanner.a)  # the Analyzer
        self.enabled = not os.environ.get(ENV_OFF)
        self.template: Template | None = None
        self.last: Folded | None = None  # the run folded last
        self.prev: Folded | None = None  # the one before it
        self.current = -1  # index of the current run, as last looked at
        self.first_line = 0  # and its first line
        self.start = 0  # offset of the current run's first line in this block
        self.stop = -1  # offset of the next boundary where a skip may be taken (the scanner stops there)
        self.stop_line = 0
        self.pending: tuple[int, Summary, Folded] | None = None  # (after run, skipped runs, the last of them)
        self.skipped = 0  # runs replayed (for tests and measurements)
        self._blind: bool | None = None  # the envelope's patterns are digit-blind (found once)
        self._digits: tuple[bytes, ...] | None = None  # the rule literals that hold a digit

    # -- the analyzer's side --------------------------------------------------------------------
    def fold(self, summary: Summary, run: Run, own: Summary) -> Summary:
        """`summary` with an ended run's own summary, then the runs skipped right after it."""
        summary = combine(summary, own)
        record = Folded(run.index, run.first_line, run.last_line, own)
        if self.pending is not None and self.pending[0] == run.index:
            summary = combine(summary, self.pending[1])
            record = self.pending[2]
            self.pending = None
        elif self.template is not None:
            record.verified = _same_shape(self.template, record)
        self.prev, self.last = self.last, record
        return summary

    # -- the scanner's side ---------------------------------------------------------------------
    def begin(self) -> None:
        """A new block: offsets of the previous one mean nothing."""
        self.current = -1
        self.stop = -1

    def at(self, block: bytes, pos: int, number: int) -> tuple[int, int]:
        """Called where the scanner is at a line start (`number` lines before it): note a
        run that began since, and at a boundary skip the runs that repeat the template."""
        if not self.enabled:
            return pos, number
        streams = self.s.a.streams
        if len(streams) != 1:
            return pos, number
        run = next(iter(streams.values())).run  # one stream: the server's own, or one instance's
        if run.index != self.current:
            self._began(block, pos, number, run)
        if pos != self.stop or number + 1 != self.stop_line:
            return pos, number
        self.stop = -1
        return self._skip(block, pos, number, run)

    def looping(self, number: int) -> bool:
        """In a crash loop (the last run repeated the template) and the current run no longer
        than two of the template: the scanner reads it line by line, as its lines are all
        start-up lines, without the bulk path's set-up for each block (a scan of the whole
        block) that the skipped runs would not use."""
        t, v = self.template, self.last
        return t is not None and v is not None and v.verified and number - self.first_line < 2 * t.lines

    def _began(self, block: bytes, pos: int, number: int, run: Run) -> None:
        """A run began since the last look: arm a template, and set the boundary after this run."""
        self.current, self.first_line = run.index, run.first_line
        self.stop = -1
        if not self._clean():
            return
        self._arm(block, pos, number, run)
        t = self.template
        start = _offset(block, pos, number, run.first_line)
        if t is None or start is None or run.first_line - t.first_line <= 0:
            return
        end = _forward(block, start, t.lines)
        if end is not None:
            self.start, self.stop, self.stop_line = start, end, run.first_line + t.lines

    def _arm(self, block: bytes, pos: int, number: int, run: Run) -> None:
        """Two runs in a row read alike (R, then C) before the current one: C is the template."""
        r, c = self.prev, self.last
        if r is None or c is None or r.summary is None or c.summary is None:
            return
        if r.index + 1 != c.index or c.index + 1 != run.index:
            return
        lines = c.first_line - r.first_line
        if lines <= 0 or run.first_line - c.first_line != lines:
            return
        if r.last_line >= c.first_line or c.last_line >= run.first_line:
            return  # a line of the next run reached the run before it
        o_r = _offset(block, pos, number, r.first_line)
        if o_r is None:
            return
        o_c = _forward(block, o_r, lines)
        o_run = _forward(block, o_c, lines) if o_c is not None else None
        if o_c is None or o_run is None or o_run - o_c > MAX_PERIOD:
            return
        data = block[o_c:o_run]
        t = self.template
        if t is not None and t.data == data and t.lines == lines:
            return  # the same template already
        candidate = _template(c, lines, data)
        if not self._first_line_starts(candidate) or not self._repeats(candidate, block[o_r:o_c]):
            return
        if not _same_shape(candidate, Folded(r.index, r.first_line, r.last_line, r.summary)):
            return
        self.template = candidate

    def _first_line_starts(self, t: Template) -> bool:
        """The template's first line is never joined to the line before it."""
        peeled = self._peel(t.split[0])
        return peeled is not None and not peeled[-1]

    def _skip(self, block: bytes, pos: int, number: int, run: Run) -> tuple[int, int]:
        """At the boundary after the current run: skip the runs that repeat the template."""
        t, a, v = self.template, self.a, self.last
        if t is None or v is None or not self._clean():
            return pos, number
        if not v.verified or v.index + 1 != run.index or v.last_line >= run.first_line:
            return pos, number
        if run.last_line >= number + 1 or (a.held is not None and a.held.number < run.first_line):
            return pos, number
        if not self._repeats(t, block[self.start : pos]):
            return pos, number
        summary = a.summary
        if any(k not in summary.findings for k in t.summary.findings) or any(
            k not in summary.runs for k in t.summary.runs
        ):
            return pos, number
        if any(k not in summary.ruled_out for k in t.summary.ruled_out):
            return pos, number
        # the runs that repeat the template, each followed by another that does
        periods: list[tuple[int, int]] = []
        at = pos
        while True:
            end = self._period_end(block, at, t)
            if end is None:
                break
            periods.append((at, end))
            at = end
        if len(periods) < 2:
            return pos, number
        periods.pop()  # W: read as usual
        first = run.first_line + t.lines
        k = len(periods)
        skipped = self._summary(block, periods, run.index + 1, first)
        last_line = first + (k - 1) * t.lines
        self.pending = (
            run.index,
            skipped,
            Folded(run.index + k, last_line, t.last_line + last_line - t.first_line, None, verified=True),
        )
        a.run_count += k
        self.skipped += k
        self.first_line = number + 1 + k * t.lines  # where the next run (W) begins
        return periods[-1][1], number + k * t.lines

    def _summary(self, block: bytes, periods: list[tuple[int, int]], index: int, line: int) -> Summary:
        """The summary of the skipped runs (the first at run `index`, line `line`). Only the
        first and last KEEP runs are shifted and combined: a run between them adds only its
        counts, the same as the template's (its examples, times and evidence are not kept)."""
        t = self.template
        assert t is not None

        def one(j: int) -> Summary:
            begin, end = periods[j]
            at = line + j * t.lines
            times = None if block[begin:end] == t.data else self._times(t, block[begin:end], at)
            return _shifted(t, index + j - t.index, at - t.first_line, times)

        def combined(js: range) -> Summary:
            out = Summary()
            for j in js:
                out = combine(out, one(j))
            return out

        k = len(periods)
        middle = k - 2 * KEEP
        if middle <= 0:
            return combined(range(k))
        ends = combine(combined(range(KEEP)), combined(range(k - KEEP, k)))
        # a run between them could fill a time the first or last ones lack: unless their lines
        # are the template's own (its times), they are all combined
        untimed = any(
            f.seen is None or f.seen.first_time is None or f.seen.last_time is None for f in ends.findings.values()
        )
        if untimed and any(block[b:e] != t.data for b, e in periods[KEEP : k - KEEP]):
            return combined(range(k))
        return _widen(ends, t.summary, middle)

    def _period_end(self, block: bytes, at: int, t: Template) -> int | None:
        """Where the run starting at `at` ends when its lines repeat the template, else None."""
        if block[at : at + len(t.data)] == t.data:
            return at + len(t.data)
        if not t.timed:
            return None
        # as long as the template and its digits where the template's are: the same lines
        if self._only_times(t, block[at : at + len(t.data)]):
            return at + len(t.data)
        end = _forward(block, at, t.lines)
        return end if end is not None and end - at <= MAX_PERIOD and self._repeats(t, block[at:end]) else None

    def _repeats(self, t: Template, data: bytes) -> bool:
        """Whether these lines repeat the template's: equal bytes, or the same entries and
        literals with only time stamps differing."""
        if data == t.data:
            return True
        if not t.timed:
            return False
        if self._only_times(t, data):
            return True
        lines = data.split(b"\n")
        if len(lines) != len(t.split):
            return False
        engine = self.s.engine
        stamps = t.stamps
        for i, (mine, theirs) in enumerate(zip(lines, t.split, strict=True)):
            if mine == theirs:
                continue
            stamp = stamps[i] if i in stamps else stamps.setdefault(i, self._stamp(theirs))
            if stamp is not None and _only_time(stamp, mine, theirs):
                continue
            peeled = t.peeled.get(i)
            if peeled is None:
                peeled = t.peeled[i] = (self._quick(theirs), self._peel(theirs), _ids(engine, theirs))
            quick = self._quick(mine) if peeled[0] is not None else None
            if quick is not None:  # both only llama's prefix before the message: compare what follows it
                if quick != peeled[0]:
                    return False
            elif self._peel(mine) != peeled[1]:
                return False
            if _ids(engine, mine) != peeled[2]:
                return False
        return True

    def _only_times(self, t: Template, data: bytes) -> bool:
        """`_only_time` for every line of a run at once: its bytes the template's but for
        digits inside the time stamps, and the digit literals where the template has them."""
        if len(data) != len(t.data):
            return False
        whole = t.whole
        if whole is None:
            whole = t.whole = self._whole(t)
        if data.translate(_ZERO) != whole.zero:
            return False
        if (int.from_bytes(data, "big") ^ whole.number) & whole.outside:
            return False
        return all((lit in data[a:b]) == there for a, b, lits in whole.literals for lit, there in lits)

    def _whole(self, t: Template) -> Whole:
        """The template's `Whole`: every line's `Stamp` (a line without one must be unchanged)."""
        outside = bytearray(b"\xff" * len(t.data))
        literals = []
        at = 0
        for i, theirs in enumerate(t.split):
            stamp = t.stamps[i] if i in t.stamps else t.stamps.setdefault(i, self._stamp(theirs))
            if stamp is not None:
                outside[at + stamp.start : at + stamp.end] = bytes(stamp.end - stamp.start)
                if stamp.literals:
                    literals.append((at, at + len(theirs), stamp.literals))
            at += len(theirs) + 1
        return Whole(
            t.data.translate(_ZERO), int.from_bytes(t.data, "big"), int.from_bytes(outside, "big"), tuple(literals)
        )

    def _stamp(self, theirs: bytes) -> Stamp | None:
        """Where the time stamp of a template line lies, when a repeat of the line that
        changes only digits inside it is known to peel to the same entry but for its time:
        an ASCII line peeled by llama's prefix alone (see `_quick`) whose `time` group is
        the stamp, with every pattern that reads it blind to which digit a digit is."""
        if not self._digit_blind() or not theirs.isascii():
            return None
        text = theirs.decode("ascii")
        if self._quick(theirs) is None:
            return None
        for prefix in self.s.a.envelope.prefixes:  # the one `_quick` read
            m = prefix.match(text)
            if m:
                if m.groupdict().get("time") is None:
                    return None
                start, end = m.span("time")
                shape = theirs[start:end].translate(_ZERO)
                general = theirs.translate(_ZERO)
                # a literal with a digit can be in a repeat only where its digits-as-0
                # form is in the line's (the repeat's is the same)
                risky = tuple((lit, lit in theirs) for lit in self._digit_literals() if lit.translate(_ZERO) in general)
                return Stamp(start, end, shape, risky)
        return None

    def _digit_blind(self) -> bool:
        """Whether every pattern that reads a line before its prefix is dropped (wrappers,
        drops, continuations, llama's prefixes) treats all digits alike (see `digit_blind`)."""
        blind = self._blind
        if blind is None:
            env = self.s.a.envelope
            patterns = [env.quick, env.any_wrapper, env.any_drop, env.any_continuation, *env.prefixes]
            blind = self._blind = all(digit_blind(str(p.pattern)) for p in patterns)
        return blind

    def _digit_literals(self) -> tuple[bytes, ...]:
        """The rule literals that hold a digit (only those can differ between two lines
        that differ only in digits)."""
        found = self._digits
        if found is None:
            found = self._digits = tuple(
                b for b in (lit.encode() for lit in self.s.literals) if b.translate(_ZERO) != b
            )
        return found

    def _quick(self, raw: bytes) -> tuple[str, str | None] | None:
        """A line with no wrapper, not dropped, not a continuation and no control character
        (peeling only reads llama's prefix off it): its message and level, else None. Two such
        lines with the same message and level peel to the same entry but for its time."""
        env = self.s.a.envelope
        text = raw.decode("utf-8", "replace")
        if "\r" in text or not plain(text) or env.quick.match(text) is not None:
            return None
        for prefix in env.prefixes:  # as EnvelopeParser.parse_llama reads it
            m = prefix.match(text)
            if m:
                return text[m.end() :], m.group("level")
        return text, None

    def _peel(self, raw: bytes) -> tuple[Any, ...] | None:
        """One line as the analyzer reads it, less its number and time."""
        line, is_cont = self.s.a.envelope.peel(0, clean_line(raw.decode("utf-8", "replace")))
        if line is None:
            return None
        return (
            line.text,
            line.level,
            line.tag,
            line.func,
            line.slot_id,
            line.task_id,
            line.instance,
            line.wrappers,
            is_cont,
        )

    def _times(self, t: Template, data: bytes, first: int) -> dict[int, float | None]:
        """The time of each of the template's evidence lines, read in a repeat starting at line `first`."""
        lines = data.split(b"\n")
        env = self.s.a.envelope
        times: dict[int, float | None] = {}
        for number in t.evidence:
            raw = clean_line(lines[number - t.first_line].decode("utf-8", "replace"))
            line, _ = env.peel(first + number - t.first_line, raw)
            times[number] = line.time if line is not None else None
        return times

    def _clean(self) -> bool:
        """One stream, and nothing that watches entries or carries state from run to run."""
        a = self.a
        return (
            self.s.shortcuts
            and self.pending is None
            and a.on_entry is None
            and a.on_matches is None
            and a.fold_runs
            and not a.every_line
            and not a.server_facts
            and len(a.streams) == 1
            and not a.child_argv
            and a._argv_port is None
            and not a.bridge_queue
            and not a.bridged
        )


_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _only_time(stamp: Stamp, mine: bytes, theirs: bytes) -> bool:
    """Whether `mine` is the template line `theirs` with only digits of its time stamp
    changed, and holds the same literals: then it peels to the same entry but its time."""
    start, end = stamp.start, stamp.end
    if len(mine) != len(theirs) or mine[:start] != theirs[:start] or mine[end:] != theirs[end:]:
        return False
    if mine[start:end].translate(_ZERO) != stamp.shape:
        return False
    return all((lit in mine) == there for lit, there in stamp.literals)


_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")
_DIGITS = frozenset("0123456789")
_CLASS_ESCAPE = re.compile(r"\\[dDwWsS]|\\[^0-9A-Za-z]")  # in a class: all ten digits or none


def digit_blind(source: str) -> bool:
    """Whether a pattern matches a text the same way (same groups' spans) whatever digits
    stand where the text has digits: no digit in it but in counted repeats (`{3}`) and in a
    class's whole `0-9` range, and no back-reference, recursion by number or conditional.
    Any other construct that matches a digit (\\d, \\w, ., a class without a digit) holds all ten or
    none. Conservative: a pattern it cannot read this way is not blind."""
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            if i + 1 >= n or source[i + 1] in _DIGITS or source[i + 1] in "gkxuUNopP":
                return False  # back-references, codes, properties: not read here
            i += 2
        elif c == "[":
            end = _class_end(source, i)
            if end is None:
                return False
            body = _CLASS_ESCAPE.sub("", source[i + 1 : end]).replace("0-9", "")
            if "\\" in body or any(ch in _DIGITS for ch in body):
                return False
            i = end + 1
        elif c == "{":
            m = _QUANTIFIER.match(source, i)
            if m is None or i == 0 or source[i - 1] in "(|":
                return False
            i = m.end()
        elif c in _DIGITS or source.startswith(("(?P=", "(?(", "(?P>"), i):
            return False
        else:
            i += 1
    return True


def _class_end(source: str, start: int) -> int | None:
    """The offset of the `]` closing the class opened at `start`, None if unsure."""
    i = start + 1
    if source[i : i + 1] == "^":
        i += 1
    if source[i : i + 1] == "]":
        i += 1
    while i < len(source):
        if source[i] == "\\":
            i += 2
            continue
        if source[i] == "[":
            return None  # nested sets (the regex module): not read here
        if source[i] == "]":
            return i
        i += 1
    return None


def _offset(block: bytes, pos: int, number: int, line: int) -> int | None:
    """Where line `line` begins in the block, from `pos` (where line `number + 1` begins); None
    when it began in an earlier block."""
    back, off = number + 1 - line, pos
    while back > 0 and off > 0:
        off = block.rfind(b"\n", 0, off - 1) + 1
        back -= 1
    return None if back or back < 0 else off


def _forward(block: bytes, off: int, lines: int) -> int | None:
    """Where the line `lines` lines after the one at `off` begins; None past the block's end."""
    for _ in range(lines):
        off = block.find(b"\n", off) + 1
        if not off:
            return None
    return off


def _ids(engine: Any, raw: bytes) -> list[frozenset[int]]:
    return [ids for _, _, ids in engine.scan(raw + b"\n")]


def _template(c: Folded, lines: int, data: bytes) -> Template:
    assert c.summary is not None
    evidence = frozenset(e.line for f in c.summary.findings.values() for e in f.evidence)
    # times re-read from skipped lines must be the evidence's own: one finding per cause in the run
    timed = all(
        f.seen is not None and f.seen.runs == 1 and not f.seen.last_evidence for f in c.summary.findings.values()
    )
    split = data.split(b"\n")
    return Template(c.index, c.first_line, c.last_line, lines, data, c.summary, split, {}, {}, evidence, timed)


def _shifted(t: Template, dr: int, dl: int, times: dict[int, float | None] | None) -> Summary:
    """The template's summary for a run `dr` runs and `dl` lines later (times of its
    evidence lines from `times`, else the template's). Only what `combine` takes from a
    later run whose keys it already holds is shifted: the rest is the template's."""
    findings = {}
    for key, f in t.summary.findings.items():
        seen = f.seen
        assert seen is not None
        evidence = [replace(e, line=e.line + dl, time=e.time if times is None else times[e.line]) for e in f.evidence]
        update: dict[str, Any] = {
            "first_run": seen.first_run + dr,
            "last_run": seen.last_run + dr,
            "examples": [
                replace(x, run=x.run + dr, first_line=x.first_line + dl, last_line=x.last_line + dl)
                for x in seen.examples
            ],
            "last_evidence": [replace(e, line=e.line + dl) for e in seen.last_evidence],
        }
        if times is not None and evidence:
            update["first_time"], update["last_time"] = evidence[0].time, evidence[-1].time
        findings[key] = replace(
            f,
            run=f.run + dr,
            first_line=f.first_line + dl,
            last_line=f.last_line + dl,
            evidence=evidence,
            seen=replace(seen, **update),
        )
    runs = {
        key: replace(r, index=r.index + dr, first_line=r.first_line + dl, last_line=r.last_line + dl)
        for key, r in t.summary.runs.items()
    }
    ruled = {
        key: replace(
            r,
            run=r.run + dr,
            evidence_line=r.evidence_line + dl,
            last_run=None if r.last_run is None else r.last_run + dr,
        )
        for key, r in t.summary.ruled_out.items()
    }
    return Summary(findings=findings, runs=runs, ruled_out=ruled, run_count=t.summary.run_count)


def _widen(s: Summary, one: Summary, m: int) -> Summary:
    """`s` with the counts of `m` more runs summarised as `one` (with the same keys) between its runs."""
    findings = {}
    for key, f in s.findings.items():
        per = one.findings[key]
        seen, per_seen = f.seen, per.seen
        assert seen is not None and per_seen is not None
        runs = seen.runs + m * per_seen.runs
        unknown = seen.unknown_build_runs + m * per_seen.unknown_build_runs
        findings[key] = replace(
            f,
            count=f.count + m * per.count,
            seen=replace(seen, runs=runs, unknown_build_runs=unknown),
        )
    runs_out = {}
    for key, r in s.runs.items():
        assert r.seen is not None
        one_seen = one.runs[key].seen
        per_runs = one_seen.runs if one_seen is not None else 1
        runs_out[key] = replace(r, seen=replace(r.seen, runs=r.seen.runs + m * per_runs))
    ruled = {key: replace(r, runs=r.runs + m * one.ruled_out[key].runs) for key, r in s.ruled_out.items()}
    return Summary(findings=findings, runs=runs_out, ruled_out=ruled, run_count=s.run_count + m * one.run_count)


def _same_shape(t: Template | Folded, other: Folded) -> bool:
    """Whether a run's summary is the template's shifted to it (times aside): the same keys
    in the same order, and the same runs, lines and evidence relative to each run."""
    mine = t.summary
    if mine is None or other.summary is None:
        return False
    return _shape(mine, t.index, t.first_line) == _shape(other.summary, other.index, other.first_line)


def _shape(s: Summary, run: int, line: int) -> tuple[Any, ...]:
    def ev(items: list[Any]) -> list[tuple[int, str, bool]]:
        return [(e.line - line, e.text, e.time is None) for e in items]

    findings = []
    for key, f in s.findings.items():
        seen = f.seen
        assert seen is not None
        findings.append(
            (
                key,
                f.run - run,
                f.count,
                f.first_line - line,
                f.last_line - line,
                ev(f.evidence),
                seen.runs,
                seen.first_run - run,
                seen.last_run - run,
                seen.builds,
                seen.unknown_build_runs,
                seen.first_time is None,
                seen.last_time is None,
                [(x.run - run, x.first_line - line, x.last_line - line, x.count, x.build) for x in seen.examples],
                ev(seen.last_evidence),
            )
        )
    runs = [(key, r.index - run, r.first_line - line, r.last_line - line, r.seen is None) for key, r in s.runs.items()]
    ruled = [
        (key, r.run - run, r.runs, r.evidence_line - line, None if r.last_run is None else r.last_run - run)
        for key, r in s.ruled_out.items()
    ]
    return (findings, runs, ruled, s.run_count)
