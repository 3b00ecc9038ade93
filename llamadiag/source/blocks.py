"""A source as line-aligned blocks of UTF-8 bytes, for the scanning core.

Each block holds whole lines, every one ending with a newline, about BLOCK bytes in
all; nothing is decoded here except to transcode UTF-16 and to count undecodable bytes.
Compression, encodings, binary input and over-long lines are handled as in `reader`
(same ReadReport, same notes), so `explain` says what it had to do to the input.
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Callable, Iterator
from typing import BinaryIO

from llamadiag.source.reader import BLOCK, MAX_LINE, ReadReport, open_raw, open_stream, read_chunk


def read_byte_blocks(
    source: str,
    report: ReadReport | None = None,
    block: int = BLOCK,
    on_block: Callable[[int], None] | None = None,
) -> Iterator[bytes]:
    """Yield blocks of whole lines (UTF-8 bytes, each line ending with b"\\n").
    `on_block(position)` is told how far into the stored file reading has come."""
    raw, name = open_raw(source)
    report = report or ReadReport(name)
    report.name = name
    try:
        for out in _blocks(raw, report, block):
            if on_block is not None and raw.seekable():
                on_block(raw.tell())
            yield out
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()



def _blocks(raw: BinaryIO, report: ReadReport, block: int) -> Iterator[bytes]:
    opened = open_stream(raw, report, block)
    if opened is None:
        return
    stream, chunk_first = opened
    encoding = report.encoding
    transcode = None if encoding == "utf-8" else codecs.getincrementaldecoder(encoding)(errors="replace")
    cutter = _LineCutter(report)
    chunk: bytes | None = chunk_first
    while chunk is not None:
        if transcode is not None:
            text = transcode.decode(chunk)
            report.replaced_chars += text.count("\ufffd")
            chunk = text.encode("utf-8", "surrogatepass")
        out = cutter.feed(chunk)
        if out:
            yield out
        chunk = read_chunk(stream, report, block)
    if transcode is not None:
        tail = transcode.decode(b"", final=True)
        report.replaced_chars += tail.count("\ufffd")
        out = cutter.feed(tail.encode("utf-8", "surrogatepass"))
        if out:
            yield out
    out = cutter.finish()
    if out:
        yield out
    if transcode is None:
        report.replaced_chars = cutter.replaced


class _LineCutter:
    """Turns chunks into line-aligned blocks; cuts lines longer than MAX_LINE bytes."""

    def __init__(self, report: ReadReport) -> None:
        self.report = report
        self.parts: list[bytes] = []  # the unfinished last line, in pieces: joined once, not per chunk
        self.size = 0
        self.skipping = False  # inside the skipped tail of an over-long line
        self.replaced = 0

    def feed(self, chunk: bytes) -> bytes:
        report = self.report
        if self.skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                self._skipped(len(chunk))
                return b""
            self._skipped(nl)
            chunk = chunk[nl + 1 :]
            self.skipping = False
        if not chunk:
            return b""
        if b"\n" not in chunk and self.size + len(chunk) <= MAX_LINE:
            self.parts.append(chunk)
            self.size += len(chunk)
            return b""
        data = b"".join([*self.parts, chunk]) if self.parts else chunk
        cut = data.rfind(b"\n") + 1
        out, pending = data[:cut], data[cut:]
        self.parts, self.size = ([pending], len(pending)) if pending else ([], 0)
        if len(pending) > MAX_LINE:
            head = _utf8_head(pending, MAX_LINE)
            report.cut_lines.append((report.lines + out.count(b"\n") + 1, len(pending) - len(head)))
            out += head + b"\n"
            self.parts, self.size, self.skipping = [], 0, True
        report.lines += out.count(b"\n")
        if out and not out.isascii():
            self.replaced += out.decode("utf-8", "replace").count("\ufffd")
        return out

    def _skipped(self, n: int) -> None:
        line, skipped = self.report.cut_lines[-1]
        self.report.cut_lines[-1] = (line, skipped + n)

    def finish(self) -> bytes:
        if not self.size or self.skipping:
            return b""
        out, self.parts = b"".join(self.parts) + b"\n", []
        self.report.lines += 1
        if not out.isascii():
            self.replaced += out.decode("utf-8", "replace").count("\ufffd")
        return out


def _utf8_head(data: bytes, limit: int) -> bytes:
    """At most `limit` bytes of data, not ending inside a UTF-8 character."""
    head = data[:limit]
    end = len(head)
    j = end
    while j > 0 and end - j < 3 and (head[j - 1] & 0xC0) == 0x80:
        j -= 1
    if j > 0 and head[j - 1] >= 0xC0:
        lead = head[j - 1]
        need = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if end - (j - 1) < need:
            return head[: j - 1]
    return head
