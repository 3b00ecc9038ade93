"""A large plain log file as byte ranges of whole lines, read apart (by several processes).

Only a regular, uncompressed UTF-8 file without a byte-order mark can be split: a range of a
compressed or UTF-16 file cannot be read without what comes before it, and standard input
cannot be read twice. Each range is read as `blocks.read_byte_blocks` reads the whole file
(same line cutting, same counting of undecodable bytes), with its lines numbered after those
before it; `merge_reads` gives the account one reader would have given.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from llamadiag.source.blocks import _LineCutter
from llamadiag.source.reader import BLOCK, ReadReport, open_raw, open_stream

COUNT_CHUNK = 8 << 20


def splittable_size(source: str) -> int | None:
    """The size of `source` when it is a regular, uncompressed UTF-8 file without a BOM (the
    only kind read in ranges), else None. Binary data raises InputError, as reading it would."""
    if source == "-" or not Path(source).is_file():
        return None
    raw, name = open_raw(source)
    with raw:
        report = ReadReport(name)
        opened = open_stream(raw, report, 1 << 16)
        if opened is None or report.compression is not None or report.encoding != "utf-8":
            return None
        _, first = opened
        if first != _head(source, len(first)):  # a byte-order mark was removed
            return None
    return os.path.getsize(source)


def _head(source: str, n: int) -> bytes:
    with open(source, "rb") as f:
        return f.read(n)


def newlines_before(source: str, end: int) -> int:
    """How many lines end before byte `end` (a line start)."""
    count = 0
    with open(source, "rb") as f:
        left = end
        while left > 0:
            chunk = f.read(min(COUNT_CHUNK, left))
            if not chunk:
                break
            count += chunk.count(b"\n")
            left -= len(chunk)
    return count


def window(source: str, offset: int, limit: int) -> tuple[int, bytes]:
    """The offset of the first line start at or after `offset`, and the whole lines from there
    within `limit` bytes."""
    with open(source, "rb") as f:
        start = max(offset - 1, 0)
        f.seek(start)
        data = f.read(limit + (offset - start))
    skip = data.find(b"\n") + 1 if offset > 0 else 0  # the byte before `offset` tells where a line starts
    if offset > 0 and skip == 0:
        return offset, b""
    data = data[skip : data.rfind(b"\n") + 1]
    return start + skip, data


def read_range(source: str, start: int, end: int) -> tuple[int, Iterator[bytes], ReadReport]:
    """The lines before byte `start`, the blocks of whole lines of [start, end) and the
    reader's account of them (filled as the blocks are read; its line numbers absolute)."""
    base = newlines_before(source, start) if start else 0
    report = ReadReport(source)
    report.lines = base
    return base, _range_blocks(source, start, end, report), report


def _range_blocks(source: str, start: int, end: int, report: ReadReport) -> Iterator[bytes]:
    cutter = _LineCutter(report)
    with open(source, "rb") as f:
        f.seek(start)
        left = end - start
        while left > 0:
            chunk = f.read(min(BLOCK, left))
            if not chunk:
                break
            left -= len(chunk)
            report.bytes_read += len(chunk)
            out = cutter.feed(chunk)
            if out:
                yield out
    out = cutter.finish()
    if out:
        yield out
    report.replaced_chars = cutter.replaced


def merge_reads(name: str, reads: list[ReadReport]) -> ReadReport:
    """One reader's account of the whole file from the accounts of its ranges, in order."""
    merged = ReadReport(name)
    for read in reads:
        merged.bytes_read += read.bytes_read
        merged.cut_lines.extend(read.cut_lines)
        merged.replaced_chars += read.replaced_chars
        merged.lines = read.lines
    return merged
