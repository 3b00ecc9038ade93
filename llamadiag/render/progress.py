"""A progress bar on stderr while a large regular file is read.

Shown only when stderr is a terminal, the source is a regular file of at least
MIN_BYTES, and `--no-progress` was not given: pipes, CI logs and small files stay
silent. Progress is the position in the file as stored (compressed bytes for a .gz).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

MIN_BYTES = 64 << 20


def wanted(source: str, enabled: bool, stream: Any = None) -> int:
    """The file size to show progress for, or 0 for no bar."""
    stream = stream if stream is not None else sys.stderr
    if not enabled or source == "-" or not getattr(stream, "isatty", lambda: False)():
        return 0
    try:
        st = os.stat(source)
    except OSError:
        return 0
    if not os.path.isfile(source) or st.st_size < MIN_BYTES:
        return 0
    return st.st_size


@contextmanager
def bar(source: str, total: int) -> Iterator[Callable[[int], None]]:
    """Yields `update(position)`; a no-op when total is 0."""
    if not total:
        yield lambda _pos: None
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    console = Console(stderr=True)
    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(escape(os.path.basename(source))[:40], total=total)
        yield lambda pos: progress.update(task, completed=pos)
