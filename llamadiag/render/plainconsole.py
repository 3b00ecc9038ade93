"""The console of a report written to a pipe or a file, without rich.

Where the output is not a terminal, rich prints the plain layout (render/layout.py): whole
lines, no colour, no box. That is text and newlines, so this console writes it itself and
`explain` in a pipe never imports rich (~70 ms of a small log's start-up). Anything it cannot
write exactly as rich would (a tab, which rich expands by display width; a str, which rich reads
as markup; another renderable) goes to a rich console made on first use with the same settings,
so the output is the same bytes either way (tests/render/test_plain_console.py).
"""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING, Any

from llamadiag.render.layout import Block, TableView
from llamadiag.render.styled import Styled

if TYPE_CHECKING:
    from rich.console import Console

# environment variables by which rich treats a file that is not a terminal as one
_RICH_TERMINAL_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE")


def writes_plain(file: IO[str]) -> bool:
    """Whether rich would give `file` the plain layout: it is not a terminal and nothing in the
    environment tells rich otherwise."""
    if any(name in os.environ for name in _RICH_TERMINAL_ENV):
        return False
    try:
        return not file.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file: rich says not a terminal
        return True


class PlainConsole:
    """Prints the plain layout of styled text, blocks and tables straight to a file; hands
    everything else to a rich console with the same settings (made when first needed)."""

    is_terminal = False

    def __init__(self, file: IO[str], **rich_options: Any) -> None:
        self.file = file
        self.soft_wrap = True
        self._rich_options = rich_options
        self._rich: Console | None = None

    def print(self, *objects: Any, style: str | None = None) -> None:
        """Print one object as its plain lines (the style does not show without a terminal)."""
        lines = _plain_lines(objects[0]) if len(objects) == 1 else None
        if lines is None or any("\t" in line for line in lines):
            self.rich().print(*objects, style=style)
            return
        self.file.write("".join(line + "\n" for line in lines))
        self.file.flush()  # as rich does after each print: stderr and stdout keep their order

    def rich(self) -> Console:
        """The rich console this one stands for (plain lines: soft wrap)."""
        if self._rich is None:
            from rich.console import Console

            self._rich = Console(file=self.file, **self._rich_options)
            self._rich.soft_wrap = True
        return self._rich

    def __getattr__(self, name: str) -> Any:
        # what else a caller asks of a console (its width, colour system ...): rich's answer
        return getattr(self.rich(), name)


def _plain_lines(obj: object) -> list[str] | None:
    """The lines rich would print for `obj` on a console that is not a terminal; None when only
    rich can say."""
    if isinstance(obj, Styled):
        return [obj.plain]
    if isinstance(obj, str):
        return [obj] if "[" not in obj and ":" not in obj else None  # else markup or an emoji code
    if isinstance(obj, TableView):
        return obj.plain_lines()
    if isinstance(obj, Block):
        items = list(obj.plain_items())
        return items if all(isinstance(item, str) for item in items) else None  # type: ignore[return-value]
    return None
