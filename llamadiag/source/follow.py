"""A live byte source for `watch`: stdin or a file, optionally followed like `tail -F`.

Reads with os.read on the descriptor, so whatever is available is returned at once (a pipe
from `journalctl -f` never waits for a full buffer). When following a file, the end of the
file is polled: a new file under the same name (rotation) is opened and read from its start
after the old one is drained, and a file that shrank (truncation, copytruncate) is read again
from its start. Each of these is reported through `notify`, never silently.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path

from llamadiag.source.reader import InputError

POLL_MIN = 0.001  # seconds between polls right after data arrived
POLL_MAX = 0.1  # ... backing off to this while the file stays quiet

Notify = Callable[[str, str], None]  # (kind, message)


class LiveSource(io.RawIOBase):
    """A raw binary stream over stdin or a file; `follow` keeps reading past the end."""

    def __init__(self, source: str, follow: bool = False, notify: Notify | None = None) -> None:
        super().__init__()
        self.source = source
        self.follow = follow and source != "-"
        self.notify = notify or (lambda kind, message: None)
        self.fd: int | None = None
        self.ident: tuple[int, int] | None = None
        self.pos = 0
        self.last_byte = b"\n"
        self.missing = False
        self.stopping = False  # set by `stop()`: the next read at the end of the data ends the input
        if source == "-":
            self.fd = sys.stdin.fileno()
        elif not self._open(initial=True):
            self.notify("missing", f"{source}: no such file yet; waiting for it to appear")
            self.missing = True

    @property
    def name(self) -> str:
        """The source's display name."""
        return "<stdin>" if self.source == "-" else self.source

    def readable(self) -> bool:
        """Always readable."""
        return True

    def _open(self, initial: bool = False) -> bool:
        path = Path(self.source)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            if initial and not self.follow:
                raise InputError(f"{self.source}: no such file") from None
            return False
        except OSError as exc:
            raise InputError(f"{self.source}: cannot open: {exc.strerror or exc}") from exc
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            os.close(fd)
            raise InputError(f"{self.source}: is a directory, not a log file")
        self.fd, self.ident, self.pos = fd, (st.st_dev, st.st_ino), 0
        return True

    def readinto(self, buffer) -> int:
        """Read what is available into `buffer`; when following, wait for more."""
        delay = POLL_MIN
        while True:
            data = os.read(self.fd, len(buffer)) if self.fd is not None else b""
            if data:
                n = len(data)
                buffer[:n] = data
                self.pos += n
                self.last_byte = data[-1:]
                return n
            if not self.follow or self.stopping:
                return 0
            if self._switched():
                if self.last_byte != b"\n":  # the old file ended mid-line: end that line here
                    buffer[:1] = b"\n"
                    self.last_byte = b"\n"
                    return 1
                continue
            time.sleep(delay)
            delay = min(delay * 2, POLL_MAX)

    def stop(self) -> None:
        """End the input at the end of what is there now (a signal stopped `watch --follow`), so
        the reader hands over a last line that has no newline yet, as at the end of a file."""
        self.stopping = True

    def _switched(self) -> bool:
        """At the end of the data: did the file get replaced or truncated? Reopen if so."""
        try:
            st = os.stat(self.source)
        except FileNotFoundError:
            if not self.missing:
                self.missing = True
                self.notify("missing", f"{self.source} was removed or renamed; waiting for a new file")
            return False
        if self.fd is None or (st.st_dev, st.st_ino) != self.ident:
            if self.fd is not None:
                if os.fstat(self.fd).st_size > self.pos:
                    return True  # the old file grew after our last read: drain it first
                os.close(self.fd)
                self.notify("rotated", f"{self.source} was replaced (rotated); reading the new file from its start")
            elif self.missing:
                self.notify("appeared", f"{self.source} appeared; reading it from its start")
            self.fd, self.missing = None, False
            return self._open()
        if os.fstat(self.fd).st_size < self.pos:
            os.lseek(self.fd, 0, os.SEEK_SET)
            self.notify("truncated", f"{self.source} was truncated; reading it again from its start")
            self.pos = 0
            return True
        return False

    def close(self) -> None:
        """Close the file (stdin stays open)."""
        if self.fd is not None and self.source != "-":
            os.close(self.fd)
            self.fd = None
        super().close()
