"""One pass over a block of log bytes finds every line holding any of many literals.

Two engines behind one small interface, with identical results by construction: for
each line that holds at least one literal, its (start, end) offsets and the ids of *all*
literals in it (overlapping occurrences included).

- `hyperscan` (optional extra `llamadiag[fast]`): Intel's SIMD multi-pattern matcher.
  Its compiled database is cached under $XDG_CACHE_HOME/llamadiag, keyed by the literals.
- `stdlib`: a trie-shaped `re` alternation over the bytes, always available.

`LLAMADIAG_ENGINE=stdlib|hyperscan` forces one (tests and the benchmark use it).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from array import array
from functools import lru_cache
from typing import Any, Protocol

from llamadiag import cache
from llamadiag.engine.literals import trie_regex

Hit = tuple[int, int, frozenset[int]]  # line start, line end (the newline's offset), literal ids


class Engine(Protocol):
    """A multi-literal scanner: which lines of a block hold which literals."""

    name: str

    def scan(self, block: bytes) -> list[Hit]:
        """Lines of `block` (whole lines, each ending with a newline) that hold a literal."""
        ...


class StdlibEngine:
    """The standard-library scanner: one regex alternation of every literal."""

    name = "stdlib"

    def __init__(self, literals: list[str]) -> None:
        encoded = [lit.encode() for lit in literals]
        self.ids = {lit: i for i, lit in enumerate(encoded)}
        # the trie is built over latin-1 characters so each byte is one "character"
        source = trie_regex([lit.decode("latin-1") for lit in encoded]) or r"(?!x)x"
        self.regex = re.compile(source.encode("latin-1"))
        # a literal found implies every literal contained in it
        self.implied = {lit: frozenset(self.ids[b] for b in encoded if b in lit) for lit in sorted(encoded, key=len)}

    def scan(self, block: bytes) -> list[Hit]:
        """Lines of `block` (whole lines, each ending with a newline) that hold a literal."""
        out: list[Hit] = []
        search = self.regex.search
        implied = self.implied
        find = block.find
        m = search(block)
        while m is not None:
            start = block.rfind(b"\n", 0, m.start()) + 1
            end = find(b"\n", m.end())
            if end < 0:
                end = len(block)
            ids: set[int] = set(implied[m.group()])
            # overlapping occurrences: resume one byte after each match start, within the line
            m = search(block, m.start() + 1, end)
            while m is not None:
                ids.update(implied[m.group()])
                m = search(block, m.start() + 1, end)
            out.append((start, end, frozenset(ids)))
            m = search(block, end + 1)
        return out


class HyperscanEngine:
    """The Hyperscan scanner (SIMD), with its compiled database cached on disk."""

    name = "hyperscan"

    def __init__(self, literals: list[str], kind: str = "hyperscan", keep: int = cache.KEEP) -> None:
        import hyperscan

        self._hs = hyperscan
        self.literals = literals
        self.db = _load_or_compile(hyperscan, literals, kind, keep)
        # one engine serves every analyzer (desk requests run on several threads), but a
        # Hyperscan scratch space serves one scan at a time: each thread gets its own
        self._local = threading.local()

    def scratch(self) -> Any:
        """This thread's Hyperscan scratch space for the database."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._hs.Scratch(self.db)
        return scratch

    def scan(self, block: bytes) -> list[Hit]:
        """Lines of `block` (whole lines, each ending with a newline) that hold a literal."""
        ends = array("q")  # machine integers: a block's tens of thousands of matches stay small
        ids = array("l")

        def on_match(lit_id: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
            ends.append(to)
            ids.append(lit_id)

        self.db.scan(block, match_event_handler=on_match, scratch=self.scratch())
        out: list[Hit] = []
        if not ends:
            return out
        # Hyperscan reports in order of end offset; should it ever not, sort
        ordered = all(ends[i] <= ends[i + 1] for i in range(len(ends) - 1))
        order: range | list[int] = range(len(ends)) if ordered else sorted(range(len(ends)), key=ends.__getitem__)
        find = block.find
        line_end = -1
        start = 0
        current: set[int] = set()
        for i in order:
            to = ends[i]
            if to > line_end:
                if current:
                    out.append((start, line_end, frozenset(current)))
                start = block.rfind(b"\n", 0, to - 1) + 1
                line_end = find(b"\n", to - 1)
                if line_end < 0:
                    line_end = len(block)
                current = set()
            current.add(ids[i])
        if current:
            out.append((start, line_end, frozenset(current)))
        return out


def _load_or_compile(hyperscan, literals: list[str], kind: str = "hyperscan", keep: int = cache.KEEP):
    """The compiled database, from the cache when the literals are unchanged."""
    expressions = [re.escape(lit).encode() for lit in literals] or [b"(?!x)x"]
    return cached_database(hyperscan, kind, expressions, [0] * len(expressions), keep=keep)


def cached_database(
    hyperscan: Any, kind: str, expressions: list[bytes], flags: list[int], keep: int = cache.KEEP
) -> Any:
    """A compiled Hyperscan database, loaded from the cache when the same expressions were
    compiled before (compiling a few hundred takes ~0.1 s)."""
    digest = hashlib.sha256(b"\0".join(expressions) + repr(flags).encode())
    digest.update(str(getattr(hyperscan, "__version__", "?")).encode())
    name = f"{kind}-{digest.hexdigest()[:20]}.db"
    data = cache.read(name)
    if data is not None:
        try:
            db = hyperscan.loadb(data, hyperscan.HS_MODE_BLOCK)
            db.scratch = hyperscan.Scratch(db)  # a deserialized database has none
            return db
        except Exception:  # stale or foreign: compile again
            pass
    db = hyperscan.Database()
    db.compile(expressions=expressions, ids=list(range(len(expressions))), flags=flags)
    cache.write(name, hyperscan.dumpb(db), keep=keep)
    return db


def hyperscan_available() -> bool:
    """Whether the optional hyperscan package can be imported."""
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


def make_engine(literals: list[str], name: str | None = None) -> Engine:
    """The engine named (or $LLAMADIAG_ENGINE), else Hyperscan when installed, else stdlib."""
    wanted = name or os.environ.get("LLAMADIAG_ENGINE") or "auto"
    if wanted not in ("auto", "stdlib", "hyperscan"):
        raise ValueError(f"unknown scanning engine {wanted!r} (auto, stdlib or hyperscan)")
    if wanted == "auto":
        wanted = "hyperscan" if hyperscan_available() else "stdlib"
    return _engine(tuple(literals), wanted)


@lru_cache(maxsize=8)
def _engine(literals: tuple[str, ...], name: str) -> Engine:
    """Engines are stateless between scans: one per rule set serves every analyzer."""
    return HyperscanEngine(list(literals)) if name == "hyperscan" else StdlibEngine(list(literals))
