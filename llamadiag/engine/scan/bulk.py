"""The bulk path: stretches of routine per-request lines handled without looking at each line.

A long log is mostly what a healthy server prints per request (progress, timings, draft
acceptance, HTTP status: the `routine` lines of rules/formats/stats.yaml). The literals
found in those lines are *hot*; every other literal is *cold*. While the analyzer is in a
plain state (one stream, nothing held, no hook), the scanner hands each block to
`stretch`, which finds the first line that needs the per-line path:

- a cold literal (a start line, an error, a fact of the startup block ...);
- a line whose shape the run has not vouched for: a wrapper the run has not seen, one
  naming another instance, a dropped line, a continuation, a JSON line, a control or
  non-ASCII byte;
- a match of a *live* hot target (one whose effect could still change the run: a fact not
  yet known, an era not yet seen, a signature entry someone waits for), found with its
  pattern loosened (`regex_rewrite.loosened`) so that no match proves no effect.

Everything before that line is consumed at once: statistics by one `findall` per
statistic over the stretch (at most one match per line, as `search` on each line would
give), the last starts of multi-line signatures queued as the per-line path would queue
them, and the run's line counters. The tests run every sample and generated log with and
without this path and compare the whole reports.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

import regex

from llamadiag.engine.literals import Target
from llamadiag.engine.matcher import MAX_PARTIALS
from llamadiag.engine.regex_rewrite import line_bounded, loosened, ungrouped
from llamadiag.engine.scan.stops import HyperscanStops, LineStarts, StdlibStops, compile_bytes, rare_byte_regex
from llamadiag.engine.stats import USED_GROUPS

if TYPE_CHECKING:
    from llamadiag.engine.run import Run
    from llamadiag.engine.scan.host import ScannerView

# bytes a plain ASCII line may hold: tab, newline, printable ASCII
_GOOD = bytes([9, 10, *range(0x20, 0x7F)])
_BAD = re.compile(rb"[^\t\n\x20-\x7e]")


class Plan:
    """What the hot targets do in one state of a run."""

    def __init__(self) -> None:
        self.stats: list[tuple[bytes, Target, Any, tuple[str, ...]]] = []
        self.deferrable: list[tuple[bytes, Target]] = []
        self.live: list[Any] = []


class BulkPath:
    """Handles stretches of routine lines of a block without the per-line path."""

    def __init__(self, scanner: ScannerView) -> None:
        self.s = scanner
        k = scanner.a.k
        routine = k.stats.routine
        hot_ids = [i for i, lit in enumerate(scanner.literals) if any(lit in line for line in routine)]
        hot = set(hot_ids)
        self.hot = [(scanner.literals[i].encode(), scanner.by_id[i]) for i in hot_ids]
        self.hot_literals = [lit for lit, _ in self.hot]
        self.cold = [lit.encode() for i, lit in enumerate(scanner.literals) if i not in hot]
        self.common = Counter("\n".join(routine).encode())
        self.hyperscan = scanner.engine.name == "hyperscan"
        self._cold_re: re.Pattern[bytes] | None = None
        self._finders: dict[frozenset[str], HyperscanStops | StdlibStops] = {}
        self._begun: set[int] = set()
        self.envelope = k.envelope
        self._stat_patterns: dict[int, tuple[Any, tuple[str, ...]]] = {}
        self._loose: dict[int, Any] = {}
        self._plan_key: tuple[Any, ...] = ()
        self._plan = Plan()
        self.block = b""
        self._hits: dict[Any, tuple[int, int | None]] = {}
        self._checks: list[re.Pattern[bytes]] = []

    # -- the stretch ---------------------------------------------------------------------
    def begin(self, block: bytes) -> None:
        """Start on a new block: forget the previous block's hits."""
        self.block = block
        self._hits = {}
        self._begun = set()
        # most blocks hold no byte a plain ASCII line cannot: then no search for one
        self._checks = [_BAD] if block.translate(None, _GOOD) else []

    def stretch(self, run: Run, pos: int, base: int) -> tuple[int, int]:
        """Consume lines from `pos` (a line start; `base` is the number of the line before
        it) up to the first line that needs the per-line path; return that line's offset
        and how many lines were consumed."""
        block = self.block
        plan = self.plan(run)
        # Continuation lines join the entry before them into one. Their statistics count per
        # physical line either way, but a signature start joined to one is not queued like
        # a lone line: so a stretch holds either no continuation line, or no line holding
        # a signature start; the one reaching further is taken.
        first_start = len(block)
        for lit, _ in plan.deferrable:
            at = self._next_literal(lit, pos, first_start)
            if at is not None:
                first_start = at
        # (each finder costs a pass over the block: the second is asked only if it can win)
        finder = self.finder(run)
        if first_start == len(block):
            stop = self._first(finder, pos, continuations=True)
        else:
            stop = self._first(finder, pos, continuations=False)
            if stop < first_start:
                stop = max(stop, min(first_start, self._first(finder, pos, continuations=True)))
        for pattern in (*self._checks, *plan.live):
            hit = self._next_hit(pattern, pos, stop)
            if hit is not None:
                stop = hit
        if stop < len(block):
            stop = self._group_head(pos, block.rfind(b"\n", pos, stop) + 1 or pos)
        if stop <= pos:
            return pos, 0
        lines = block.count(b"\n", pos, stop)
        self._consume(run, plan, pos, stop, base, lines)
        return stop, lines

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

    def _first(self, finder: HyperscanStops | StdlibStops, pos: int, continuations: bool) -> int:
        if id(finder) not in self._begun:
            finder.begin(self.block)
            self._begun.add(id(finder))
        hit = finder.first(pos, continuations)
        return len(self.block) if hit is None else hit

    def _next_hit(self, pattern: Any, pos: int, limit: int) -> int | None:
        """The first match of `pattern` at or after `pos` (before `limit`), remembered for
        the block so that each pattern reads each byte once."""
        known = self._hits.get(pattern)
        if known is not None:
            start, hit = known
            if start <= pos and (hit is None or hit >= pos):
                return hit if hit is not None and hit < limit else None
        m = pattern.search(self.block, pos)
        hit = m.start() if m is not None else None
        self._hits[pattern] = (pos, hit)
        return hit if hit is not None and hit < limit else None

    def _next_literal(self, lit: bytes, pos: int, limit: int) -> int | None:
        """The first `lit` at or after `pos` (before `limit`), remembered like `_next_hit`: a
        literal absent from the rest of the block is not searched again at every stretch (a
        crash loop's block holds a stretch per run: that was a pass over the block each)."""
        known = self._hits.get(lit)
        if known is not None:
            start, hit = known
            if start <= pos and (hit is None or hit >= pos):
                return hit if hit is not None and hit < limit else None
        at = self.block.find(lit, pos)
        hit = at if at >= 0 else None
        self._hits[lit] = (pos, hit)
        return hit if hit is not None and hit < limit else None

    def _consume(self, run: Run, plan: Plan, pos: int, stop: int, base: int, lines: int) -> None:
        block = self.block
        last = -1
        for lit in self.hot_literals:  # the last candidate line: each search only reads past the best so far
            at = block.rfind(lit, max(pos, last + 1), stop)
            if at > last:
                last = at
        if last < 0:
            return  # no candidate line: the per-line path would not have looked at any
        for lit, target, pattern, columns in plan.stats:
            if block.find(lit, pos, stop) >= 0:
                rows = pattern.findall(block, pos, stop)
                if rows:
                    if len(columns) < 2:  # findall gives bare values (or whole matches) then
                        rows = [(row,) if columns else () for row in rows]
                    run.stats.observe_rows(target.ref, columns, rows)
        for lit, target in plan.deferrable:
            self._defer_last(run, lit, target, pos, stop, base + lines + 1)
        run.last_line = max(run.last_line, base + lines - block.count(b"\n", last, stop) + 1)
        if run.since_start > 0:
            run.since_start += 1  # only "any entry after the start line" is ever asked
        else:
            first = min(i for i in (block.find(lit, pos, stop) for lit in self.hot_literals) if i >= 0)
            end = block.find(b"\n", first, stop) + 1
            more = any(block.find(lit, end, stop) >= 0 for lit in self.hot_literals)
            run.since_start += 2 if more else 1

    def _defer_last(self, run: Run, lit: bytes, target: Target, pos: int, stop: int, number: int) -> None:
        """Queue the last starts of a multi-line signature in the stretch, as the per-line
        path would have queued them (its queue keeps only the last MAX_PARTIALS)."""
        block = self.block
        found: list[tuple[int, str]] = []
        end = stop
        # `number` is the line at `stop`, counted down from there
        while len(found) < MAX_PARTIALS:
            at = block.rfind(lit, pos, end)
            if at < 0:
                break
            start = block.rfind(b"\n", pos, at) + 1 or pos
            raw = block[start : block.find(b"\n", at)].decode("ascii")
            number -= block.count(b"\n", start, end)
            line, _ = self.s.a.envelope.peel(number, raw)
            if line is not None and target.pattern.search(line.text):
                found.append((number, raw))
            end = start
        for number, raw in reversed(found):
            self.s.deferred.add(run, target.ref[:2], number, raw)

    # -- what the hot targets do in the run's present state ----------------------------------
    def plan(self, run: Run) -> Plan:
        """What the hot targets do in the run's present state, cached until that state changes."""
        s = self.s
        key = (run.index, s.a.processed, len(s.deferred), len(run.facts.wrappers))
        if key == self._plan_key:
            return self._plan
        plan, seen = Plan(), set()
        for lit, targets in self.hot:
            for t in targets:
                if t.serial in seen:
                    continue
                seen.add(t.serial)
                if t.kind == "stat":
                    plan.stats.append((lit, t, *self._stat_pattern(t)))
                elif s.inert(t, run):
                    continue
                elif t.kind == "sig" and t.ref[2] == 0 and s.entries[t.ref[:2]] > 1:
                    plan.deferrable.append((lit, t))
                else:
                    plan.live.append(self._loosened(t))
        self._plan_key, self._plan = key, plan
        return plan

    def _stat_pattern(self, t: Target) -> tuple[Any, tuple[str, ...]]:
        found = self._stat_patterns.get(t.serial)
        if found is None:
            source = ungrouped(t.source, USED_GROUPS.get(t.ref, frozenset()))
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
        """The stop finder for the wrappers the run has seen."""
        allowed = frozenset(run.facts.wrappers)
        found = self._finders.get(allowed)
        if found is None:
            foreign, cont = self.shape_sources(allowed)
            if self.hyperscan:
                found = HyperscanStops(self.cold, foreign, cont)
            else:
                if self._cold_re is None:
                    self._cold_re = rare_byte_regex(self.cold, self.common)
                found = StdlibStops(self._cold_re, LineStarts(foreign), LineStarts(cont))
            self._finders[allowed] = found
        return found

    def shape_sources(self, allowed: frozenset[str]) -> tuple[str, str]:
        """Lines the run has not vouched for, as patterns matched at a line start: after any
        wrappers the run has seen, a wrapper it has not (or one naming an instance, or a
        terminal one), a dropped line or a JSON object; and, apart, a continuation line."""
        env = self.envelope

        def bare(source: str) -> str:
            return "(?:" + ungrouped(source[1:] if source.startswith("^") else source) + ")"

        ok = [
            bare(w.regex)
            for w in env.wrappers
            if w.name in allowed and w.kind != "json" and not w.terminal and "(?P<instance>" not in w.regex
        ]
        foreign = [bare(w.regex) for w in env.wrappers if bare(w.regex) not in ok]
        foreign += [bare(d) for d in env.drop] + [r"\{"]
        head = f"(?:{'|'.join(ok)})*" if ok else ""
        cont = "|".join(bare(c.regex) for c in env.continuations)
        return f"{head}(?:{'|'.join(foreign)})", f"{head}(?:{cont})"
