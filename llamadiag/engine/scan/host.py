"""What the scanning core needs from its surroundings, as typed protocols.

The scanner, the bulk path and the deferred starts work on the analyzer's state (the held
entry, the per-instance streams, the envelope parser). They name it through `ScanHost`, and the
bulk path names the scanner through `ScannerView`, so the fast path imports neither the
analyzer nor the scanner and no import circle forms; `Analyzer` and `Scanner` satisfy these
protocols structurally (mypy checks it where they are passed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from llamadiag.engine.envelope import EnvelopeParser, Line
from llamadiag.engine.literals import LiteralIndex, Target
from llamadiag.engine.matcher import Match, SignatureMatcher
from llamadiag.engine.run import Run, Stream
from llamadiag.engine.scan.multimatch import Engine
from llamadiag.knowledge.loader import Knowledge

Done = list[tuple[Run, int, Match]]


class ScanHost(Protocol):
    """The analyzer as the scanning core sees it."""

    k: Knowledge
    index: LiteralIndex
    envelope: EnvelopeParser
    held: Line | None
    bridged: int
    line_number: int
    processed: int
    streams: dict[str | None, Stream]

    def release_held(self) -> Done:
        """Process the entry held back for continuation lines."""
        ...

    def physical_line(self, line: Line, is_cont: bool, targets: Sequence[Target] | None = None) -> Done:
        """Take one peeled physical line through the full entry path."""
        ...

    def matcher(self, run: Run, rule_i: int, sig_i: int) -> SignatureMatcher:
        """The run's matcher for one signature of one rule."""
        ...


class ScannerView(Protocol):
    """The scanner as the bulk path sees it."""

    a: ScanHost
    literals: list[str]
    by_id: list[Sequence[Target]]
    engine: Engine
    entries: dict[tuple[int, int], int]
    deferred: Any

    def inert(self, t: Target, run: Run) -> bool:
        """Whether a target's effect would leave the run unchanged, whatever the line says."""
        ...
