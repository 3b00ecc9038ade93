"""The bulk path: stretches of lines that can change nothing but statistics, consumed at once.

A long log is mostly what a healthy server prints per request. Whether a line matters is not
read from a list of line shapes but from liveness, computed from the knowledge: each literal
feeds targets (a fact, an era fingerprint, a signature entry, a run boundary, a statistic).

- A literal with a target that always matters (a run start, a version line, a single-line
  signature, a cut mark ...) always stops a stretch.
- A literal whose targets can settle (a scalar fact once known, an era fingerprint once seen
  or unable to narrow the build range, a later signature entry nobody waits for, an
  exclusion once applied), or are statistics, or first entries of multi-line signatures
  (queued), stops a stretch only while a target is live, and then only on a line where the
  target's pattern, loosened (`regex_rewrite.loosened`), matches: no match proves no effect.
  What is dead is skipped wherever it occurs, whatever the line shape.
- A line of a shape the run has not vouched for stops a stretch too: a wrapper the run has
  not seen, one naming another instance, a dropped line, a JSON line, a control or non-ASCII
  byte; continuation lines count unless the stretch holds no signature start.

Where a stretch ends: with Hyperscan, each stop literal's occurrences in the block are kept
apart (stops.py) and only the literals that can do something in the run's present state are
looked at (livestops.py): a settled literal costs nothing wherever it occurs, a live one a
search of its loosened patterns, signature starts a check for a continuation line at or after
them, and the starts to queue are found backwards from the stop. With the standard library, the
finder searches the literals live in the run's state once that state has held for a few
stretches and into a new block (settled literals frequent in this log are left out of its
search). A signature start is queued unless its entry may be longer than its line (it or the
next line a continuation, the next line another program's or in the next block): continuation
lines elsewhere in a stretch join lines that hold no start, and their statistics count per
physical line either way. Everything before the first stop is consumed at once: statistics by
one `findall` per statistic over the stretch (at most one match per line, as `search` on
each line would give), the last starts of multi-line signatures queued as the per-line path
would queue them, and the run's line counters. The tests run every sample, real and
generated log with and without this path and compare the whole reports.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from llamadiag.engine.envelope import MAX_PEEL
from llamadiag.engine.literals import Target
from llamadiag.engine.matcher import MAX_PARTIALS
from llamadiag.engine.regex_rewrite import line_bounded, loosened, ungrouped
from llamadiag.engine.scan.livestops import Defers, LiveStops, Status, starts_backwards
from llamadiag.engine.scan.stops import (
    HyperscanStops,
    LineStarts,
    PeeledShape,
    StdlibStops,
    compile_bytes,
    rare_byte_regex,
)
from llamadiag.engine.stats import USED_GROUPS

if TYPE_CHECKING:
    from llamadiag.engine.run import Run
    from llamadiag.engine.scan.host import ScannerView

# bytes a plain ASCII line may hold: tab, newline, printable ASCII
_GOOD = bytes([9, 10, *range(0x20, 0x7F)])
_BAD = re.compile(rb"[^\t\n\x20-\x7e]")


# what a watched literal does in the run's present state (see BulkPath.status)
STOP = None
_UNKNOWN: Any = object()
DEAD = ((), (), ())  # a watched literal none of whose targets can change the run now
# kinds of target whose effect can become void (Scanner.inert): a fact once known, an era once
# seen, a later signature entry nobody waits for ... and statistics, which a stretch aggregates
SETTLING = frozenset({"fact", "era", "sig", "startup", "exclude", "absent_block", "cont", "bridge", "stat"})
# kinds that never stop a stretch: statistics are aggregated, continuation lines found by shape
BULK_INERT = frozenset({"stat", "cont", "bridge"})
SAMPLE = 1 << 18  # bytes of the log's first block that tell which bytes are rare in it
# stretches in one state of the run before the finder narrows to the literals live in it
STABLE_STRETCHES = 4
# hits of a literal in stretches before the finder may leave it out once it settles
FREQUENT = 64


class BulkPath:
    """Handles stretches of lines of a block that can change nothing but statistics."""

    def __init__(self, scanner: ScannerView) -> None:
        self.s = scanner
        k = scanner.a.k
        self._stat_patterns: dict[int, tuple[Any, tuple[str, ...]]] = {}
        # Liveness, computed from the knowledge: a literal all of whose targets can settle
        # (or are statistics, or first entries of multi-line signatures, which are queued) is
        # *watched*; any other (a run start, a single-line signature, a version line ...)
        # always stops a stretch. Watched literals stop it only while one of their targets is
        # live, and then only where the target's loosened pattern matches.
        always: list[int] = []
        sig_watched: list[int] = []
        awaited: list[tuple[int, frozenset[tuple[int, int]]]] = []
        settling: list[int] = []
        self.stats = []
        seen: set[int] = set()
        for i, targets in enumerate(scanner.by_id):
            if any(not self._can_settle(t) for t in targets):
                always.append(i)
                continue
            for t in targets:
                if t.kind == "stat" and t.serial not in seen:
                    seen.add(t.serial)
                    self.stats.append((scanner.literals[i].encode(), t, *self._stat_pattern(t)))
            kinds = {t.kind for t in targets} - BULK_INERT
            later = {t.ref[:2] for t in targets if t.kind == "sig" and t.ref[2] > 0}
            if any(t.kind == "sig" and t.ref[2] == 0 for t in targets):
                sig_watched.append(i)  # a signature start, queued
            elif later:
                awaited.append((i, frozenset(later)))  # live while a start of its signature is held
            elif kinds:
                settling.append(i)  # a fact, an era ...: live until it settles in the run
            # (statistics, continuations: aggregated or shaped, never a stop)
        self.always = frozenset(always)
        self.steady = frozenset(always + sig_watched)
        self.settling = settling
        # later entries of a signature whose start a stretch may queue are live within it
        queued = {t.ref[:2] for i in sig_watched for t in scanner.by_id[i] if t.kind == "sig" and not t.ref[2]}
        self.steady |= {i for i, keys in awaited if keys & queued}
        self.awaited = [(i, keys) for i, keys in awaited if not keys & queued]
        self.stop_ids = sorted(always + sig_watched + settling + [i for i, _ in awaited])
        self._block_index = 0
        self._version_block = 0
        self._active_version: tuple[Any, ...] = ()
        self._settled: frozenset[int] = frozenset()
        self._awaited = dict(self.awaited)
        self._hits: Counter[int] = Counter()
        self._frequent: set[int] = set()
        self._stable = 0
        self.hyperscan = scanner.engine.name == "hyperscan"
        self._finders: dict[tuple[frozenset[str], frozenset[int] | None], HyperscanStops | StdlibStops] = {}
        self._literal_searches: dict[frozenset[int] | None, Any] = {}
        self._shape_searches: dict[frozenset[str], Any] = {}
        self._sample = b""
        # the finders begun on the present block, by id; each holds the block and its hits
        self._begun: dict[int, HyperscanStops | StdlibStops] = {}
        self.envelope = k.envelope
        self._loose: dict[int, Any] = {}
        self._status_key: tuple[Any, ...] = ()
        self._status_table: dict[int, Status] = {}
        self._combined: dict[frozenset[int], Status] = {}  # per set of literals on a line
        self.block = b""
        self._bad: tuple[int, int | None] | None = None
        self._continuations: dict[frozenset[str], Any] = {}
        # literals of another program's lines, after which a continuation may still follow
        self._bridges = [
            scanner.literals[i].encode() for i, ts in enumerate(scanner.by_id) if any(t.kind == "bridge" for t in ts)
        ]
        self.live = LiveStops([lit.encode() for lit in scanner.literals], self._bridges)

    def _can_settle(self, t: Target) -> bool:
        if t.kind == "sig" and t.ref[2] == 0:
            return self.s.entries[t.ref[:2]] > 1  # a first entry is queued, not judged
        return t.kind in SETTLING

    # -- the stretch ---------------------------------------------------------------------
    def begin(self, block: bytes) -> None:
        """Start on a new block: forget the previous block's hits."""
        self.block = block
        for finder in self._begun.values():
            finder.release()  # else each finder pins the last block it read, up to 64 of them
        self._begun = {}
        self.live.begin()
        # most blocks hold no byte a plain ASCII line cannot: then no search for one
        self._bad = None if block.translate(None, _GOOD) else (0, None)
        if not self._sample:
            self._sample = block[:SAMPLE]  # a copy: the first block is not kept whole
        self._block_index += 1

    def stretch(self, run: Run, pos: int, base: int) -> tuple[int, int]:
        """Consume lines from `pos` (a line start; `base` is the number of the line before
        it) up to the first line that needs the per-line path; return that line's offset
        and how many lines were consumed."""
        block = self.block
        finder = self.finder(run)
        if id(finder) not in self._begun:
            finder.begin(block)
            self._begun[id(finder)] = finder
        size = len(block)
        # the first line of an unvouched shape or byte, then the first live literal before it
        limit = finder.shape(pos, False)
        limit = size if limit is None else limit
        bad = self._bad_byte(pos)
        if bad is not None and bad < limit:
            limit = bad
        if isinstance(finder, HyperscanStops):
            stop, defers = self._first_stop(run, finder, pos, limit)
        else:
            stop, starts = self._first_live(run, finder, pos, limit)
        if stop < size:
            stop = self._group_head(pos, block.rfind(b"\n", pos, stop) + 1 or pos)
        if stop <= pos:
            return pos, 0
        if isinstance(finder, HyperscanStops):
            starts = starts_backwards(block, pos, stop, finder.lengths, defers, MAX_PARTIALS, self._start_matches)
        lines = block.count(b"\n", pos, stop)
        self._consume(run, pos, stop, base, [(at, t) for at, t in starts if at < stop])
        return stop, lines

    def _first_stop(self, run: Run, finder: HyperscanStops, pos: int, limit: int) -> tuple[int, Defers]:
        """The first line before `limit` that stops the stretch, from the occurrences of the
        literals that can do something in the run's state (livestops.py); and the literals of
        the signature starts before it."""
        table = self._table(run)
        # the first line of a literal that always stops bounds the stretch; then only the other
        # literals occurring before it are asked what they do
        first = finder.first_always(pos)
        if first is not None and first < limit:
            limit = self.block.rfind(b"\n", 0, first) + 1
        present = []
        for i in finder.watched_between(pos, limit):
            st = table[i] if i in table else self._status(i, run, table)
            if st != DEAD:
                present.append((i, st))
        return self.live.locate(finder, present, pos, limit)

    def _start_matches(self, t: Target, at: int) -> bool:
        """Whether the line at `at` holds signature start `t` (its pattern on the message)."""
        block = self.block
        line, _ = self.s.a.envelope.peel(0, block[at : block.find(b"\n", at)].decode("ascii"))
        return line is not None and t.pattern.search(line.text) is not None

    def _bad_byte(self, pos: int) -> int | None:
        """The first byte at or after `pos` that a plain ASCII line cannot hold (remembered
        for the block, so that the search reads each byte once)."""
        known = self._bad
        if known is not None and known[0] <= pos and (known[1] is None or known[1] >= pos):
            return known[1]
        m = _BAD.search(self.block, pos)
        self._bad = (pos, m.start() if m is not None else None)
        return self._bad[1]

    def _first_live(self, run: Run, finder: StdlibStops, pos: int, limit: int) -> tuple[int, list[tuple[int, Target]]]:
        """The first line before `limit` holding a literal that stops the stretch, and the
        signature starts to queue before it (line start, target)."""
        block = self.block
        table = self._table(run)
        combined = self._combined
        starts: list[tuple[int, Target]] = []
        waiting: set[tuple[int, int]] = set()  # signatures whose start this stretch queues
        # a stretch may pass tens of thousands of watched lines (a queued signature start on
        # every request): per line, one lookup of what its set of literals does, and the
        # literal counts added up once at the end
        counts: Counter[frozenset[int]] = Counter()
        try:
            for at, ids in finder.literal_lines(pos):
                if at >= limit:
                    break
                counts[ids] += 1
                st = combined.get(ids, _UNKNOWN)
                if st is _UNKNOWN:
                    st = combined[ids] = self._combined_status(ids, run, table)
                if st is STOP:
                    return at, starts
                checks, defer, latent = st
                if checks or latent:
                    line = block[at : block.find(b"\n", at)]
                    if any(p.search(line) for p in checks):
                        return at, starts
                    # a later entry of a signature whose start this stretch queued is awaited now
                    if any(key in waiting and p.search(line) for key, p in latent):
                        return at, starts
                if defer:
                    if self._entangled(run, at):
                        return at, starts
                    waiting.update(t.ref[:2] for t in defer)
                    starts += [(at, t) for t in defer]
            return limit, starts
        finally:
            self._count_hits(counts)

    def _entangled(self, run: Run, at: int) -> bool:
        """Whether the signature start on the line at `at` may be part of a longer entry: the
        line is a continuation, or the next line is one (or another program's line, which a
        continuation may follow), or the next line is in the next block. Such a start takes
        the per-line path, which joins the entry; any other is queued as the lone line it is.
        (Continuation lines elsewhere in a stretch join lines that hold no start: their
        statistics count per physical line either way.)"""
        block = self.block
        nxt = block.find(b"\n", at) + 1
        if nxt >= len(block):
            return True
        allowed = frozenset(run.facts.wrappers)
        cont = self._continuations.get(allowed)
        if cont is None:
            cont = self._continuations[allowed] = compile_bytes(self.shape_sources(allowed)[1])
        if cont.match(block, at) or cont.match(block, nxt):
            return True
        line = block[nxt : block.find(b"\n", nxt)]
        return any(lit in line for lit in self._bridges)

    def _combined_status(self, ids: frozenset[int], run: Run, table: dict[int, Status]) -> Status:
        """What a line holding the literals `ids` does: STOP if any of them stops, else their
        checks, signature starts and latent entries together (in the order of `ids`)."""
        checks: list[Any] = []
        defer: list[Target] = []
        latent: list[Any] = []
        for i in ids:
            st = table[i] if i in table else self._status(i, run, table)
            if st is STOP:
                return STOP
            checks += st[0]
            defer += st[1]
            latent += st[2]
        return (tuple(checks), tuple(defer), tuple(latent))

    def _count_hits(self, counts: Counter[frozenset[int]]) -> None:
        """Add the literal hits of a stretch; a literal seen FREQUENT times (not one always
        searched) may be left out of the finder once it settles."""
        hits, frequent, steady = self._hits, self._frequent, self.steady
        for ids, n in counts.items():
            for i in ids:
                before = hits[i]
                hits[i] = before + n
                if before < FREQUENT <= before + n and i not in steady:
                    frequent.add(i)

    def _table(self, run: Run) -> dict[int, Status]:
        """The statuses of watched literals in the run's present state (computed as asked)."""
        s = self.s
        key = (run.index, s.a.processed, len(s.deferred), len(run.facts.wrappers), run.facts.era_min, run.facts.era_max)
        if key != self._status_key:
            self._status_key, self._status_table, self._combined = key, {}, {}
        return self._status_table

    def _status(self, i: int, run: Run, table: dict[int, Status]) -> Status:
        """What watched literal `i` does in the run's present state: STOP, or the loosened
        patterns of its live targets (a match stops), the signature starts to queue, and the
        settled later entries of signatures (live again once their start is queued)."""
        s = self.s
        found: Status
        if i in self.always:
            found = STOP
        else:
            checks, defer, latent = [], [], []
            for t in s.by_id[i]:
                if t.kind == "stat":
                    continue
                if s.inert(t, run):
                    if t.kind == "sig":
                        latent.append((t.ref[:2], self._loosened(t)))
                    continue
                if t.kind == "sig" and t.ref[2] == 0:
                    defer.append(t)
                else:
                    checks.append(self._loosened(t))
            found = (tuple(checks), tuple(defer), tuple(latent))
        table[i] = found
        return found

    def _group_head(self, pos: int, stop: int) -> int:
        """A stop on a continuation line moves to the line it continues: the per-line path
        must see the whole entry, as it would have joined it."""
        block = self.block
        while stop > pos:
            raw = block[stop : block.find(b"\n", stop)].decode("utf-8", "replace")
            _, is_cont = self.s.a.envelope.peel(0, raw)
            if not is_cont:
                break
            stop = block.rfind(b"\n", pos, stop - 1) + 1 or pos
        return stop

    def _consume(self, run: Run, pos: int, stop: int, base: int, starts: list[tuple[int, Target]]) -> None:
        block = self.block
        last = self._last_candidate(pos, stop)
        if last < 0:
            return  # no candidate line: the per-line path would not have looked at any
        for lit, target, pattern, columns in self.stats:
            if block.find(lit, pos, stop) >= 0:
                rows = pattern.findall(block, pos, stop)
                if rows:
                    if len(columns) < 2:  # findall gives bare values (or whole matches) then
                        rows = [(row,) if columns else () for row in rows]
                    run.stats.observe_rows(target.ref, columns, rows)
        if starts:
            self._queue_starts(run, pos, base, starts)
        lines = block.count(b"\n", pos, stop)
        run.last_line = max(run.last_line, base + lines - block.count(b"\n", last, stop) + 1)
        if run.since_start > 0:
            run.since_start += 1  # only "any entry after the start line" is ever asked
        else:
            run.since_start += 2 if len(self.s.engine.scan(block[pos:stop])) > 1 else 1

    def _last_candidate(self, pos: int, stop: int) -> int:
        """Offset of the last line in [pos, stop) holding any literal, or -1 (the scan reads
        back from `stop` in growing steps: the last such line is seldom more than a line or
        two away, and the standard-library engine reads ~20 MB/s, so a first step of a few
        KiB would scan the whole of a short stretch again)."""
        block, end, step = self.block, stop, 256
        while end > pos:
            start = block.rfind(b"\n", pos, max(pos, end - step)) + 1 or pos
            hits = self.s.engine.scan(block[start:end])
            if hits:
                return start + hits[-1][0]
            end, step = start, step * 4
        return -1

    def _queue_starts(self, run: Run, pos: int, base: int, starts: list[tuple[int, Target]]) -> None:
        """Queue the starts of multi-line signatures in the stretch whose pattern matches, as
        the per-line path would have queued them (its queues keep only the last MAX_PARTIALS)."""
        block, peel = self.block, self.s.a.envelope.peel
        kept: list[tuple[tuple[int, int], int, str]] = []
        full: dict[tuple[int, int], int] = {}
        number, counted = base, pos
        numbers = []
        for at, _ in starts:
            number += block.count(b"\n", counted, at)
            counted = at
            numbers.append(number + 1)
        for (at, t), number in zip(reversed(starts), reversed(numbers), strict=True):
            key = t.ref[:2]
            if full.get(key, 0) >= MAX_PARTIALS:
                continue
            raw = block[at : block.find(b"\n", at)].decode("ascii")
            line, _ = peel(number, raw)
            if line is not None and t.pattern.search(line.text):
                full[key] = full.get(key, 0) + 1
                kept.append((key, number, raw))
        for key, number, raw in reversed(kept):
            self.s.deferred.add(run, key, number, raw)

    def _stat_pattern(self, t: Target) -> tuple[Any, tuple[str, ...]]:
        found = self._stat_patterns.get(t.serial)
        if found is None:
            source = ungrouped(t.source, USED_GROUPS.get(t.ref, frozenset()))
            import regex  # when a statistic is first counted in bulk

            pattern = regex.compile(line_bounded(source).encode())  # faster than re on these
            columns = tuple(sorted(pattern.groupindex, key=pattern.groupindex.__getitem__))
            found = self._stat_patterns[t.serial] = (pattern, columns)
        return found

    def _loosened(self, t: Target) -> Any:
        found = self._loose.get(t.serial)
        if found is None:
            found = self._loose[t.serial] = compile_bytes(loosened(t.source))
        return found

    def finder(self, run: Run) -> HyperscanStops | StdlibStops:
        """The stop finder for the wrappers the run has seen and the literals live in its state."""
        allowed = frozenset(run.facts.wrappers)
        # Hyperscan's finder keeps each literal's occurrences apart and walks only the live
        # ones; the standard library's searches the literals of a database narrowed per state
        live = None if self.hyperscan else self.live_literals(run)
        found = self._finders.get((allowed, live))
        if found is None:
            if len(self._finders) >= 64 or len(self._literal_searches) >= 16:
                self._finders.clear()  # bounded: each holds a compiled database
                self._literal_searches = {k: v for k, v in self._literal_searches.items() if k is None}
            ids = self.stop_ids if live is None else [i for i in self.stop_ids if i not in live]
            literals: Any = self._literal_searches.get(live)
            if literals is None:
                encoded = [self.s.literals[i].encode() for i in ids]
                if self.hyperscan:
                    literals = HyperscanStops.literal_engine(encoded)
                else:
                    head = self._sample  # bytes rare in this log, not in a list of lines
                    literals = rare_byte_regex(encoded, Counter({b: head.count(bytes([b])) for b in range(256)}))
                self._literal_searches[live] = literals
            shapes = self._shape_searches.get(allowed)
            if shapes is None:
                foreign, cont = self.shape_sources(allowed)
                if self.hyperscan:  # no lookarounds in Hyperscan: its hits are checked as peeling does
                    shapes = (HyperscanStops.shape_database(foreign, cont), peeled_shape(self.envelope, allowed))
                else:  # the foreign pattern's hits, then checked as peeling does
                    shapes = (LineStarts(foreign), LineStarts(cont), peeled_shape(self.envelope, allowed))
                self._shape_searches[allowed] = shapes
            if self.hyperscan:
                found = HyperscanStops(literals, ids, shapes[0], shapes[1], always=self.always)
            else:
                found = StdlibStops(literals, [(i, self.s.literals[i].encode()) for i in ids], *shapes)
            self._finders[(allowed, live)] = found
        return found

    def live_literals(self, run: Run) -> frozenset[int] | None:
        """The literals the stop finder leaves out in the run's present state: those that
        settled (a fact known, an era seen, no start held for a later entry) among the ones
        frequent in this log (so that few distinct databases are ever built). None (leave
        out nothing) until the state has held for a few stretches: a state seen only in
        passing is not worth a database of its own."""
        facts = run.facts
        waiting = frozenset(
            [key for key, m in run.matchers.items() if m.partials]
            + [key[1:] for key in self.s.deferred.queues if key[0] == run.index]
        )
        version = (
            run.index,
            len(facts.values),
            len(facts.era_evidence),
            facts.era_min,
            facts.era_max,
            run.startup_seen,
            len(run.excluded),
            len(facts.blocked_absent),
            waiting,
            len(self._frequent),
        )
        if version != self._active_version:
            self._active_version, self._stable, self._version_block = version, 0, self._block_index
            self._settled = frozenset(i for i in self._frequent if not self._live(i, run, waiting))
            return None
        self._stable += 1
        # (a run of a few KiB, as in a log of many restarts, never gets a database of its own)
        settled = self._stable >= STABLE_STRETCHES and self._block_index > self._version_block
        return self._settled if settled and self._settled else None

    def _live(self, i: int, run: Run, waiting: frozenset[tuple[int, int]]) -> bool:
        if i in self.steady:
            return True
        keys = self._awaited.get(i)
        if keys is not None:
            return not keys.isdisjoint(waiting)
        return any(t.kind not in BULK_INERT and not self.s.inert(t, run) for t in self.s.by_id[i])

    def shape_sources(self, allowed: frozenset[str]) -> tuple[str, str]:
        """Lines the run has not vouched for, as patterns matched at a line start: after any
        wrappers the run has seen, a wrapper it has not (or one naming an instance, or a
        terminal one), a dropped line or a JSON object (a superset: `peeled_shape` then decides
        each hit as peeling does, so `2026-08-28T18:11:25+08:00 host ident[pid]: ` counts as
        journald, not as docker's timestamp); and, apart, a continuation line."""
        env = self.envelope
        ok = [_bare(w.regex) for w in env.wrappers if _vouched(w, allowed)]
        foreign = [_bare(w.regex) for w in env.wrappers if _bare(w.regex) not in ok]
        rest = [_bare(d) for d in env.drop] + [r"\{"]
        head = f"(?:{'|'.join(ok)})*" if ok else ""
        cont = "|".join(_bare(c.regex) for c in env.continuations)
        return f"{head}(?:{'|'.join(foreign + rest)})", f"{head}(?:{cont})"


def _bare(source: str) -> str:
    """A format pattern as a group to put after others (its anchor and named groups dropped)."""
    return "(?:" + ungrouped(source[1:] if source.startswith("^") else source) + ")"


def _vouched(wrapper: Any, allowed: frozenset[str]) -> bool:
    """A wrapper the run has seen, which the bulk path may peel without looking (not JSON,
    not terminal, naming no instance)."""
    plain = wrapper.kind != "json" and not wrapper.terminal
    return wrapper.name in allowed and plain and "(?P<instance>" not in wrapper.regex


def peeled_shape(envelope: Any, allowed: frozenset[str]) -> PeeledShape:
    """The check of each hit of the foreign-shape pattern, done as peeling does it (each
    wrapper apart, in the envelope's order), for a run that has vouched for `allowed`."""
    wrappers = [(_bare(w.regex), _vouched(w, allowed)) for w in envelope.wrappers]
    rest = "|".join([_bare(d) for d in envelope.drop] + [r"\{"])
    return PeeledShape(wrappers, rest, MAX_PEEL)

