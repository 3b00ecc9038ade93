"""The byte-block reader (explain's) and the text reader agree on every kind of input,
and what the scanning core leans on (cache, literals, ERE export, progress) holds."""

from __future__ import annotations

import bz2
import codecs
import gzip
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from llamadiag import cache
from llamadiag.blocks import read_byte_blocks
from llamadiag.cli_export import signature_eres
from llamadiag.patterns import required_literals
from llamadiag.progress import MIN_BYTES, wanted
from llamadiag.reader import MAX_LINE, ReadReport, _clean, read_blocks

ROOT = Path(__file__).resolve().parent.parent
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
        byte_lines += [_clean(x) for x in b.decode("utf-8", "replace").split("\n")[:-1]]
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


def test_derived_literals_join_alternations() -> None:
    assert required_literals(r"^\s*- (?P<value>CUDA|ROCm)\d+ +: ") == ["- CUDA", "- ROCm"]
    assert required_literals(r"for (?:x64|Windows \w+)\b|MSVC \d") == ["for x64", "for Windows ", "MSVC "]
    assert required_literals(r"^(?:INFO|WARN) \[ *\w+\]") == ["INFO [", "WARN ["]
    assert required_literals(r"(?:x|y)z") is None  # too weak: the author must give `literal:`


def test_cache_entries_are_written_atomically_and_pruned(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for i in range(cache.KEEP + 3):
        cache.write(f"thing-{i}.bin", bytes([i]))
        os.utime(tmp_path / "llamadiag" / f"thing-{i}.bin", (i, i))
    left = sorted(p.name for p in (tmp_path / "llamadiag").iterdir())
    assert len(left) == cache.KEEP and cache.read(f"thing-{cache.KEEP + 2}.bin") == bytes([cache.KEEP + 2])
    assert cache.read("absent.bin") is None


def _small_rules(tmp_path: Path) -> Path:
    """Two shipped rules in a folder of their own: a fresh load runs only their examples."""
    rules = tmp_path / "rules" / "speculative"
    rules.mkdir(parents=True)
    for src in sorted((ROOT / "rules" / "speculative").glob("*.yaml"))[:2]:
        shutil.copy(src, rules / src.name)
    return tmp_path / "rules"


def test_knowledge_cache_hit_equals_a_fresh_load(tmp_path: Path, monkeypatch) -> None:
    from llamadiag.knowledge import load_knowledge
    from llamadiag.session import checked_knowledge

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rules = _small_rules(tmp_path)
    first = checked_knowledge([rules], builtin=False)
    stored = list((tmp_path / "cache" / "llamadiag").glob("knowledge-*.pickle"))
    assert len(stored) == 1 and len(first.rules) == 2 and not first.errors
    again = checked_knowledge([rules], builtin=False)
    assert again is not first
    assert [(r.rule, r.path) for r in again.rules] == [(r.rule, r.path) for r in first.rules]
    assert again.facts == first.facts and again.envelope == first.envelope
    assert again.digest == load_knowledge([rules], builtin=False).digest
    stored[0].write_bytes(b"not a pickle")  # a broken cache entry is ignored and rewritten
    assert checked_knowledge([rules], builtin=False).digest == first.digest


def test_knowledge_cache_notices_a_changed_rule(tmp_path: Path, monkeypatch) -> None:
    from llamadiag.session import checked_knowledge

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rules = _small_rules(tmp_path)
    before = checked_knowledge([rules], builtin=False)
    path = next((rules / "speculative").glob("*.yaml"))
    path.write_text(path.read_text().replace("title:", "title: CHANGED", 1))
    after = checked_knowledge([rules], builtin=False)
    assert before.digest != after.digest
    assert after.rule(path.stem).rule.title.startswith("CHANGED")


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
