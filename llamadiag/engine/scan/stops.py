"""Where a stretch of the bulk path ends: the lines holding a live literal, and unvouched shapes.

The bulk path (bulk.py) asks, for a block, "from this offset, where is the next line I
must not consume?". Two finders answer, one per scanning engine:

- `HyperscanStops`: one Hyperscan pass per block over all stop literals, each occurrence kept
  under its literal (livestops.py then looks only at the literals live in the run's state),
  and one over the shape patterns (HS_FLAG_MULTILINE); both databases cached on disk like the
  engine's.
- `StdlibStops`: standard-library searches. Python's `re` tries every alternative of a
  large literal alternation at almost every position (~20 MB/s for ~340 literals), so the
  literals are searched from each one's rarest byte instead (counted in the log's first
  block): the alternation starts with a handful of bytes that the log seldom holds, and a lookbehind checks the
  part of the literal before it. The first hit is then never later than the first line
  holding a literal. A hit line's literals are read from the search's own matches in it
  (`LineLiterals`).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from llamadiag.engine.scan.multimatch import Engine, cached_database

_NEVER = re.compile(rb"(?!x)x")
# one database per set of wrappers a run has seen
KEEP_DATABASES = 32


def rare_byte_regex(literals: list[bytes], common: Counter[int]) -> re.Pattern[bytes]:
    """One pattern finding every occurrence of `literals`, entered at each literal's
    rarest byte (by `common`, byte counts of typical text): from there a trie of what
    follows, and at its leaves a lookbehind over the whole literal."""
    if not literals:
        return _NEVER
    anchors = _anchor_bytes(set(literals), common)
    by_anchor: dict[int, list[tuple[bytes, bytes | None]]] = {}
    for lit in sorted(set(literals)):
        at = min((i for i in range(len(lit)) if lit[i] in anchors), key=lambda i: (common.get(lit[i], 0), i))
        by_anchor.setdefault(lit[at], []).append((lit[at + 1 :], lit if at else None))
    branches = [_escape(bytes([b])) + _trie(items) for b, items in sorted(by_anchor.items())]
    return _uncached("|".join(branches).encode("latin-1"))


def _uncached(source: bytes) -> re.Pattern[bytes]:
    """`re.compile` without `re`'s module cache (512 patterns, freed only when full): the bulk
    path drops a literal search (~240 KiB compiled) when its bound of 16 is reached, and one
    kept by `re` as well stayed alive anyway, ~30 of them by the end of a 1 GB log."""
    compiler = getattr(re, "_compiler", None)  # the compiler re.compile calls (Python 3.11+)
    return compiler.compile(source, 0) if compiler is not None else re.compile(source)


def _escape(data: bytes) -> str:
    return re.escape(data.decode("latin-1"))


def _trie(items: list[tuple[bytes, bytes | None]]) -> str:
    """Alternation over what follows the anchor; (rest, whole literal or None when the
    anchor is its first byte)."""
    children: dict[int, list[tuple[bytes, bytes | None]]] = {}
    complete: list[bytes | None] = []
    for rest, whole in items:
        if rest:
            children.setdefault(rest[0], []).append((rest[1:], whole))
        else:
            complete.append(whole)
    branches = [_escape(bytes([b])) + _trie(sub) for b, sub in sorted(children.items())]
    if None in complete:  # a literal already matched whole: what follows is optional
        return f"(?:{'|'.join(branches)})?" if branches else ""
    branches += [f"(?<={_escape(whole)})" for whole in complete if whole is not None]
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


def _anchor_bytes(literals: set[bytes], common: Counter[int]) -> set[int]:
    """A small, rare set of bytes such that every literal holds one (greedy weighted set
    cover: the search stops at every occurrence of any of them)."""
    chosen: set[int] = set()
    left = set(literals)
    while left:
        holders: Counter[int] = Counter(b for lit in left for b in set(lit))
        best = max(holders, key=lambda b: (holders[b] / (common.get(b, 0) + 1), -b))
        chosen.add(best)
        left = {lit for lit in left if best not in lit}
    return chosen


def compile_bytes(source: str) -> Any:
    """Bytes pattern: the standard library's when it accepts the syntax (faster), else regex's."""
    data = source.encode()
    try:
        return re.compile(data)
    except re.error:
        import regex  # only for a pattern re refuses

        return regex.compile(data)


class LineStarts:
    """A pattern matched at line starts, searched as newline + pattern: the standard
    library then jumps from newline to newline instead of trying every position."""

    def __init__(self, source: str) -> None:
        self.head, self.after_newline = compile_bytes(source), compile_bytes("\n" + source)

    def search(self, block: bytes, pos: int) -> int | None:
        """Offset of the first line start at or after `pos` where the pattern matches, or None."""
        if self.head.match(block, pos):
            return pos
        m = self.after_newline.search(block, pos)
        return m.start() + 1 if m is not None else None


class PeeledShape:
    """Whether a line starts with a shape the run has not vouched for, decided as peeling does
    it (llamadiag/engine/envelope.py): at each step the first wrapper in the envelope's order
    that matches is taken; a vouched-for one is peeled and the next step starts after it, any
    other is an unvouched shape; where no wrapper matches, the line is unvouched when a drop
    pattern or JSON starts there. One alternation names the first wrapper that matches, so a
    line costs a few anchored matches instead of a pattern that backtracks over every
    combination of the vouched-for wrappers."""

    def __init__(self, wrappers: list[tuple[str, bool]], rest: str, max_peel: int) -> None:
        alternatives = "|".join(f"(?P<w{j}>{source})" for j, (source, _) in enumerate(wrappers))
        self.any_wrapper = compile_bytes(alternatives) if wrappers else _NEVER
        self.vouched = [vouched for _, vouched in wrappers]
        self.rest = compile_bytes(rest)
        self.max_peel = max_peel

    def match(self, block: bytes, pos: int) -> bool:
        """True where the line starting at `pos` is of an unvouched shape."""
        any_wrapper, vouched = self.any_wrapper.match, self.vouched
        for _ in range(self.max_peel):
            m = any_wrapper(block, pos)
            if m is None:
                break
            if not vouched[int(str(m.lastgroup)[1:])]:  # the group named w<index>
                return True
            if m.end() == pos:  # an empty wrapper match peels nothing: peeling stops too
                break
            pos = m.end()
        return self.rest.match(block, pos) is not None


class LineLiterals:
    """Which literals a line holds, read from the rare-byte search's own matches in it (each
    occurrence has a match at its rarest byte: the literal matched there, or one it is a
    prefix of from that byte), checked in the line: no scan of the line with every literal."""

    def __init__(self, pattern: re.Pattern[bytes], literals: list[tuple[int, bytes]]) -> None:
        self.pattern, self.literals = pattern, literals
        self._candidates: dict[bytes, list[tuple[int, bytes]]] = {}

    def _candidates_of(self, matched: bytes) -> list[tuple[int, bytes]]:
        """Literals an occurrence matched as `matched` (from its anchor byte on) may be."""
        first = matched[0]
        return [
            (i, lit)
            for i, lit in self.literals
            if any(lit[k] == first and matched.startswith(lit[k:]) for k in range(len(lit)))
        ]

    def of_line(self, block: bytes, m: re.Match[bytes], start: int, end: int) -> frozenset[int]:
        """The ids of the literals in block[start:end], a line holding the match `m`."""
        search, candidates = self.pattern.search, self._candidates
        maybe: set[tuple[int, bytes]] = set()
        found: re.Match[bytes] | None = m
        while found is not None:
            matched = found.group()
            known = candidates.get(matched)
            if known is None:
                known = candidates[matched] = self._candidates_of(matched)
            maybe.update(known)
            found = search(block, found.start() + 1, end)
        line = block[start:end]
        return frozenset(i for i, lit in maybe if lit in line)


class StdlibStops:
    """Stop finder on the standard library: the lines holding a watched literal, and the
    first line of an unvouched shape, found by searches that each read a block once."""

    def __init__(
        self,
        literals: re.Pattern[bytes],
        ids: list[tuple[int, bytes]],
        foreign: LineStarts,
        continuation: LineStarts,
        peeled: PeeledShape,
    ) -> None:
        self.literals = literals
        self.line_ids = LineLiterals(literals, ids)
        # `foreign` finds the lines that may be of an unvouched shape (a superset); `peeled`
        # then decides each as peeling would
        self.shapes = (foreign, continuation)
        self.peeled = peeled
        self.block = b""
        self._shape_hits: list[tuple[int, int | None] | None] = [None, None]
        self._starts: list[int] = []
        self._ids: list[frozenset[int]] = []
        self._searched = 0

    def begin(self, block: bytes) -> None:
        """Start on a new block: forget the previous block's hits."""
        self.block, self._shape_hits = block, [None, None]
        self._starts, self._ids, self._searched = [], [], 0

    def release(self) -> None:
        """Let go of the block and its hits (the bulk path moved on): `begin` comes first again."""
        self.begin(b"")

    def literal_lines(self, pos: int) -> Iterator[tuple[int, frozenset[int]]]:
        """(line start, literal ids) of each line at or after `pos` holding a watched
        literal, in order; lines found once are remembered for the block."""
        i = bisect.bisect_left(self._starts, pos)
        while i < len(self._starts):
            yield self._starts[i], self._ids[i]
            i += 1
        block, search = self.block, self.literals.search
        at = max(pos, self._searched)
        while True:
            m = search(block, at)
            if m is None:
                self._searched = len(block)
                return
            start = block.rfind(b"\n", 0, m.start()) + 1
            end = block.find(b"\n", m.start()) + 1 or len(block)
            ids = self.line_ids.of_line(block, m, start, end)
            self._searched = at = end
            if start >= pos and ids:
                self._starts.append(start)
                self._ids.append(ids)
                yield start, ids

    def shape(self, pos: int, continuation: bool) -> int | None:
        """The first line at or after `pos` of an unvouched shape (a foreign wrapper, a dropped
        line, JSON), or with `continuation` of a continuation line."""
        i = 1 if continuation else 0
        known = self._shape_hits[i]
        if known is not None and known[0] <= pos and (known[1] is None or known[1] >= pos):
            return known[1]
        block, search = self.block, self.shapes[i].search
        hit = search(block, pos)
        if not continuation:
            unvouched = self.peeled.match
            while hit is not None and not unvouched(block, hit):
                end = block.find(b"\n", hit) + 1
                hit = search(block, end) if end else None
        self._shape_hits[i] = (pos, hit)
        return hit


