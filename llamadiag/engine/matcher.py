"""Multi-entry signature matching with line windows and keyed correlation.

State is bounded: a signature keeps at most MAX_PARTIALS open partial matches, and
partials older than the signature's window are dropped as lines arrive. That keeps
memory flat on endless streams and lets `watch` report a match the moment it completes.

Elisions (where the poster cut lines out of a paste) are not lines of the log: the window
counts the cut lines when the elision says how many, else only the lines shown, and a match
whose lines span an elision is marked `elided` (the reasoning keeps it at likely at most).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llamadiag.engine.envelope import Line
from llamadiag.engine.facts import typed_value

if TYPE_CHECKING:  # the model classes are not built on a start-up cache hit
    import regex

    from llamadiag.knowledge.rulemodel import Signature

MAX_PARTIALS = 32


@dataclass
class Match:
    """A completed signature match: its lines and the values they captured."""

    sig_index: int
    signature: Signature
    lines: list[Line]
    values: dict[str, Any]
    elided: bool = False  # its lines span a cut in the paste: what was cut could change it

    @property
    def first(self) -> int:
        """The number of the match's first line."""
        return self.lines[0].number

    @property
    def last(self) -> int:
        """The number of the match's last physical line."""
        return self.lines[-1].end


@dataclass
class _Partial:
    next: int
    start: int
    lines: list[Line] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)


def _captures(m: regex.Match[str], line: Line) -> dict[str, Any]:
    out = {k: typed_value(v) for k, v in m.groupdict().items() if v is not None}
    if line.slot_id is not None:
        out.setdefault("slot_id", line.slot_id)
        out.setdefault("task_id", line.task_id)
    return out


class SignatureMatcher:
    """Matches one signature's entries in order across lines, within its line window."""

    def __init__(
        self,
        sig_index: int,
        signature: Signature,
        patterns: list[regex.Pattern[str]],
        gaps: list[tuple[int, int | None]] | None = None,
    ) -> None:
        self.sig_index = sig_index
        self.signature = signature
        self.patterns = patterns
        self.partials: list[_Partial] = []
        # elisions of the run, in line order: (line number, lines cut or None when unknown)
        self.gaps: list[tuple[int, int | None]] = gaps if gaps is not None else []

    def span(self, start: int, end: int) -> tuple[int, bool]:
        """Lines from `start` to `end` as the log had them, and whether an elision lies between:
        an elision line stands for the lines it says were cut, or for none when it does not say."""
        distance, cut = end - start, False
        for number, hidden in reversed(self.gaps):
            if number <= start:
                break
            if number < end:
                cut = True
                distance += -1 if hidden is None else hidden - 1
        return distance, cut

    def _done(self, partial: _Partial, line: Line) -> Match:
        elided = bool(self.gaps) and self.span(partial.start, line.end)[1]
        return Match(self.sig_index, self.signature, partial.lines, partial.values, elided)

    def _try(self, partial: _Partial, line: Line, hits: set[int]) -> bool:
        """Advance `partial` over as many entries as this line satisfies."""
        advanced = False
        while partial.next < len(self.patterns) and partial.next in hits:
            entry = self.signature.entries[partial.next]
            if entry.level and line.level and line.level != entry.level:
                break
            m = self.patterns[partial.next].search(line.text)
            if not m:
                break
            values = _captures(m, line)
            if any(k in partial.values and k in values and partial.values[k] != values[k] for k in self.signature.same):
                break
            for k, v in values.items():
                partial.values.setdefault(k, v)
            if not partial.lines or partial.lines[-1] is not line:
                partial.lines.append(line)
            partial.next += 1
            advanced = True
        return advanced

    def observe(self, line: Line, hits: set[int]) -> list[Match]:
        """Advance partial matches with a line (whose entries are `hits`); return the completed matches."""
        window = self.signature.within
        if self.gaps and self.partials:
            self.partials = [p for p in self.partials if self.span(p.start, line.end)[0] <= window]
        else:
            self.partials = [p for p in self.partials if line.end - p.start <= window]
        done: list[Match] = []
        for partial in list(self.partials):
            if self._try(partial, line, hits) and partial.next == len(self.patterns):
                done.append(self._done(partial, line))
                self.partials.remove(partial)
        if 0 in hits:
            partial = _Partial(0, line.number)
            if self._try(partial, line, hits):
                if partial.next == len(self.patterns):
                    done.append(self._done(partial, line))
                else:
                    self.partials.append(partial)
                    if len(self.partials) > MAX_PARTIALS:
                        self.partials.pop(0)
        return done
