"""Two layouts of one view: rich panels and tables on a terminal, plain lines in a pipe or file.

On a terminal, rich fits everything to the window (panels, wrapped table cells). Behind a pipe
the width is a guess (80 columns), and fitting to it cuts titles, ids and values (`seve…`), so
a view that is not shown on a terminal is printed as plain lines that are never cut or wrapped:
a titled block becomes a title line and indented body lines, a table becomes aligned columns
(a cell longer than its column pushes the rest of its row along instead of being cut).

`stdout_console()` is the console of a command's output; `Block` and `TableView` choose their
layout when printed, by the console they are printed on.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from llamadiag.render.styled import plain_of

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
    from rich.table import Table
    from rich.text import Text

PLAIN_GAP = "  "  # between the columns of a plain table
PLAIN_MAX_COLUMN = 40  # a plain column is at most this wide for alignment; longer cells are kept whole


class Printer(Protocol):
    """What the views print on: a rich Console, or render.plainconsole.PlainConsole."""

    @property
    def is_terminal(self) -> bool:
        """Whether the output is a terminal (the rich layout) or not (the plain one)."""

    soft_wrap: bool

    def print(self, *objects: Any, style: str | None = None) -> None:
        """Print the objects, a line each."""


def is_plain(console: Printer) -> bool:
    """Whether the console gets the plain layout (its output is not a terminal)."""
    return not console.is_terminal


def stdout_console() -> Console:
    """The console of a command's standard output. On a terminal: rich's layout at the window's
    width. Otherwise: no colour, and lines are never wrapped or cropped (soft wrap), so the
    plain layout reaches the pipe or file whole."""
    from rich.console import Console

    console = Console(highlight=False)
    plain_lines(console)
    return console


PrinterT = TypeVar("PrinterT", bound=Printer)


def plain_lines(console: PrinterT) -> PrinterT:
    """Let a console that does not write to a terminal print lines whole (no wrap, no crop)."""
    if is_plain(console):
        console.soft_wrap = True
    return console


def text_lines(text: str) -> list[str]:
    """The lines of a text as rich splits a Text on newlines (a final newline ends the last line
    instead of starting an empty one)."""
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    return lines


def _one_line(cell: Any) -> str:
    """A cell on one line: the lines of a multi-line cell joined by '; '."""
    text = plain_of(cell)
    return "; ".join(line for line in text_lines(text) if line) if "\n" in text else text


def _is_rich_table(part: object) -> bool:
    """Whether `part` is a rich Table (never, unless something imported rich's tables)."""
    tables = sys.modules.get("rich.table")
    return tables is not None and isinstance(part, tables.Table)


def _rich_title(title: Any) -> Any:
    """A panel's title as rich takes it: a str (read as markup, as always) or a rich Text."""
    return title.__rich__() if hasattr(title, "__rich__") else title


def _to_rich(item: object) -> RenderableType:
    """A plain line as rich Text (never parsed as markup); anything else as it is."""
    from rich.text import Text

    return Text(item) if isinstance(item, str) else item  # type: ignore[return-value]  # a renderable


class Block:
    """A titled block of lines: a panel on a terminal; in a pipe, the title on a line of its own,
    the body indented under it and the subtitle (an id) last, nothing cut."""

    def __init__(
        self,
        body: Sequence[Any],
        title: Any,
        subtitle: Any | None = None,
        border_style: str = "",
    ) -> None:
        self.body = list(body)  # texts (str, Styled, rich Text), TableViews, rich renderables
        self.title = title
        self.subtitle = subtitle
        self.border_style = border_style

    def plain_items(self) -> Iterator[object]:
        """The plain layout: lines (str), and any body part that is neither text nor a table as
        it is (only a rich console can print that)."""
        yield "== " + " ".join(plain_of(self.title).split())
        for part in self.body:
            if hasattr(part, "plain"):  # Styled or rich Text (a str part stays a renderable: markup)
                yield from (PLAIN_GAP + line if line else line for line in text_lines(plain_of(part)))
            elif isinstance(part, TableView):
                yield from part.plain_lines(indent=PLAIN_GAP)
            elif _is_rich_table(part):  # a rich table built elsewhere: its cells, aligned
                yield from TableView.of(part).plain_lines(indent=PLAIN_GAP)
            else:
                yield part
        if self.subtitle is not None:
            yield PLAIN_GAP + "-- " + plain_of(self.subtitle)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """A panel, or the plain lines."""
        if not is_plain(console):
            from rich.console import Group
            from rich.panel import Panel

            yield Panel(
                Group(*self.body),
                title=_rich_title(self.title),
                title_align="left",
                subtitle=_rich_title(self.subtitle),
                border_style=self.border_style,
            )
            return
        yield from map(_to_rich, self.plain_items())


class TableView:
    """A table: rich's table on a terminal; in a pipe, aligned plain columns that never cut a
    cell (a header line unless `grid`). Used by explain, facts, watch's summary, rules list."""

    def __init__(
        self,
        columns: Sequence[str],
        title: str | Text | None = None,
        grid: bool = False,
        styles: Sequence[str] | None = None,
        no_wrap: Sequence[str] = (),
        right: Sequence[str] = (),
    ) -> None:
        self.columns = list(columns)
        self.title = title
        self.grid = grid
        self.styles = list(styles) if styles else [""] * len(self.columns)
        self.no_wrap = set(no_wrap)
        self.right = set(right)  # right-justified columns (numbers)
        self.rows: list[list[Any]] = []

    @classmethod
    def of(cls, table: Table) -> TableView:
        """The view of a rich table (its columns, cells and right-justified columns)."""
        from rich.text import Text

        names = [str(c.header) or f"column {i}" for i, c in enumerate(table.columns)]
        view = cls(
            names,
            table.title if isinstance(table.title, str | Text) else None,
            grid=not table.show_header,
            right=[n for n, c in zip(names, table.columns, strict=True) if c.justify == "right"],
        )
        for row in zip(*(list(c.cells) for c in table.columns), strict=True):
            view.add_row(*row)
        return view

    def add_row(self, *cells: Any) -> None:
        """Add a row (str, Styled or rich Text cells, one per column)."""
        self.rows.append(list(cells))

    def rich_table(self) -> Table:
        """The rich table of the terminal layout."""
        from rich.table import Table

        table = Table.grid(padding=(0, 1)) if self.grid else Table(title=self.title, title_justify="left")
        for name, style in zip(self.columns, self.styles, strict=True):
            table.add_column(
                "" if self.grid else name,
                style=style or None,
                no_wrap=name in self.no_wrap,
                justify="right" if name in self.right else "left",
            )
        for row in self.rows:
            table.add_row(*row)
        return table

    def plain_lines(self, indent: str = "") -> list[str]:
        """The plain layout: the title, a header unless a grid, each row on one line."""
        lines = [] if self.title is None else [_one_line(self.title)]
        rows = [[_one_line(c) for c in row] for row in self.rows]
        if not self.grid:
            rows.insert(0, list(self.columns))
        widths = [
            min(PLAIN_MAX_COLUMN, max((len(r[i]) for r in rows if i < len(r)), default=0))
            for i in range(len(self.columns))
        ]
        for row in rows:
            line = indent
            for i, cell in enumerate(row):
                pad = " " * max(0, widths[i] - len(cell))
                if self.columns[i] in self.right:
                    line += pad
                    pad = ""
                line += cell
                if i < len(row) - 1:
                    line += pad + PLAIN_GAP
            lines.append(line.rstrip())
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The rich table, or the plain lines."""
        if is_plain(console):
            yield from map(_to_rich, self.plain_lines())
        else:
            yield self.rich_table()
