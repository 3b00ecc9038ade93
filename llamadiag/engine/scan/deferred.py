"""Signature starts held back until a later entry of the signature shows up.

The first entry of some multi-line signatures appears on every request (a draft acceptance
line only matters if a bad `request:` follows within 40 lines). Building a matcher entry for
each would cost most of a long log's time, so the scanner (and the bulk path) keep the last
few raw lines of each such start per run, bounded like the matcher's own partial matches,
and replay them into the matcher, in order, when a later entry of the signature arrives.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from llamadiag.engine.matcher import MAX_PARTIALS

if TYPE_CHECKING:
    from llamadiag.engine.run import Run
    from llamadiag.engine.scan.host import ScanHost

MAX_KEYS = 256  # (run, rule, signature) queues before those of runs no stream continues are dropped


class DeferredStarts:
    """First entries of multi-entry signatures that the bulk path held back, per run and signature."""

    def __init__(self, analyzer: ScanHost) -> None:
        self.a = analyzer
        self.queues: dict[tuple[int, int, int], deque[tuple[int, str]]] = {}

    def __len__(self) -> int:
        return len(self.queues)

    def waiting(self, run: Run, key: tuple[int, int]) -> bool:
        """Are starts of this signature held for this run?"""
        return (run.index, *key) in self.queues

    def add(self, run: Run, key: tuple[int, int], number: int, raw: str) -> None:
        """Hold back a signature's first entry (line `number`, text `raw`) for the run."""
        full_key = (run.index, *key)
        queue = self.queues.get(full_key)
        if queue is None:
            if len(self.queues) >= MAX_KEYS:  # forget runs that no stream continues
                current = {s.run.index for s in self.a.streams.values()}
                self.queues = {k: q for k, q in self.queues.items() if k[0] in current}
            queue = self.queues[full_key] = deque(maxlen=MAX_PARTIALS)
        queue.append((number, raw))

    def replay(self, run: Run, key: tuple[int, int]) -> None:
        """Feed the held starts of a signature to its matcher, in order."""
        queue = self.queues.pop((run.index, *key), None)
        if not queue:
            return
        matcher = self.a.matcher(run, *key)
        for number, raw in queue:
            line, _ = self.a.envelope.peel(number, raw)
            if line is not None:
                matcher.observe(line, {0})
