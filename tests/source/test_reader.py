"""Reading what users have: compressed, UTF-16, CRLF, huge lines, binary, broken archives."""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
from pathlib import Path

import pytest
import zstandard

from llamadiag.source.reader import MAX_LINE, InputError, ReadReport, read_blocks

LOG = "srv  load_model: loading model '/m/x.gguf'\nE srv        decode: failed to process speculative batch\n"


def lines_of(path: Path, report: ReadReport | None = None) -> list[str]:
    return [line for block in read_blocks(str(path), report) for line in block]


@pytest.mark.parametrize(
    "name,packer",
    [
        ("plain.log", lambda b: b),
        ("x.gz", gzip.compress),
        ("x.bz2", bz2.compress),
        ("x.xz", lzma.compress),
        ("x.zst", lambda b: zstandard.ZstdCompressor().compress(b)),
        ("renamed.txt", gzip.compress),  # magic bytes, not the extension, decide
    ],
)
def test_compression_by_magic(tmp_path: Path, name: str, packer) -> None:
    path = tmp_path / name
    path.write_bytes(packer(LOG.encode()))
    assert lines_of(path) == LOG.splitlines()


@pytest.mark.parametrize(
    "encoding,bom",
    [
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-16-le", b""),
        ("utf-8", codecs.BOM_UTF8),
    ],
)
def test_utf16_and_boms(tmp_path: Path, encoding: str, bom: bytes) -> None:
    path = tmp_path / "ps.log"
    path.write_bytes(bom + LOG.replace("\n", "\r\n").encode(encoding))
    assert lines_of(path) == LOG.splitlines()


def test_invalid_utf8_is_replaced_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(b"srv  x: caf\xe9 \xff\xfe ok\n" + LOG.encode())
    report = ReadReport(str(path))
    out = lines_of(path, report)
    assert out[1:] == LOG.splitlines() and report.replaced_chars >= 2


def test_cr_redraws_keep_the_last(tmp_path: Path) -> None:
    path = tmp_path / "cr.log"
    path.write_bytes(b"progress 10%\rprogress 50%\rprogress 100%\r\n\rprompt eval time =  1.0 ms\n")
    assert lines_of(path) == ["progress 100%", "prompt eval time =  1.0 ms"]


def test_huge_line_is_cut_not_held(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as fh:
        fh.write(b"first\n")
        chunk = b"x" * (1 << 20)
        for _ in range(50):
            fh.write(chunk)
        fh.write(b"\nlast line\n")
    report = ReadReport(str(path))
    out = lines_of(path, report)
    assert out[0] == "first" and out[-1] == "last line" and len(out) == 3
    assert len(out[1]) == MAX_LINE
    assert report.cut_lines and report.cut_lines[0][1] == 50 * (1 << 20) - MAX_LINE


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    body = ("srv  update_slots: all slots are idle\n" * 20000 + LOG).encode()
    packed = gzip.compress(body)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(packed[: len(packed) // 2])
    report = ReadReport(str(path))
    out = lines_of(path, report)
    assert 0 < len(out) < 20002
    assert report.error and "truncated" in report.error


@pytest.mark.parametrize("keep", [0.5, 0.7])
def test_truncated_zstd_keeps_what_was_read_and_says_it_was_cut(tmp_path: Path, keep: float) -> None:
    body = ("srv  update_slots: all slots are idle\n" * 20000 + LOG).encode()
    packed = zstandard.ZstdCompressor().compress(body)  # several 128 KiB blocks
    path = tmp_path / "cut.log.zst"
    path.write_bytes(packed[: int(len(packed) * keep)])
    report = ReadReport(str(path))
    out = lines_of(path, report)
    assert 0 < len(out) < 20002
    assert report.error and "truncated" in report.error


def test_truncated_small_zstd_is_an_error_not_an_empty_input(tmp_path: Path) -> None:
    packed = zstandard.ZstdCompressor().compress(LOG.encode())  # one block: nothing decodes
    path = tmp_path / "half.log.zst"
    path.write_bytes(packed[: len(packed) // 2])
    report = ReadReport(str(path))
    assert lines_of(path, report) == [] and report.error and "truncated" in report.error


def test_zstd_frames_are_all_read_and_a_bomb_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "two.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(LOG.encode()) * 2)
    report = ReadReport(str(path))
    assert lines_of(path, report) == LOG.splitlines() * 2 and report.error is None
    bomb = tmp_path / "bomb.zst"
    bomb.write_bytes(zstandard.ZstdCompressor().compress(b"x" * 200_000_000))  # one 200 MB line
    report = ReadReport(str(bomb))
    blocks = read_blocks(str(bomb), report)
    assert len(next(blocks)[0]) == MAX_LINE and report.cut_lines


def test_binary_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(range(256)) * 40)
    with pytest.raises(InputError, match="binary"):
        lines_of(path)


def test_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        lines_of(tmp_path / "nope.log")
    with pytest.raises(InputError, match="directory"):
        lines_of(tmp_path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    assert lines_of(path) == []


def test_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    path.write_bytes(b"a\nb")
    assert lines_of(path) == ["a", "b"]