class HyperscanStops:
    """Stop finder on Hyperscan: where each stop literal occurs in a block (one scan over all of
    them, each occurrence kept under its literal), the unvouched shapes in another scan. A
    stretch then walks only the occurrences of the literals that matter in the run's state:
    a settled literal on every request line costs nothing, whatever the state."""

    def __init__(
        self, literals: Engine, literal_ids: list[int], shapes: Any, exact: Any, always: frozenset[int] = frozenset()
    ) -> None:
        self.engine, self.literal_ids, self.db, self.exact = literals, literal_ids, shapes, exact
        self.always = always  # literals that stop wherever they occur: their occurrences merged
        self.always_starts: list[int] = []
        self.watched_starts: list[int] = []  # the other literals' occurrences, merged: starts, ids
        self.watched_ids: list[int] = []
        self.watched_present: list[int] = []
        self.block = b""
        self._checked = (0, 0)  # foreign hits before index [1] were checked from offset [0]
        # stop literal id -> end offsets of its occurrences in the block, ascending
        self.occurrences: dict[int, list[int]] = {}
        self.lengths: dict[int, int] = {}
        self.shape_hits: tuple[list[int], list[int]] = ([], [])
        self._cont_lines: set[int] | None = None

    @staticmethod
    def literal_engine(literals: list[bytes]) -> Engine:
        """The scanning engine over the literals that may stop a stretch (its database cached on disk)."""
        from llamadiag.engine.scan.multimatch import HyperscanEngine

        return HyperscanEngine([lit.decode() for lit in literals], "hsstops", KEEP_DATABASES)

    @staticmethod
    def shape_database(foreign: str, continuation: str) -> Any:
        """The database of the unvouched shapes (a foreign wrapper ...) and of continuation lines."""
        import hyperscan

        return _database(hyperscan, [], [f"^(?:{foreign})", f"^(?:{continuation})"])

    def begin(self, block: bytes) -> None:
        """Scan a new block: the occurrences of each literal, and the line starts of shape hits."""
        by_engine_id: dict[int, list[int]] = {}

        def on_literal(id_: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
            ends = by_engine_id.get(id_)
            if ends is None:
                by_engine_id[id_] = [to]
            else:
                ends.append(to)

        engine: Any = self.engine
        engine.db.scan(block, match_event_handler=on_literal, scratch=engine.scratch())
        self.occurrences = {}
        always_starts: list[int] = []
        watched: list[tuple[int, int]] = []
        for j, ends in by_engine_id.items():
            ends.sort()  # Hyperscan reports by end offset already: a check in C
            i = self.literal_ids[j]
            length = self.lengths[i] = len(engine.literals[j].encode())
            self.occurrences[i] = ends
            if i in self.always:
                always_starts += [end - length for end in ends]
            else:
                watched += [(end - length, i) for end in ends]
        always_starts.sort()
        watched.sort()
        self.always_starts = always_starts
        self.watched_starts = [at for at, _ in watched]
        self.watched_ids = [i for _, i in watched]
        self.watched_present = sorted({i for _, i in watched})
        found: tuple[set[int], set[int]] = (set(), set())
        rfind = block.rfind

        def on_match(id_: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
            found[id_].add(rfind(b"\n", 0, to - 1) + 1)  # a hit ends inside its line: keep its start

        self.db.scan(block, match_event_handler=on_match)
        self.shape_hits = (sorted(found[0]), sorted(found[1]))
        self.block, self._checked, self._cont_lines = block, (0, 0), None

    def release(self) -> None:
        """Let go of the block and its occurrences (the bulk path moved on): `begin` comes first again."""
        self.occurrences = {}  # `lengths` stays: one small int per literal ever seen
        self.always_starts, self.watched_starts, self.watched_ids, self.watched_present = [], [], [], []
        self.shape_hits, self.block, self._checked, self._cont_lines = ([], []), b"", (0, 0), None

    def continuation_lines(self) -> set[int]:
        """Line starts of the block's continuation lines (under the run's wrappers)."""
        if self._cont_lines is None:
            self._cont_lines = set(self.shape_hits[1])
        return self._cont_lines

    def first_always(self, pos: int) -> int | None:
        """Offset of the first occurrence at or after `pos` of a literal that always stops."""
        i = bisect.bisect_left(self.always_starts, pos)
        return self.always_starts[i] if i < len(self.always_starts) else None

    def watched_between(self, pos: int, stop: int) -> Iterable[int]:
        """The other literals occurring in [pos, stop): from their occurrences there when they
        are few (a short stretch between start-up lines), else every one in the block."""
        j0 = bisect.bisect_left(self.watched_starts, pos)
        j1 = bisect.bisect_left(self.watched_starts, stop)
        if j1 - j0 < len(self.watched_present):
            return sorted(set(self.watched_ids[j0:j1]))
        return self.watched_present

    def shape(self, pos: int, continuation: bool) -> int | None:
        """The first line at or after `pos` of an unvouched shape, or of a continuation line."""
        hits = self.shape_hits[1 if continuation else 0]
        i = bisect.bisect_left(hits, pos)
        if continuation:
            return hits[i] if i < len(hits) else None
        if self._checked[0] <= pos:
            i = max(i, self._checked[1])  # hits checked before, none of them unvouched
        match, block = self.exact.match, self.block
        while i < len(hits) and not match(block, hits[i]):
            i += 1
        self._checked = (pos, i)
        return hits[i] if i < len(hits) else None


def _database(hyperscan: Any, literals: list[bytes], shapes: list[str]) -> Any:
    expressions = [re.escape(lit) for lit in literals] + [shape.encode() for shape in shapes]
    flags = [0] * len(literals) + [hyperscan.HS_FLAG_MULTILINE] * len(shapes)
    return cached_database(hyperscan, "hsstops", expressions, flags, keep=KEEP_DATABASES)
