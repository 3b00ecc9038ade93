"""The byte-block reader (explain's) and the text reader agree on every kind of input."""

from __future__ import annotations

import bz2
import codecs
import gzip
from pathlib import Path

import pytest

from llamadiag.lines import clean_line
from llamadiag.source.blocks import read_byte_blocks
from llamadiag.source.reader import MAX_LINE, ReadReport, read_blocks
from tests.paths import ROOT

LOG = "srv  load_model: loading model '/m/x.gguf'\nE srv        decode: failed to process speculative batch\n"
INPUTS = {
    "plain": LOG.encode(),
    "gzip": gzip.compress(LOG.encode()),
    "bz2": bz2.compress(LOG.encode()),
    "crlf-utf16": codecs.BOM_UTF16_LE + LOG.replace("\n", "\r\n").encode("utf-16-le"),
    "utf8-bom-no-final-newline": codecs.BOM_UTF8 + LOG.rstrip("\n").encode(),
    "invalid-utf8": b"srv  x: caf\xe9 \xff\xfe ok\n" + LOG.encode(),
    "cr-redraws-and-nul": b"progress 10%\rprogress 90%\rdone\nab\x00c\n",
    "huge-line": b"head\n" + b"x" * (MAX_LINE + 5000) + b"\ntail\n",
    "huge-line-utf8": b"head\n" + "é".encode() * (2 * MAX_LINE) + b"\ntail\n",
    "huge-last-line": b"head\n" + b"y" * (MAX_LINE + 7),
}


def _both(path: Path, block: int) -> tuple[list[str], ReadReport, list[str], ReadReport]:
    text_report, byte_report = ReadReport(str(path)), ReadReport(str(path))
    text_lines = [line for b in read_blocks(str(path), text_report, block) for line in b]
    byte_lines = []
    for b in read_byte_blocks(str(path), byte_report, block):
        assert b.endswith(b"\n")
        byte_lines += [clean_line(x) for x in b.decode("utf-8", "replace").split("\n")[:-1]]
    return text_lines, text_report, byte_lines, byte_report


@pytest.mark.parametrize("name", list(INPUTS))
@pytest.mark.parametrize("block", [1 << 20, 4099, 7])
def test_byte_blocks_match_the_text_reader(tmp_path: Path, name: str, block: int) -> None:
    path = tmp_path / name
    path.write_bytes(INPUTS[name])
    text_lines, text_report, byte_lines, byte_report = _both(path, block)
    if name == "huge-line-utf8":  # cut at a byte limit instead of a character limit
        assert byte_lines == ["head", "é" * (MAX_LINE // 2), "tail"]
        assert text_lines == ["head", "é" * MAX_LINE, "tail"]
        assert byte_report.cut_lines[0][0] == text_report.cut_lines[0][0] == 2
        return
    assert byte_lines == text_lines
    for attr in ("lines", "cut_lines", "replaced_chars", "encoding", "compression"):
        assert getattr(byte_report, attr) == getattr(text_report, attr), attr


def test_sample_logs_read_the_same_both_ways() -> None:
    # the real-server corpus (sample_logs/real/) included
    for path in sorted(p for p in (ROOT / "sample_logs").rglob("*") if p.is_file()):
        text_lines, _, byte_lines, _ = _both(path, 1 << 20)
        assert byte_lines == text_lines, path.name
