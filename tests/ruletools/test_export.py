"""`rules export --grep`: the EREs find the evidence grep can see."""

from __future__ import annotations

import bz2
import codecs
import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

from llamadiag.ruletools.export import signature_eres
from llamadiag.source.reader import MAX_LINE
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


@pytest.mark.skipif(shutil.which("grep") is None, reason="grep is not installed")
def test_exported_eres_find_the_evidence_grep_can_see(knowledge, tmp_path: Path) -> None:
    eres, problems = signature_eres(knowledge)
    assert problems == [] and len(eres) > 50
    sig = tmp_path / "sig.ere"
    sig.write_text("".join(e + "\n" for e in eres))
    log = ROOT / "sample_logs" / "seed-b11503-default.log"
    out = subprocess.run(["grep", "-E", "-f", str(sig), str(log)], capture_output=True, text=True, env={"LC_ALL": "C"})
    assert out.returncode == 0, out.stderr
    assert "failed to process speculative batch" in out.stdout
    assert "inconsistent sequence positions" in out.stdout
