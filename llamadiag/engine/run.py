"""A server run (one start of llama-server, per instance) and what the analyzer keeps for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from llamadiag.engine.cmdline import ParsedFlags
from llamadiag.engine.envelope import Line
from llamadiag.engine.facts import FactState
from llamadiag.engine.literals import Target
from llamadiag.engine.matcher import SignatureMatcher
from llamadiag.engine.reasoning import RuleHits
from llamadiag.engine.stats import RunStats


@dataclass
class Run:
    """One server run: its facts, command line, partial and completed matches, statistics."""

    index: int
    instance: str | None
    first_line: int
    facts: FactState
    last_line: int = 0
    has_start: bool = False
    since_start: int = 0  # entries after the last start marker: another start right away is the same run
    startup_seen: bool = False
    cmdline: ParsedFlags | None = None
    matchers: dict[tuple[int, int], SignatureMatcher] = field(default_factory=dict)
    hits: dict[int, RuleHits] = field(default_factory=dict)
    excluded: dict[int, tuple[int, str]] = field(default_factory=dict)
    stats: RunStats = field(default_factory=RunStats)
    gaps: list[tuple[int, int | None]] = field(default_factory=list)  # elisions: (line, lines cut or None)


@dataclass
class Stream:
    """Per-instance segmentation state (router children, compose services ...)."""

    run: Run
    preamble: list[tuple[Line, Sequence[Target]]] = field(default_factory=list)


def compact(run: Run) -> None:
    """A run its stream has left gets no more lines: keep what the report needs, drop the
    open partial matches and the statistics samples, so memory does not grow per restart."""
    run.matchers.clear()
    run.gaps.clear()
    run.stats.freeze()
