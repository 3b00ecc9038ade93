"""Runs replayed from a template (engine/scan/replay.py) give the report reading them gives.

Every sample log, and crash loops built from real failing logs of several eras and wrappers
(llama's own prefix with new times per restart, compose, llama-swap, journald with a new
pid and time per restart, docker -t with new time stamps, an old raw build, terminal colours,
loops with another failure every 7th run), are explained with the replay and without it (every run read line by line), with each
engine and several block sizes; the JSON must be the same byte for byte. The loops must also
have been replayed (else the comparison would say nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.reportdata import dump
from llamadiag.engine.scan.multimatch import hyperscan_available
from llamadiag.engine.scan.replay import _only_time
from llamadiag.source.blocks import read_byte_blocks
from llamadiag.source.reader import ReadReport
from tests.paths import SAMPLES

ENGINES = ["stdlib", *(["hyperscan"] if hyperscan_available() else [])]
REAL = SAMPLES / "real"
ALL_SAMPLES = sorted(p for p in SAMPLES.iterdir() if p.is_file()) + sorted(REAL.glob("*.log"))
LLAMA_TIME = re.compile(r"(?m)(?<![\d.])(\d+)\.(\d\d)\.(\d{3})\.(\d{3}) ")


def _report(knowledge, path: Path, engine: str, replay: bool, block: int) -> tuple[str, int]:
    """The JSON report of a log (the bulk path from the first byte, where the replay works)
    and how many runs were replayed."""
    analyzer = Analyzer(knowledge, engine=engine)
    analyzer.scanner.bulk_from = 0
    analyzer.scanner.replay.enabled = replay
    read = ReadReport(str(path))
    for data in read_byte_blocks(str(path), read, block):
        analyzer.feed_bytes(data)
    report = analyzer.report(notes=read.notes())
    return json.dumps(dump(report, json=True, exclude={"rules_version"})), analyzer.scanner.replay.skipped


def _shift(text: str, micros: int) -> str:
    """llama's own time stamps `micros` microseconds later."""

    def shift(m: re.Match[str]) -> str:
        mi, s, ms, us = (int(g) for g in m.groups())
        total = ((mi * 60 + s) * 1000 + ms) * 1000 + us + micros
        us, total = total % 1000, total // 1000
        ms, total = total % 1000, total // 1000
        return f"{total // 60}.{total % 60:02d}.{ms:03d}.{us:03d} "

    return LLAMA_TIME.sub(shift, text)


def _later(text: str, run: int) -> str:
    """llama's own time stamps `run` milliseconds (and a bit) later: a restart is never timed alike."""
    return _shift(text, run * 1013)


def _journald(text: str, run: int) -> str:
    """A new pid and a later wall-clock second per restart."""
    text = re.sub(r"llama-server\[(\d+)\]", lambda m: f"llama-server[{int(m.group(1)) + run}]", text)
    return re.sub(
        r"^(\w{3} \d\d \d\d:\d\d):(\d\d)",
        lambda m: f"{m.group(1)}:{(int(m.group(2)) + run) % 60:02d}",
        text,
        flags=re.M,
    )


def _docker(text: str, run: int) -> str:
    """docker -t time stamps of a later restart."""
    return re.sub(
        r"^(\d{4}-\d\d-\d\dT\d\d):(\d\d)",
        lambda m: f"{m.group(1)}:{(int(m.group(2)) + run) % 60:02d}",
        text,
        flags=re.M,
    )


def _loop(
    tmp: Path,
    name: str,
    source: Path,
    runs: int,
    vary: Callable[[str, int], str] | None = None,
    other: Path | None = None,
) -> Path:
    text = source.read_text(encoding="utf-8").rstrip("\n") + "\n"
    odd = other.read_text(encoding="utf-8").rstrip("\n") + "\n" if other is not None else ""
    out = tmp / f"{name}.log"
    with out.open("w", encoding="utf-8", newline="\n") as f:
        for run in range(runs):
            one = odd if other is not None and run % 7 == 6 else text
            f.write(vary(one, run) if vary is not None else one)
    return out


