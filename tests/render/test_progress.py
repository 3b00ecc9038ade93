"""The progress bar: only for large files on a terminal."""

from __future__ import annotations

import bz2
import codecs
import gzip
import os
from pathlib import Path

from llamadiag.render.progress import MIN_BYTES, wanted
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


def test_progress_only_for_large_files_on_a_terminal(tmp_path: Path) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    small = tmp_path / "small.log"
    small.write_text(LOG)
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.truncate(MIN_BYTES)
    assert wanted(str(big), True, Tty()) == MIN_BYTES
    assert wanted(str(big), False, Tty()) == 0  # --no-progress
    with open(os.devnull, "w") as devnull:
        assert wanted(str(big), True, devnull) == 0  # not a terminal
    assert wanted(str(small), True, Tty()) == 0
    assert wanted("-", True, Tty()) == 0
