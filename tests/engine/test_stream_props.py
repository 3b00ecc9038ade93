"""Property-based tests of the streaming path: reader, envelope, analyzer and watcher.

However the bytes arrive (any read sizes) and however the lines are handed on (any block
sizes), the same findings come out; and no input, however hostile, makes anything crash.
"""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.envelope import EnvelopeParser
from llamadiag.engine.reportdata import dump
from llamadiag.features.redact import Redactor
from llamadiag.features.watch.watcher import Watcher
from llamadiag.knowledge.loader import load_knowledge
from llamadiag.lines import CONTROL
from llamadiag.render.watch import JsonlSink
from llamadiag.source.reader import InputError, ReadReport, read_stream
from tests.paths import ROOT

SAMPLES = sorted(p for p in (ROOT / "sample_logs").iterdir() if p.is_file())
K = load_knowledge()
REDACTOR = Redactor()
FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def pieces(seq: Any, cuts: list[int]) -> list[Any]:
    """`seq` cut at the given positions (taken modulo its length)."""
    bounds = [0, *sorted({c % (len(seq) + 1) for c in cuts}), len(seq)]
    return [seq[a:b] for a, b in itertools.pairwise(bounds)]


class Reads(io.RawIOBase):
    """A stream that hands out its bytes in the given pieces, as a pipe might."""

    def __init__(self, data: bytes, cuts: list[int]) -> None:
        self.parts = [part for part in pieces(data, cuts) if part]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
        if not self.parts:
            return 0
        part = self.parts[0]
        n = min(len(buffer), len(part))
        buffer[:n] = part[:n]
        if n < len(part):
            self.parts[0] = part[n:]
        else:
            self.parts.pop(0)
        return n


def read_lines(data: bytes, cuts: list[int]) -> list[str]:
    lines: list[str] = []
    for block in read_stream(Reads(data, cuts), ReadReport("test"), block=1 << 16):  # type: ignore[arg-type]
        lines.extend(block)
    return lines


def watch_findings(lines_blocks: list[list[str]]) -> tuple[list[tuple], list[tuple]]:
    """(findings as watch reports them, findings of the final report) for blocks of lines."""
    events: list[dict[str, Any]] = []
    analyzer = Analyzer(K)
    watcher = Watcher(analyzer, events.append)
    for block in lines_blocks:
        watcher.feed(block)
    watcher.finish("end of input", {})
    sink = JsonlSink(io.StringIO(), REDACTOR)
    for event in events:
        sink(event)  # every event can be redacted and written as JSON
    live = [
        (f.run, f.rule_id, f.confidence, tuple(e.line for e in f.evidence))
        for f in (e["finding"] for e in events if e["type"] == "finding")
    ]
    plain = Analyzer(K)
    for block in lines_blocks:
        plain.feed(block)
    final = [(f.run, f.rule_id, f.confidence, tuple(e.line for e in f.evidence)) for f in plain.report().findings]
    return live, final


@FEW
@given(data=st.binary(max_size=3000), cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_arbitrary_bytes_never_crash_the_reader(data: bytes, cuts: list[int]) -> None:
    try:
        lines = read_lines(data, cuts)
    except InputError as exc:  # a refusal is one clear line
        assert "\n" not in str(exc)
        return
    assert all("\n" not in line and "\x00" not in line for line in lines)


@FEW
@given(text=st.text(max_size=400))
def test_the_envelope_never_crashes_and_never_lets_control_characters_through(text: str) -> None:
    parser = EnvelopeParser(K.envelope)
    line, _ = parser.peel(1, text)
    if line is not None:
        assert not CONTROL.search(line.text.replace("\n", " ")) and "\x1b" not in line.text


@FEW
@given(
    junk=st.lists(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")), max_size=30),
    sample=st.sampled_from(SAMPLES),
    cuts=st.lists(st.integers(min_value=0), max_size=8),
    data=st.data(),
)
def test_junk_mixed_into_a_log_never_crashes_the_watcher(junk: list[str], sample: Path, cuts: list[int], data) -> None:  # type: ignore[no-untyped-def]
    lines = sample.read_text(errors="replace").splitlines()
    for piece in junk:  # one physical line each, as the reader hands them on
        lines.insert(data.draw(st.integers(0, len(lines))), piece.replace("\n", " ").replace("\r", " "))
    watch_findings(pieces(lines, cuts))


@FEW
@given(
    sample=st.sampled_from(SAMPLES),
    read_cuts=st.lists(st.integers(min_value=0), max_size=40),
    block_cuts=st.lists(st.integers(min_value=0), max_size=300),
)
def test_any_split_into_reads_and_blocks_gives_the_same_findings(
    sample: Path, read_cuts: list[int], block_cuts: list[int]
) -> None:
    data = sample.read_bytes()
    whole = read_lines(data, [])
    lines = read_lines(data, read_cuts)
    assert lines == whole
    assert watch_findings(pieces(lines, block_cuts)) == watch_findings([whole])


def _report_json(lines_blocks: list[list[str]], bulk: bool) -> str:
    analyzer = Analyzer(K)
    analyzer.scanner.bulk_from = 0 if bulk else 1 << 62
    for block in lines_blocks:
        analyzer.feed(block)
    return json.dumps(dump(analyzer.report(), json=True, exclude={"rules_version"}))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    junk=st.lists(st.text(max_size=120) | st.binary(max_size=120).map(lambda b: b.decode("latin-1")), max_size=20),
    sample=st.sampled_from(SAMPLES),
    cuts=st.lists(st.integers(min_value=0), max_size=8),
    data=st.data(),
)
def test_the_bulk_path_changes_nothing_whatever_junk_and_blocks(
    junk: list[str], sample: Path, cuts: list[int], data
) -> None:  # type: ignore[no-untyped-def]
    lines = sample.read_text(errors="replace").splitlines()
    for piece in junk:  # control characters, ANSI, non-ASCII, JSON-looking and wrapper-looking lines
        lines.insert(data.draw(st.integers(0, len(lines))), piece.replace("\n", " ").replace("\r", " "))
    blocks = pieces(lines, cuts)
    assert _report_json(blocks, bulk=True) == _report_json(blocks, bulk=False)
