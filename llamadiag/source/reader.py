"""Turning a source (file, '-', compressed, UTF-16) into blocks of whole text lines.

Memory stays bounded: data is read in blocks, and a line longer than MAX_LINE is cut
(its head kept, the rest skipped and counted) instead of being held whole.
"""

from __future__ import annotations

import codecs
import io
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from llamadiag.lines import clean_line

BLOCK = 1 << 20
MAX_LINE = 1 << 20

MAGIC = [
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
]


class InputError(Exception):
    """Input that cannot be read at all; the message is one line for stderr."""


@dataclass
class ReadReport:
    """What the reader had to do to the input; shown to the user, never silent."""

    name: str
    compression: str | None = None
    encoding: str = "utf-8"
    bytes_read: int = 0
    lines: int = 0
    cut_lines: list[tuple[int, int]] = field(default_factory=list)  # (line, bytes skipped)
    replaced_chars: int = 0
    error: str | None = None  # a problem after some data was read (truncated archive ...)
    ended_mid_line: bool = False  # the text did not end with a newline (a cut paste, a stream stopped mid-line)

    def notes(self) -> list[str]:
        """Notes for the user on what the reader did to the input."""
        out = []
        for line, skipped in self.cut_lines[:5]:
            out.append(f"line {line} is too long: kept its first {MAX_LINE // 1024} KiB, skipped {skipped} bytes")
        if len(self.cut_lines) > 5:
            out.append(f"{len(self.cut_lines) - 5} more over-long lines were cut")
        if self.replaced_chars:
            out.append(f"{self.replaced_chars} undecodable bytes were replaced (binary data or a wrong encoding)")
        if self.error:
            out.append(self.error)
        return out


def open_raw(source: str) -> tuple[BinaryIO, str]:
    """Open a path, or stdin for "-": the binary stream and its display name."""
    if source == "-":
        return sys.stdin.buffer, "<stdin>"
    path = Path(source)
    if path.is_dir():
        raise InputError(f"{source}: is a directory, not a log file")
    try:
        return path.open("rb"), source
    except FileNotFoundError as exc:
        raise InputError(f"{source}: no such file") from exc
    except OSError as exc:
        raise InputError(f"{source}: cannot open: {exc.strerror or exc}") from exc


