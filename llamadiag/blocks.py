"""A source as line-aligned blocks of UTF-8 bytes, for the scanning core.

Each block holds whole lines, every one ending with a newline, about BLOCK bytes in
all; nothing is decoded here except to transcode UTF-16 and to count undecodable bytes.
Compression, encodings, binary input and over-long lines are handled as in `reader`
(same ReadReport, same notes), so `explain` says what it had to do to the input.
"""

from __future__ import annotations

import codecs
import io
import sys
from collections.abc import Callable, Iterator
from typing import BinaryIO

from llamadiag.reader import (
    BLOCK,
    MAGIC,
    MAX_LINE,
    InputError,
    ReadReport,
    _decompressor,
    _looks_binary,
    _open_raw,
    _Peekable,
    _read_chunk,
    _sniff_encoding,
)


def read_byte_blocks(
    source: str,
    report: ReadReport | None = None,
    block: int = BLOCK,
    on_block: Callable[[int], None] | None = None,
) -> Iterator[bytes]:
    """Yield blocks of whole lines (UTF-8 bytes, each line ending with b"\\n").
    `on_block(position)` is told how far into the stored file reading has come."""
    raw, name = _open_raw(source)
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


def text_blocks(lines: list[str]) -> bytes:
    """Lines already decoded (a paste, an inline example, a live stream) as one block."""
    if not lines:
        return b""
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


def _head(raw: BinaryIO) -> bytes:
    head = raw.read1(8) if hasattr(raw, "read1") else raw.read(8)  # type: ignore[union-attr]
    while len(head) < 8:
        more = raw.read(8 - len(head))
        if not more:
            break
        head += more
    return head


def _blocks(raw: BinaryIO, report: ReadReport, block: int) -> Iterator[bytes]:
    head = _head(raw)
    stream: BinaryIO = _Peekable(head, raw)  # type: ignore[assignment]
    kind = next((k for magic, k in MAGIC if head.startswith(magic)), None)
    if kind:
        report.compression = kind
        stream = _decompressor(kind, io.BufferedReader(stream))  # type: ignore[arg-type]
    first = _read_chunk(stream, report, block)
    if first is None:
        return
    while len(first) < 64:  # enough to sniff the encoding, without stalling a live stream
        more = _read_chunk(stream, report, block)
        if more is None:
            break
        first += more
    encoding, bom = _sniff_encoding(first)
    if encoding == "utf-8" and _looks_binary(first):
        raise InputError(f"{report.name}: binary data, not a text log")
    report.encoding = encoding
    transcode = None if encoding == "utf-8" else codecs.getincrementaldecoder(encoding)(errors="replace")
    cutter = _LineCutter(report)
    chunk: bytes | None = first[bom:]
    while chunk is not None:
        if transcode is not None:
            text = transcode.decode(chunk)
            report.replaced_chars += text.count("\ufffd")
            chunk = text.encode("utf-8", "surrogatepass")
        out = cutter.feed(chunk)
        if out:
            yield out
        chunk = _read_chunk(stream, report, block)
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
        self.pending = b""
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
        data = self.pending + chunk if self.pending else chunk
        cut = data.rfind(b"\n") + 1
        out, self.pending = data[:cut], data[cut:]
        if len(self.pending) > MAX_LINE:
            head = _utf8_head(self.pending, MAX_LINE)
            report.cut_lines.append((report.lines + out.count(b"\n") + 1, len(self.pending) - len(head)))
            out += head + b"\n"
            self.pending, self.skipping = b"", True
        report.lines += out.count(b"\n")
        if out and not out.isascii():
            self.replaced += out.decode("utf-8", "replace").count("\ufffd")
        return out

    def _skipped(self, n: int) -> None:
        line, skipped = self.report.cut_lines[-1]
        self.report.cut_lines[-1] = (line, skipped + n)

    def finish(self) -> bytes:
        if not self.pending or self.skipping:
            return b""
        out, self.pending = self.pending + b"\n", b""
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