LOOPS = {
    # name: (source, runs, how each run differs, another failure every 7th run)
    "oom-lv4": (REAL / "cuda-oom-ctx-fit-off-lv4.log", 40, None, None),
    "file-missing-later-times": (REAL / "model-file-missing.log", 120, _later, None),
    "vulkan-journald-new-pid": (SAMPLES / "backends-vulkan-device-lost-journald.log", 12, _journald, None),
    "b7003-docker-t-new-times": (SAMPLES / "context-batch-positions-b7003-docker-t.log", 12, _docker, None),
    "rocm-compose-later-times": (SAMPLES / "backends-rocm-invalid-device-function-compose.log", 40, _later, None),
    "llama-swap": (SAMPLES / "backends-cuda-illegal-memory-access-llama-swap.log", 40, None, None),
    "b4589-raw-every-7th-other": (SAMPLES / "memory-cuda-oom-b4589-raw.log", 60, None, REAL / "model-file-missing.log"),
    "oom-fit-on-every-7th-later": (
        REAL / "cuda-oom-ctx-fit-on-lv4.log",
        40,
        _later,
        REAL / "cuda-no-device-visible.log",
    ),
    "colours-served-requests": (REAL / "prompt-over-context-lv4-colors.log", 20, None, None),
}
# (the journald and docker -t loops are runs of their own: a new pid is a fact of the run, and
# runs that served requests keep their own entries; they are compared, not replayed)
REPLAYED = {
    "oom-lv4",
    "file-missing-later-times",
    "rocm-compose-later-times",
    "llama-swap",
    "b4589-raw-every-7th-other",
    "oom-fit-on-every-7th-later",
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(LOOPS))
def test_crash_loop_replayed_as_read(knowledge, tmp_path: Path, name: str, engine: str) -> None:
    source, runs, vary, other = LOOPS[name]
    path = _loop(tmp_path, name, source, runs, vary, other)
    for block in (1 << 20, 48 << 10):
        read, none = _report(knowledge, path, engine, False, block)
        replayed, skipped = _report(knowledge, path, engine, True, block)
        assert none == 0
        assert replayed == read, (name, block)
        if name in REPLAYED and block == 1 << 20:
            assert skipped > 0, name


@pytest.mark.parametrize("engine", ENGINES)
def test_sample_logs_same_with_and_without_replay(knowledge, engine: str) -> None:
    for path in ALL_SAMPLES:
        read, _ = _report(knowledge, path, engine, False, 1 << 20)
        replayed, _ = _report(knowledge, path, engine, True, 1 << 20)
        assert replayed == read, path.name


def _n_ctx(odd_run: int) -> Callable[[str, int], str]:
    """Later times each restart, and one restart (`odd_run`) with another n_ctx of as many
    digits (the user edited the config): its lines differ from the others' outside the time
    stamps only in digits (n_ctx, the size it tried to allocate)."""

    def vary(text: str, run: int) -> str:
        text = _later(text, run)
        if run != odd_run:
            return text
        for old, new in (
            ("400000000", "300000000"),
            ("390625.00 MiB", "292968.75 MiB"),
            ("409600000000", "307200000000"),
        ):
            assert old in text
            text = text.replace(old, new)
        return text

    return vary


def _rollover(text: str, run: int) -> str:
    """llama's time stamps 9 min 59.9 s later, plus 1.013 ms per restart: runs 85 to 98
    cross 9.59.999 into 10.00.000, where a stamp grows by one digit."""
    return _shift(text, 599_900_000 + run * 1013)


EDGE_LOOPS = {
    # a restart whose lines differ from the template's in a digit outside the time stamp
    "oom-one-restart-other-n-ctx": (REAL / "cuda-oom-ctx-fit-off-lv4.log", 40, _n_ctx(20)),
    # time stamps that grow a digit (9.59.999 -> 10.00.000) in the middle of the loop
    "file-missing-minute-rollover": (REAL / "model-file-missing.log", 120, _rollover),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(EDGE_LOOPS))
def test_restarts_differing_in_more_than_time_replayed_as_read(
    knowledge, tmp_path: Path, name: str, engine: str
) -> None:
    """A restart that differs from the template in a digit outside its time stamps is read
    (its n_ctx is a fact of its own); a stamp that grows a digit is compared in full."""
    source, runs, vary = EDGE_LOOPS[name]
    path = _loop(tmp_path, name, source, runs, vary)
    read, _ = _report(knowledge, path, engine, False, 1 << 20)
    replayed, skipped = _report(knowledge, path, engine, True, 1 << 20)
    assert replayed == read, name
    assert skipped > 0, name


def test_only_time_digits_make_a_cheap_repeat(knowledge, tmp_path: Path) -> None:
    """The cheap comparison takes a template line with other digits in its time stamp, and
    leaves to the full comparison a line with another digit outside it or a longer stamp."""
    path = _loop(tmp_path, "loop", REAL / "cuda-oom-ctx-fit-off-lv4.log", 6, _later)
    analyzer = Analyzer(knowledge, engine="stdlib")
    analyzer.scanner.bulk_from = 0
    analyzer.feed_bytes(path.read_bytes())
    replay = analyzer.scanner.replay
    template = replay.template
    assert template is not None and template.timed
    (i, theirs) = next((i, x) for i, x in enumerate(template.split) if b"n_ctx                 = 400000000" in x)
    stamp = replay._stamp(theirs)
    assert stamp is not None and theirs[stamp.start : stamp.end] == theirs.split(b" ")[0]
    later = _later(theirs.decode(), 7).encode()
    assert later != theirs and _only_time(stamp, later, theirs)
    assert not _only_time(stamp, later.replace(b"400000000", b"500000000"), theirs)
    longer = _shift(theirs.decode(), 600_000_000).encode()  # 10.00.309.871: one digit more
    assert not _only_time(stamp, longer, theirs)
    assert not _only_time(stamp, theirs.replace(b".", b":", 1), theirs)  # not a time any more
    lines = list(template.split)
    lines[i] = longer
    assert replay._repeats(template, b"\n".join(lines))  # the full comparison: the same entry
    lines[i] = later.replace(b"400000000", b"500000000")
    assert not replay._repeats(template, b"\n".join(lines))
