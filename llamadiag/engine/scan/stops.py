"""Where a stretch of routine lines ends: the first cold literal or unvouched line shape.

The bulk path (bulk.py) asks, for a block, "from this offset, where is the next line I
must not consume?". Two finders answer, one per scanning engine:

- `HyperscanStops`: one Hyperscan pass per block over the cold literals and the shape
  pattern (compiled with HS_FLAG_MULTILINE), cached on disk like the engine's database;
  the answers are looked up in the sorted hits.
- `StdlibStops`: standard-library searches. Python's `re` tries every alternative of a
  large literal alternation at almost every position (~20 MB/s for ~340 literals), so the
  cold literals are searched from each one's rarest byte instead: the alternation starts
  with a handful of bytes that routine lines seldom hold, and a lookbehind checks the
  part of the literal before it. The first hit is then never later than the first line
  holding a literal.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import regex

from llamadiag.engine.scan.multimatch import cached_database

_NEVER = re.compile(rb"(?!x)x")
# one database per set of wrappers a run has seen
KEEP_DATABASES = 32


def rare_byte_regex(literals: list[bytes], common: Counter[int]) -> re.Pattern[bytes]:
    """One pattern finding every occurrence of `literals`, entered at each literal's
    rarest byte (by `common`, byte counts of routine text): from there a trie of what
    follows, and at its leaves a lookbehind over the whole literal."""
    if not literals:
        return _NEVER
    anchors = _anchor_bytes(set(literals), common)
    by_anchor: dict[int, list[tuple[bytes, bytes | None]]] = {}
    for lit in sorted(set(literals)):
        at = min((i for i in range(len(lit)) if lit[i] in anchors), key=lambda i: (common.get(lit[i], 0), i))
        by_anchor.setdefault(lit[at], []).append((lit[at + 1 :], lit if at else None))
    branches = [_escape(bytes([b])) + _trie(items) for b, items in sorted(by_anchor.items())]
    return re.compile("|".join(branches).encode("latin-1"))


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


class StdlibStops:
    """Stop finder on the standard library: where the bulk path must hand over to the per-line path."""

    def __init__(self, cold: re.Pattern[bytes], foreign: LineStarts, continuation: LineStarts) -> None:
        self.searches: list[Callable[[bytes, int], re.Match[bytes] | int | None]] = [
            cold.search,
            foreign.search,
            continuation.search,
        ]
        self.block = b""
        self._hits: list[tuple[int, int | None] | None] = [None, None, None]

    def begin(self, block: bytes) -> None:
        """Start on a new block: forget the previous block's hits."""
        self.block, self._hits = block, [None, None, None]

    def first(self, pos: int, continuations: bool) -> int | None:
        """Offset of the first hit at or after `pos`, continuation lines counting unless
        `continuations` are allowed (each pattern reads each byte once per block: a hit
        found further on is remembered)."""
        best: int | None = None
        for i in (0, 1) if continuations else (0, 1, 2):
            known = self._hits[i]
            if known is not None and known[0] <= pos and (known[1] is None or known[1] >= pos):
                hit = known[1]
            else:
                found = self.searches[i](self.block, pos)
                hit = found.start() if isinstance(found, re.Match | regex.Match) else found
                self._hits[i] = (pos, hit)
            if hit is not None and (best is None or hit < best):
                best = hit
        return best


class HyperscanStops:
    """Stop finder on Hyperscan: every stop of a block found in one scan."""

    def __init__(self, cold: list[bytes], foreign: str, continuation: str) -> None:
        import hyperscan

        self.db = _database(hyperscan, cold, [f"^(?:{foreign})", f"^(?:{continuation})"])
        self.continuation_id = len(cold) + 1
        self.hits: list[int] = []
        self.hits_but_continuations: list[int] = []

    def begin(self, block: bytes) -> None:
        """Scan a new block and keep the line starts of its hits."""
        found: list[tuple[int, int]] = []
        self.db.scan(block, match_event_handler=lambda id_, _from, to, _flags, _ctx: found.append((id_, to)))
        # a hit ends inside its line (every pattern consumes a byte of it): keep line starts
        rfind, cont = block.rfind, self.continuation_id
        self.hits = sorted({rfind(b"\n", 0, to - 1) + 1 for _, to in found})
        self.hits_but_continuations = sorted({rfind(b"\n", 0, to - 1) + 1 for id_, to in found if id_ != cont})

    def first(self, pos: int, continuations: bool) -> int | None:
        """The first hit at or after `pos`, continuation lines counting unless `continuations` are allowed."""
        hits = self.hits_but_continuations if continuations else self.hits
        i = bisect.bisect_left(hits, pos)
        return hits[i] if i < len(hits) else None


def _database(hyperscan: Any, cold: list[bytes], shapes: list[str]) -> Any:
    expressions = [re.escape(lit) for lit in cold] + [shape.encode() for shape in shapes]
    flags = [0] * len(cold) + [hyperscan.HS_FLAG_MULTILINE] * len(shapes)
    return cached_database(hyperscan, "hsstops", expressions, flags, keep=KEEP_DATABASES)
