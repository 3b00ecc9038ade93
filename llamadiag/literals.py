"""The literal index: one pass over the text finds which patterns can possibly match.

Every pattern used on log lines (signature entries, facts, versions, eras, run
boundaries, statistics, exclusions, continuations) registers the literal it requires.
A block of lines is searched once for all literals; only lines holding one become
entries, and each entry is offered only to the patterns whose literals it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regex

from llamadiag.patterns import PatternError, compile_pattern, required_literals


@dataclass(frozen=True, slots=True)
class Target:
    """A pattern to run on entries that hold `literal`; `kind` and `ref` say whose it is."""

    kind: str
    ref: Any
    pattern: regex.Pattern[str]
    literal: str


def literals_for(source: str, explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    found = required_literals(source)
    if not found:
        raise PatternError(f"pattern {source!r} has no literal of 4+ characters: add `literal:`")
    return found


class LiteralIndex:
    def __init__(self) -> None:
        self.by_literal: dict[str, list[Target]] = {}
        self._block_re: re.Pattern[str] | None = None
        self._line_re: regex.Pattern[str] | None = None
        self._implied: dict[str, list[str]] = {}

    def add(self, kind: str, ref: Any, source: str, literal: str | None = None) -> None:
        pattern = compile_pattern(source)
        for lit in literals_for(source, literal):
            self.by_literal.setdefault(lit, []).append(Target(kind, ref, pattern, lit))
        self._block_re = None

    def literals(self) -> list[str]:
        return sorted(self.by_literal, key=len, reverse=True)

    def _compile(self) -> None:
        alternation = "|".join(re.escape(lit) for lit in self.literals()) or r"(?!x)x"
        self._block_re = re.compile(alternation)
        self._line_re = regex.compile(alternation)
        lits = self.literals()
        self._implied = {a: [b for b in lits if b != a and b in a] for a in lits}

    def candidates(self, lines: list[str]) -> Iterator[int]:
        """Indices of the lines in a block that hold at least one literal."""
        if self._block_re is None:
            self._compile()
        assert self._block_re is not None
        text = "\n".join(lines)
        index = 0
        cursor = 0
        last = -1
        for m in self._block_re.finditer(text):
            index += text.count("\n", cursor, m.start())
            cursor = m.start()
            if index != last:
                last = index
                yield index

    def targets(self, text: str) -> list[Target]:
        """Targets whose literal occurs in text (overlapping occurrences included)."""
        if self._block_re is None:
            self._compile()
        assert self._line_re is not None
        found: set[str] = set()
        for m in self._line_re.finditer(text, overlapped=True):
            lit = m.group()
            if lit not in found:
                found.add(lit)
                found.update(self._implied[lit])
        out: list[Target] = []
        for lit in found:
            out.extend(self.by_literal[lit])
        return out
