"""Styled text that does not import rich: the explain report is built from it, so that a report
written to a pipe or a file (the plain layout, no colour) never pays rich's import (~70 ms of a
small log's start-up; docs/performance.md).

It keeps what rich's `Text` keeps — the text, a base style over all of it and styled spans — and
becomes an equal `rich.text.Text` when a rich console renders it (`__rich__`), so the terminal
view is the one rich always drew. Like `Text`, it is never parsed as markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llamadiag.lines import strip_controls

if TYPE_CHECKING:
    from rich.text import Text

# the control codes rich's Text drops from every string it is given (rich.control)
_RICH_STRIPPED = dict.fromkeys((7, 8, 11, 12, 13))


class Styled:
    """A line (or lines) of text with a base style and styled spans, as rich's Text holds them."""

    __slots__ = ("plain", "spans", "style")

    def __init__(self, text: str = "", style: str = "") -> None:
        self.plain = text.translate(_RICH_STRIPPED)
        self.style = style  # over the whole text, as Text(text, style=...)
        self.spans: list[tuple[int, int, str]] = []  # (start, end, style) as Text.append(text, style)

    def append(self, text: str, style: str = "") -> Styled:
        """Add text at the end, styled as a span (rich's `Text.append(str, style)`)."""
        text = text.translate(_RICH_STRIPPED)
        if text:
            start = len(self.plain)
            self.plain += text
            if style:
                self.spans.append((start, len(self.plain), style))
        return self

    def append_text(self, other: Styled) -> Styled:
        """Add another styled text at the end: its base style becomes a span over it, its spans
        move along (rich's `Text.append_text`)."""
        if not other.plain:
            return self
        start = len(self.plain)
        self.plain += other.plain
        if other.style:
            self.spans.append((start, len(self.plain), other.style))
        self.spans += [(s + start, e + start, style) for s, e, style in other.spans]
        return self

    def __add__(self, other: Styled | str) -> Styled:
        """A copy with `other` appended (rich's `Text + Text`)."""
        result = Styled(self.plain, self.style)
        result.spans = list(self.spans)
        return result.append(other) if isinstance(other, str) else result.append_text(other)

    def __rich__(self) -> Text:
        """The equal rich Text, for a rich console."""
        from rich.text import Span, Text

        return Text(self.plain, style=self.style, spans=[Span(s, e, style) for s, e, style in self.spans])

    def __repr__(self) -> str:
        return f"Styled({self.plain!r}, {self.style!r})"


def styled_safe(value: Any) -> Styled:
    """The value as styled text with control characters removed (log text is untrusted)."""
    return Styled(strip_controls(str(value)))


def plain_of(value: Any) -> str:
    """The text of a str, a Styled or a rich Text, without styles."""
    return value if isinstance(value, str) else str(value.plain)
