"""Where a command's output goes: standard output that a closed pipe cannot break, or a file
written in one step (`-o FILE`).

A reader that stops early (`llamadiag explain LOG | head -1`) closes the pipe. Python then
raises BrokenPipeError at the next write and again when it flushes at exit (a traceback, or
"Exception ignored ... BrokenPipeError" and status 120). `quiet_closed_pipe` lets the rest of
the output go nowhere instead, so the command ends with the status of what it did: 1 for a
finding at or above --fail-on, 0 for a healthy log.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


class _PipeSafeStream:
    """A text stream that turns a closed pipe into silence: the file descriptor is pointed at the
    null device and later writes are dropped. Everything else is the wrapped stream's."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.pipe_closed = False

    def write(self, text: str) -> int:
        """Write, unless the reader is gone."""
        if not self.pipe_closed:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        """Flush, unless the reader is gone."""
        if not self.pipe_closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.pipe_closed = True
        # what the stream still buffers would fail again at exit: let it reach the null device
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def quiet_closed_pipe() -> None:
    """Make standard output safe against a reader that closes the pipe early (idempotent)."""
    if not isinstance(sys.stdout, _PipeSafeStream) and sys.stdout is not None:
        sys.stdout = _PipeSafeStream(sys.stdout)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def output_to(path: Path | None) -> Iterator[IO[str]]:
    """Standard output, or a text file written atomically: the output goes to a temporary file
    beside `path`, which replaces `path` only when the command got to the end (a failure leaves
    any earlier file as it was and no partial one)."""
    if path is None:
        yield sys.stdout
        return
    import tempfile  # with shutil and random: only when writing a file (not on every start)

    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            yield out
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; the file gets the usual mode
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
