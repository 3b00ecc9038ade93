"""Where a stretch ends, from each literal's occurrences: only what can stop is looked at.

The Hyperscan stop finder (stops.HyperscanStops) keeps, per block, the occurrences of each stop
literal apart. The bulk path (bulk.py) knows what each literal does in the run's present state.
From both, the first line that needs the per-line path is found without walking lines one by
one in Python:

- a literal that always stops: its first occurrence;
- a literal with live targets: the first match of their loosened patterns, searched over the
  block from its first occurrence (a match is a stop; one on a line without the literal, or
  spanning lines, only stops earlier: the per-line path is exact wherever a stretch ends);
- a signature start (queued, not judged): the first start that may be part of a longer entry
  (it or the next line a continuation, the next line another program's, or the block's last
  line), found by one search per literal;
- a later signature entry whose start the stretch queues: its loosened pattern from that start.

The starts to queue are then found backwards from the stop, only the last `MAX_PARTIALS` per
signature (what the matcher's queues keep), instead of one by one forwards.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any, Protocol

from llamadiag.engine.literals import Target

# a watched literal's state: (loosened patterns of live targets, signature starts to queue,
# settled later entries (signature key, loosened pattern)), or None: it always stops
Status = tuple[tuple[Any, ...], tuple[Target, ...], tuple[tuple[tuple[int, int], Any], ...]] | None


# the signature-start literals before a stop: (literal, its end offsets, its start targets)
Defers = list[tuple[int, list[int], tuple[Target, ...]]]


class Occurrences(Protocol):
    """What LiveStops needs of a finder: each literal's occurrences in the block."""

    block: bytes
    occurrences: dict[int, list[int]]  # literal id -> end offsets, ascending
    lengths: dict[int, int]

    def continuation_lines(self) -> set[int]:
        """Line starts of the block's continuation lines (under the run's wrappers)."""
        ...


class LiveStops:
    """First stop of a stretch and its signature starts, from per-literal occurrences."""

    def __init__(self, literals: list[bytes], bridges: list[bytes]) -> None:
        self.literals = literals
        self.bridges = bridges
        self._memo: dict[Any, tuple[int, int]] = {}  # pattern -> (searched from, first match or -1)

    def begin(self) -> None:
        """Forget the searches of the previous block."""
        self._memo = {}

    def first(self, found: Occurrences, i: int, pos: int) -> tuple[int, int] | None:
        """(index, line start) of literal `i`'s first occurrence at or after `pos`, or None."""
        ends = found.occurrences.get(i)
        if not ends:
            return None
        j = bisect.bisect_left(ends, pos + found.lengths[i])  # starting at or after pos
        if j == len(ends):
            return None
        return j, found.block.rfind(b"\n", 0, ends[j] - 1) + 1

    def search(self, block: bytes, pattern: Any, at: int) -> int | None:
        """Offset of the first match of `pattern` in `block` at or after `at` (remembered per
        block, so that each pattern reads the block about once)."""
        known = self._memo.get(pattern)
        if known is not None and known[0] <= at and (known[1] < 0 or known[1] >= at):
            return None if known[1] < 0 else known[1]
        m = pattern.search(block, at)
        self._memo[pattern] = (at, m.start() if m is not None else -1)
        return m.start() if m is not None else None

    def locate(self, found: Occurrences, present: list[tuple[int, Status]], pos: int, limit: int) -> tuple[int, Defers]:
        """The first line at or after `pos`, before `limit`, that the per-line path must see,
        and the signature-start literals before it: (literal, end offsets, targets)."""
        block = found.block
        line_of = self._line_of
        stop = limit
        checks: list[tuple[int, tuple[Any, ...]]] = []
        defers: list[tuple[int, int, tuple[Target, ...]]] = []
        latents: list[tuple[int, tuple[tuple[tuple[int, int], Any], ...]]] = []
        for i, st in present:
            first = self.first(found, i, pos)
            if first is None or first[1] >= stop:
                continue
            at = first[1]
            if st is None:
                stop = at
                continue
            if st[0]:
                checks.append((at, st[0]))
            if st[1]:
                defers.append((i, at, st[1]))
            if st[2]:
                latents.append((at, st[2]))
        for at, patterns in checks:
            for p in patterns:
                hit = self.search(block, p, at)
                if hit is not None:
                    stop = min(stop, line_of(block, hit))
        first_start: dict[tuple[int, int], int] = {}
        for i, at, targets in defers:
            if at >= stop:
                continue
            for t in targets:
                key = t.ref[:2]
                first_start[key] = min(first_start.get(key, at), at)
            tangled = self.first_entangled(found, i, pos, stop)
            if tangled is not None:
                stop = min(stop, tangled)
        for at, latent in latents:
            for key, p in latent:
                start = first_start.get(key)
                if start is not None and start < stop:
                    hit = self.search(block, p, max(at, start))
                    if hit is not None:
                        stop = min(stop, line_of(block, hit))
        return stop, [(i, found.occurrences[i], targets) for i, at, targets in defers if at < stop]

    def first_entangled(self, found: Occurrences, i: int, pos: int, stop: int) -> int | None:
        """The first line in [pos, stop) holding literal `i` that may be part of a longer
        entry: it or the next line a continuation line, the next line another program's (a
        continuation may follow it), or the next line in the next block."""
        block, size = found.block, len(found.block)
        ends = found.occurrences[i]
        length = found.lengths[i]
        ends = ends[bisect.bisect_left(ends, pos + length) : bisect.bisect_left(ends, stop + length)]
        rfind, find = block.rfind, block.find
        lines = [rfind(b"\n", 0, e - 1) + 1 for e in ends]
        nexts = [find(b"\n", e - 1) + 1 for e in ends]
        cont = found.continuation_lines()
        for line, nxt in zip(lines, nexts, strict=True):
            if line in cont or nxt in cont or nxt >= size or self._bridge_at(block, nxt):
                return line
        return None

    def _bridge_at(self, block: bytes, at: int) -> bool:
        """Whether the line at `at` holds a literal of another program's lines."""
        line = block[at : block.find(b"\n", at)]
        return any(b in line for b in self.bridges)

    @staticmethod
    def _line_of(block: bytes, offset: int) -> int:
        return block.rfind(b"\n", 0, offset) + 1


def starts_backwards(
    block: bytes,
    pos: int,
    stop: int,
    lengths: dict[int, int],
    defers: Defers,
    keep: int,
    matches: Callable[[Target, int], bool],
) -> list[tuple[int, Target]]:
    """The signature starts in [pos, stop) to queue: per signature, the last `keep` lines whose
    start pattern matches (`matches(target, line start)`), walking back from the stop; in
    line order."""
    kept: list[tuple[int, int, Target]] = []
    for i, ends, targets in defers:
        length = lengths[i]
        j0 = bisect.bisect_left(ends, pos + length)
        j1 = bisect.bisect_left(ends, stop + length)
        for t in targets:
            count, seen = 0, -1
            for j in range(j1 - 1, j0 - 1, -1):
                line = block.rfind(b"\n", 0, ends[j] - 1) + 1
                if line == seen:
                    continue  # the literal twice on one line
                seen = line
                if matches(t, line):
                    kept.append((line, t.serial, t))
                    count += 1
                    if count >= keep:
                        break
    kept.sort(key=lambda k: (k[0], k[1]))
    return [(line, t) for line, _, t in kept]
