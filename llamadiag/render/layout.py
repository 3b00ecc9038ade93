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

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

PLAIN_GAP = "  "  # between the columns of a plain table
PLAIN_MAX_COLUMN = 40  # a plain column is at most this wide for alignment; longer cells are kept whole


def is_plain(console: Console) -> bool:
    """Whether the console gets the plain layout (its output is not a terminal)."""
    return not console.is_terminal


def stdout_console() -> Console:
    """The console of a command's standard output. On a terminal: rich's layout at the window's
    width. Otherwise: no colour, and lines are never wrapped or cropped (soft wrap), so the
    plain layout reaches the pipe or file whole."""
    console = Console(highlight=False)
    plain_lines(console)
    return console


def plain_lines(console: Console) -> Console:
    """Let a console that does not write to a terminal print lines whole (no wrap, no crop)."""
    if is_plain(console):
        console.soft_wrap = True
    return console


def _one_line(cell: Any) -> Text:
    """A cell on one line: the lines of a multi-line cell joined by '; '."""
    text = cell if isinstance(cell, Text) else Text(str(cell))
    if "\n" in text.plain:
        text = Text("; ").join(line for line in text.split("\n") if line.plain)
    return text


class Block:
    """A titled block of lines: a panel on a terminal; in a pipe, the title on a line of its own,
    the body indented under it and the subtitle (an id) last, nothing cut."""

    def __init__(
        self,
        body: Sequence[RenderableType],
        title: Text,
        subtitle: Text | None = None,
        border_style: str = "",
    ) -> None:
        self.body = list(body)
        self.title = title
        self.subtitle = subtitle
        self.border_style = border_style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """A panel, or the plain lines."""
        if not is_plain(console):
            yield Panel(
                Group(*self.body),
                title=self.title,
                title_align="left",
                subtitle=self.subtitle,
                border_style=self.border_style,
            )
            return
        yield Text("== " + " ".join(self.title.plain.split()), style="bold")
        for part in self.body:
            if isinstance(part, Text):
                yield from (Text(PLAIN_GAP) + line if line.plain else line for line in part.split("\n"))
            elif isinstance(part, TableView):
                yield from part.plain_lines(indent=PLAIN_GAP)
            elif isinstance(part, Table):  # a rich table built elsewhere: its cells, aligned
                yield from TableView.of(part).plain_lines(indent=PLAIN_GAP)
            else:
                yield part
        if self.subtitle is not None:
            yield Text(PLAIN_GAP + "-- ") + self.subtitle


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
        """Add a row (str or rich Text cells, one per column)."""
        self.rows.append(list(cells))

    def rich_table(self) -> Table:
        """The rich table of the terminal layout."""
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

    def plain_lines(self, indent: str = "") -> Iterable[Text]:
        """The plain layout: the title, a header unless a grid, each row on one line."""
        if self.title is not None:
            yield _one_line(self.title)
        rows = [[_one_line(c) for c in row] for row in self.rows]
        if not self.grid:
            rows.insert(0, [Text(name, style="bold") for name in self.columns])
        widths = [
            min(PLAIN_MAX_COLUMN, max((len(r[i].plain) for r in rows if i < len(r)), default=0))
            for i in range(len(self.columns))
        ]
        for row in rows:
            line = Text(indent)
            for i, cell in enumerate(row):
                pad = " " * max(0, widths[i] - len(cell.plain))
                if self.columns[i] in self.right:
                    line.append(pad)
                    pad = ""
                line.append_text(cell)
                if i < len(row) - 1:
                    line.append(pad + PLAIN_GAP)
            line.rstrip()
            yield line

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The rich table, or the plain lines."""
        if is_plain(console):
            yield from self.plain_lines()
        else:
            yield self.rich_table()
