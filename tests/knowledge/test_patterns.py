"""Literal prefilters derived from rule patterns."""

from __future__ import annotations

import bz2
import codecs
import gzip

from llamadiag.knowledge.patterns import required_literals
from llamadiag.source.reader import MAX_LINE

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


def test_derived_literals_join_alternations() -> None:
    assert required_literals(r"^\s*- (?P<value>CUDA|ROCm)\d+ +: ") == ["- CUDA", "- ROCm"]
    assert required_literals(r"for (?:x64|Windows \w+)\b|MSVC \d") == ["for x64", "for Windows ", "MSVC "]
    assert required_literals(r"^(?:INFO|WARN) \[ *\w+\]") == ["INFO [", "WARN ["]
    assert required_literals(r"(?:x|y)z") is None  # too weak: the author must give `literal:`