class _Peekable(io.RawIOBase):
    """A stream whose first bytes were read to sniff its type."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self.head, self.rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.rest.read1(len(buffer)) if hasattr(self.rest, "read1") else self.rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _decompressor(kind: str, raw: BinaryIO) -> BinaryIO:
    # each library imported for its kind only: a plain log's start-up imports none (~3 ms)
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]  # a BufferedIOBase, read as BinaryIO
    if kind == "bz2":
        import bz2

        return bz2.BZ2File(raw)  # type: ignore[return-value]  # a BufferedIOBase, read as BinaryIO
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(raw)  # type: ignore[return-value]  # a BufferedIOBase, read as BinaryIO
    try:
        import zstandard
    except ImportError as exc:  # pragma: no cover - dependency is declared
        raise InputError("zstd-compressed input needs the 'zstandard' package") from exc
    return _ZstdStream(zstandard.ZstdDecompressor(), raw)  # type: ignore[return-value]  # read as BinaryIO


class _ZstdStream:
    """Zstandard frames decompressed as they are read; an input that ends inside a frame raises
    EOFError, as gzip and xz do (zstandard's stream reader ends silently there).

    The compressed input is fed FEED bytes at a time, so one call produces at most about
    FEED / 4 blocks of 128 KiB (a compression bomb stays bounded in memory)."""

    FEED = 256

    def __init__(self, dctx: Any, raw: BinaryIO) -> None:
        self.dctx = dctx
        self.raw = raw
        self.obj = dctx.decompressobj()
        self.started = False  # the current frame has consumed input
        self.pending = b""  # compressed bytes read but not yet fed
        self.done = False

    def read1(self, size: int = -1) -> bytes:
        """About `size` decompressed bytes or more, bounded (b"" at the end of the input)."""
        want = size if size > 0 else 1 << 20
        out: list[bytes] = []
        got = 0
        while got < want and not self.done:
            if not self.pending:
                self.pending = self.raw.read(1 << 16)
                if not self.pending:
                    self.done = True
                    break
            piece, self.pending = self.pending[: self.FEED], self.pending[self.FEED :]
            self.started = True
            data = self.obj.decompress(piece)
            if self.obj.eof:  # a frame ended: what follows is the next frame
                self.pending = self.obj.unused_data + self.pending
                self.obj = self.dctx.decompressobj()
                self.started = False
            if data:
                out.append(data)
                got += len(data)
        if not out and self.done and self.started:  # after the last complete data was returned
            self.started = False
            raise EOFError("zstd input ended inside a frame")
        return b"".join(out)

    read = read1

    def close(self) -> None:
        """Close the compressed input."""
        self.raw.close()


def _sniff_encoding(head: bytes) -> tuple[str, int]:
    """Encoding and BOM length; UTF-16 without a BOM is recognised by its NUL pattern."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    sample = head[:4096]
    if len(sample) >= 16:
        odd_nul = sample[1::2].count(0) / (len(sample) // 2)
        even_nul = sample[0::2].count(0) / (len(sample) // 2)
        if odd_nul > 0.4 and even_nul < 0.05:
            return "utf-16-le", 0
        if even_nul > 0.4 and odd_nul < 0.05:
            return "utf-16-be", 0
    return "utf-8", 0


def _looks_binary(head: bytes) -> bool:
    """Mostly control characters or undecodable bytes: a model file, an image, an archive."""
    sample = head[:8192]
    if not sample:
        return False
    text = sample.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") + sum(1 for ch in text if ch < " " and ch not in "\t\n\r\x1b")
    return bad / len(text) > 0.1


def read_blocks(source: str, report: ReadReport | None = None, block: int = BLOCK) -> Iterator[list[str]]:
    """Yield lists of physical lines (without newline) from a source, in order."""
    raw, name = open_raw(source)
    report = report or ReadReport(name)
    report.name = name
    try:
        yield from _read(raw, report, block)
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()


def read_stream(raw: BinaryIO, report: ReadReport, block: int = BLOCK) -> Iterator[list[str]]:
    """Blocks of lines from an open binary stream (a followed file, a pipe), read as data arrives."""
    yield from _read(raw, report, block)


def read_bytes(data: bytes, report: ReadReport, block: int = BLOCK) -> Iterator[list[str]]:
    """Blocks from bytes held in memory (a paste), with the same checks as a file: binary
    refused, compression and encoding sniffed, over-long lines cut."""
    yield from _read(io.BytesIO(data), report, block)


def read_text(text: str) -> Iterator[list[str]]:
    """Blocks from text already in memory (a paste, an inline example)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i in range(0, len(lines), 4096):
        yield [clean_line(line) for line in lines[i : i + 4096]]


def open_stream(raw: BinaryIO, report: ReadReport, block: int) -> tuple[BinaryIO, bytes] | None:
    """Decompress by magic bytes, sniff the encoding (set in the report) and refuse binary
    data. Returns the stream and its first chunk (BOM removed), or None when empty."""
    head = raw.read(8) if not hasattr(raw, "read1") else raw.read1(8)
    while len(head) < 8:
        more: bytes | None = raw.read(8 - len(head))
        if not more:
            break
        head += more
    stream: BinaryIO = _Peekable(head, raw)  # type: ignore[assignment]  # a RawIOBase, read as BinaryIO
    kind = next((k for magic, k in MAGIC if head.startswith(magic)), None)
    if kind:
        report.compression = kind
        stream = _decompressor(kind, io.BufferedReader(stream))  # type: ignore[type-var]  # a _Peekable, a RawIOBase typed as BinaryIO
    first = read_chunk(stream, report, block)
    if first is None:
        return None
    while len(first) < 64:  # enough to sniff the encoding, without stalling a live stream
        more = read_chunk(stream, report, block)
        if more is None:
            break
        first += more
    encoding, bom = _sniff_encoding(first)
    if encoding == "utf-8" and _looks_binary(first):
        raise InputError(f"{report.name}: binary data, not a text log")
    report.encoding = encoding
    return stream, first[bom:]


def _read(raw: BinaryIO, report: ReadReport, block: int) -> Iterator[list[str]]:
    opened = open_stream(raw, report, block)
    if opened is None:
        return
    stream, first = opened
    encoding = report.encoding
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    pieces: list[str] = []  # the unfinished last line, in pieces: linear however small the reads
    size = 0
    skipping = False
    chunk: bytes | None = first
    while chunk is not None:
        text = decoder.decode(chunk)
        report.replaced_chars += text.count("\ufffd")
        out: list[str] = []
        if "\n" in text:
            lines = text.split("\n")
            lines[0] = "".join(pieces) + lines[0]
            tail = lines.pop()
            pieces, size = ([tail], len(tail)) if tail else ([], 0)
            for line in lines:
                if skipping:
                    report.cut_lines[-1] = (report.cut_lines[-1][0], report.cut_lines[-1][1] + len(line))
                    skipping = False
                    continue
                out.append(clean_line(line))
        elif text:
            pieces.append(text)
            size += len(text)
        if size > MAX_LINE:
            pending = "".join(pieces)
            out.append(clean_line(pending[:MAX_LINE]))
            report.cut_lines.append((report.lines + len(out), len(pending) - MAX_LINE))
            pieces, size, skipping = [], 0, True
        elif skipping and size:
            report.cut_lines[-1] = (report.cut_lines[-1][0], report.cut_lines[-1][1] + size)
            pieces, size = [], 0
        report.lines += len(out)
        if out:
            yield out
        chunk = read_chunk(stream, report, block)
    pending = "".join(pieces) + decoder.decode(b"", final=True)
    if pending and not skipping:
        report.lines += 1
        report.ended_mid_line = True
        yield [clean_line(pending)]


def _read_errors() -> tuple[type[Exception], ...]:
    """What reading a broken archive raises (looked up on an error: zlib and lzma are imported
    only for a compressed input)."""
    import lzma
    import zlib

    return (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)


def read_chunk(stream: BinaryIO, report: ReadReport, block: int) -> bytes | None:
    """Read what is available (up to a block); None at the end or after a broken archive."""
    try:
        data = stream.read1(block) if hasattr(stream, "read1") else stream.read(block)
    except _read_errors() as exc:
        kind = report.compression or "input"
        report.error = (
            f"{report.name}: {kind} data is corrupt or truncated after "
            f"{report.bytes_read} decompressed bytes ({exc.__class__.__name__}); "
            "the lines before that point were analysed"
        )
        return None
    except Exception as exc:  # zstandard raises its own ZstdError
        if exc.__class__.__name__ != "ZstdError":
            raise
        report.error = f"{report.name}: zstd data is corrupt or truncated after {report.bytes_read} bytes"
        return None
    if not data:
        return None
    report.bytes_read += len(data)
    return data
