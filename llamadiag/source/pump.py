"""Reading a live source in a thread, so `watch` can act when the input goes quiet.

The thread turns bytes into blocks of lines (reader.read_stream: compression, encodings,
over-long lines) and hands them over through a small bounded queue (the reader waits when
the analysis lags, so memory stays flat). Lines that are binary garbage are blanked, not
dropped, so line numbers stay those of the input, and every skip is reported as a Notice.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

from llamadiag.source.follow import LiveSource
from llamadiag.source.reader import MAX_LINE, InputError, ReadReport, read_stream

READ_BLOCK = 1 << 18  # bytes per read at most; a live stream hands over far less at a time
QUEUE_BLOCKS = 4  # at most this many blocks wait for the analysis: memory in flight stays about 1 MiB
BINARY_SHARE = 8  # a line with more than 1/8 undecodable characters is binary data, not text
NOTICE_EVERY = 1.0  # seconds: an ongoing stretch of binary data is reported at most this often


@dataclass
class Block:
    """Lines read from the input."""

    lines: list[str]


@dataclass
class Notice:
    """A message about the input (waiting for a file, a file replaced ...)."""

    kind: str
    message: str
    line: int | None = None


@dataclass
class End:
    """The end of the input, with the error that ended it if any."""

    error: str | None = None  # a problem after some data was read (a corrupt archive ...)
    fatal: bool = False  # nothing could be read at all (no such file, not a text log)
    crash: BaseException | None = None


@dataclass
class _Stretch:
    first: int
    last: int
    chars: int
    since: float


class InputPump:
    """Reads the input on a thread and queues blocks of lines, notices and the end."""

    def __init__(self, source: str, follow: bool = False) -> None:
        self.report = ReadReport(source)
        self.queue: queue.Queue[Block | Notice | End] = queue.Queue(QUEUE_BLOCKS)
        self.source = LiveSource(source, follow, self._notify)
        self.report.name = self.source.name
        self.skipped_lines = 0  # binary lines blanked
        self.cut_lines = 0
        self._stretch: _Stretch | None = None
        self._thread = threading.Thread(target=self._run, name="llamadiag-input", daemon=True)

    def start(self) -> InputPump:
        """Start the reading thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop following: the reader ends at the end of the data read so far (see LiveSource.stop)."""
        self.source.stop()

    def get(self, timeout: float) -> Block | Notice | End | None:
        """The next item, or None when nothing arrived within `timeout` seconds."""
        try:
            return self.queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def info(self) -> dict[str, object]:
        """What was read, for the summary."""
        r = self.report
        return {
            "name": r.name,
            "lines": r.lines,
            "bytes": r.bytes_read,
            "encoding": r.encoding,
            "compression": r.compression,
            "binary_lines_skipped": self.skipped_lines,
            "long_lines_cut": self.cut_lines,
        }

    def _notify(self, kind: str, message: str) -> None:
        self.queue.put(Notice(kind, message, self.report.lines))

    def _run(self) -> None:
        try:
            seen_replaced = 0
            for lines in read_stream(self.source, self.report, READ_BLOCK):  # type: ignore[arg-type]  # a LiveSource is a RawIOBase
                if self.report.replaced_chars != seen_replaced:
                    seen_replaced = self.report.replaced_chars
                    self._blank_binary(lines, self.report.lines - len(lines) + 1)
                elif self._stretch is not None:  # this block starts with text again
                    self._report_stretch(closing=True)
                self.queue.put(Block(lines))
                self._report_cuts()
                self._report_stretch(closing=False)
            self._report_cuts()
            self._report_stretch(closing=True)
            if self.report.ended_mid_line:
                message = "the input ended in the middle of a line; it was analysed as is"
                self.queue.put(Notice("partial_line", message, self.report.lines))
            self.queue.put(End(self.report.error))
        except InputError as exc:
            self.queue.put(End(str(exc), fatal=True))
        except Exception as exc:  # a bug: hand it to the main thread, which shows it
            self.queue.put(End(f"internal error: {exc!r}", fatal=True, crash=exc))

    def _blank_binary(self, lines: list[str], first_number: int) -> None:
        for i, line in enumerate(lines):
            bad = line.count("\ufffd")
            if not bad and not line.strip():
                continue  # blank lines inside binary data neither end nor extend a stretch
            if not bad or bad * BINARY_SHARE <= len(line):
                self._report_stretch(closing=True)  # text again: the stretch before it ended
                continue
            number = first_number + i
            lines[i] = ""
            self.skipped_lines += 1
            stretch = self._stretch
            if stretch is not None and stretch.last >= number - 1:
                stretch.last, stretch.chars = number, stretch.chars + len(line)
            else:
                self._report_stretch(closing=True)
                self._stretch = _Stretch(number, number, len(line), time.monotonic())

    def _report_stretch(self, closing: bool) -> None:
        stretch = self._stretch
        if stretch is None or (not closing and time.monotonic() - stretch.since < NOTICE_EVERY):
            return
        where = f"line {stretch.first}" if stretch.first == stretch.last else f"lines {stretch.first}-{stretch.last}"
        self.queue.put(Notice("binary", f"skipped binary data ({stretch.chars} characters) on {where}", stretch.first))
        self._stretch = None

    def _report_cuts(self) -> None:
        cuts = self.report.cut_lines
        new = cuts[1:] if self.cut_lines else cuts  # the first one kept was announced before
        for number, _ in new:
            self.queue.put(
                Notice(
                    "long_line",
                    f"line {number} is longer than {MAX_LINE // 1024} KiB: analysed its first "
                    f"{MAX_LINE // 1024} KiB, skipped the rest",
                    number,
                )
            )
        self.cut_lines += len(new)
        del cuts[:-1]  # keep only the last (its skipped count may still grow): flat memory
