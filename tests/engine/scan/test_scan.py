"""The scanning core gives the same report whatever engine, block size, shortcut or bulk path.

The shortcuts (inert lines skipped, statistics added directly, signature starts
deferred) must be invisible: the whole JSON report of every sample log and of a
generated benchmark log is compared with the plain entry-by-entry path.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.reportdata import dump
from llamadiag.engine.scan.multimatch import hyperscan_available
from llamadiag.engine.scan.stops import rare_byte_regex
from llamadiag.ruletools.selftest import check_expectation
from llamadiag.source.blocks import read_byte_blocks
from llamadiag.source.reader import ReadReport
from tests.paths import ROOT

SAMPLES = sorted(p for p in (ROOT / "sample_logs").iterdir() if p.is_file())
# the logs of the real binary (sample_logs/real/), each a shape of its own
REAL = sorted((ROOT / "sample_logs" / "real").glob("*.log"))
ENGINES = ["stdlib", *(["hyperscan"] if hyperscan_available() else [])]


def _report(
    knowledge, path: Path, engine: str = "stdlib", block: int = 1 << 20, shortcuts: bool = True, bulk: bool = True
):
    analyzer = Analyzer(knowledge, engine=engine)
    analyzer.scanner.shortcuts = shortcuts  # False: every candidate line through the full entry path
    # the bulk path from the first byte (a real run starts it after the first block)
    analyzer.scanner.bulk_from = 0 if bulk else 1 << 62
    read = ReadReport(str(path))
    for block_bytes in read_byte_blocks(str(path), read, block):
        analyzer.feed_bytes(block_bytes)
    return analyzer.report(notes=read.notes())


def _json(report) -> str:
    return json.dumps(dump(report, json=True, exclude={"rules_version"}))


def _gen(name: str = "gen"):  # bench/gen.py and bench/gen_requests.py are scripts, not part of the package
    import sys

    sys.path.insert(0, str(ROOT / "bench"))  # gen_requests imports gen's size parser
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    gen = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(gen)  # type: ignore[union-attr]
    return gen


@pytest.fixture(scope="module")
def bench_log(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "bench.log"
    _gen().generate(3 << 20, out, seed=7, inject_every=40)
    return out


@pytest.mark.parametrize("style", ["ansi", "journald", "legacy", "raw", "lv4"])
def test_each_generated_style_same_with_and_without_shortcuts(knowledge, tmp_path: Path, style: str) -> None:
    import random

    gen = _gen()
    pool = gen.failures()
    turn = iter(range(10**6))
    lines = gen.session(style, random.Random(3), 400, lambda: pool[next(turn) % len(pool)], every=25)
    path = tmp_path / f"{style}.log"
    path.write_text("\n".join(lines * 2) + "\n")  # twice: a restart, and a second run of the same kind
    fast = _report(knowledge, path)
    assert _json(fast) == _json(_report(knowledge, path, shortcuts=False))
    assert _json(_report(knowledge, path, bulk=False, block=4096)) == _json(fast)
    assert len(fast.runs) >= 2 and sum(r.stats["generation_tps"]["count"] for r in fast.runs) >= 800


@pytest.mark.parametrize(
    "shape", ["b5060", "b5060-prefix", "b7003-docker", "b9700-lv4", "b9700-iso", "b11-lv4", "b11-journald"]
)
def test_each_request_shape_same_with_and_without_the_fast_paths(knowledge, tmp_path: Path, shape: str) -> None:
    """bench/gen_requests.py's eras and wrappers (per-request Chat format, slot selection,
    prompt-cache and checkpoint lines, /health polling, spliced real failures): the bulk
    path, which skips every literal that can no longer change the report, changes nothing."""
    import random

    gen = _gen("gen_requests")
    pool = gen.failures()
    lines = gen.session(shape, random.Random(5), 300, pool, 60)
    path = tmp_path / f"{shape}.log"
    path.write_text("\n".join(lines * 2) + "\n")  # twice: a restart, and a second run of the same kind
    plain = _json(_report(knowledge, path, shortcuts=False))
    for engine in ENGINES:
        assert _json(_report(knowledge, path, engine)) == plain, engine
    assert _json(_report(knowledge, path, block=4096)) == plain
    fast = _report(knowledge, path)
    assert len(fast.runs) >= 2 and fast.findings


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_real_binary_logs_same_with_and_without_the_fast_paths(knowledge, path: Path) -> None:
    plain = _json(_report(knowledge, path, shortcuts=False))
    assert _json(_report(knowledge, path)) == plain
    assert _json(_report(knowledge, path, block=333)) == plain
    if len(ENGINES) > 1:
        assert _json(_report(knowledge, path, "hyperscan", block=333)) == plain


@pytest.mark.skipif(len(ENGINES) < 2, reason="hyperscan is not installed")
@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_engines_agree_on_sample_logs(knowledge, path: Path) -> None:
    assert _json(_report(knowledge, path, "hyperscan")) == _json(_report(knowledge, path, "stdlib"))


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_shortcuts_and_block_size_change_nothing(knowledge, path: Path) -> None:
    plain = _json(_report(knowledge, path, shortcuts=False))
    assert _json(_report(knowledge, path)) == plain
    assert _json(_report(knowledge, path, bulk=False)) == plain
    assert _json(_report(knowledge, path, block=333)) == plain


@pytest.mark.parametrize("engine", ENGINES)
def test_generated_log_same_with_and_without_shortcuts(knowledge, bench_log: Path, engine: str) -> None:
    fast = _report(knowledge, bench_log, engine)
    assert _json(fast) == _json(_report(knowledge, bench_log, "stdlib", block=65536, shortcuts=False))
    # the injected failures of several categories are found, and requests were counted
    assert len({f.category for f in fast.findings}) >= 3
    assert sum(r.stats["generation_tps"]["count"] for r in fast.runs) > 1000


@pytest.mark.parametrize("engine", ENGINES)
def test_corpus_expectations_hold_with_each_engine(knowledge, engine: str) -> None:
    import yaml

    problems = []
    for path in sorted((ROOT / "tests" / "expectations").glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text()) or []:
            analyzer = Analyzer(knowledge, entry.get("cmdline"), entry.get("version_text"), engine=engine)
            for block in read_byte_blocks(str(ROOT / "sample_logs" / entry["log"])):
                analyzer.feed_bytes(block)
            problems += [f"{entry['log']}: {p}" for p in check_expectation(analyzer.report(), entry)]
    assert problems == []


def test_engines_find_every_literal_even_overlapping() -> None:
    from llamadiag.engine.scan.multimatch import StdlibEngine

    literals = ["abc", "bcd", "cd", "xyz"]
    block = b"zabcdz\nnothing\nxyzabc\n"
    expected = [(0, 6, frozenset({0, 1, 2})), (15, 21, frozenset({0, 3}))]
    assert StdlibEngine(literals).scan(block) == expected
    if hyperscan_available():
        from llamadiag.engine.scan.multimatch import HyperscanEngine

        assert HyperscanEngine(literals).scan(block) == expected


def test_runs_folded_as_they_end_report_the_same(knowledge, bench_log: Path) -> None:
    """Ended runs are assessed and folded into the grouped summary at once (grouping.py):
    the report is the same as when every run is kept and assessed at the end."""
    folded = Analyzer(knowledge)
    kept = Analyzer(knowledge)
    kept.fold_runs = False
    for block in read_byte_blocks(str(bench_log)):
        folded.feed_bytes(block)
        kept.feed_bytes(block)
    assert folded.summary.run_count >= 2 and len(folded.runs) == len(folded.streams)  # only open runs are held
    assert len(kept.runs) >= 3
    assert _json(folded.report()) == _json(kept.report())
    assert _json(folded.report()) == _json(kept.report())  # a second report: the same


@given(
    literals=st.lists(st.binary(min_size=1, max_size=6).map(lambda b: b.replace(b"\n", b"x")), min_size=1, max_size=8),
    text=st.binary(max_size=200),
    routine=st.binary(max_size=100),
)
@settings(max_examples=300, deadline=None)
def test_the_rare_byte_search_finds_the_first_literal(literals: list[bytes], text: bytes, routine: bytes) -> None:
    """The standard-library stop finder's cold-literal search (stops.rare_byte_regex): a hit
    exactly when a literal occurs, inside an occurrence, never after the first one ends."""
    pattern = rare_byte_regex(literals, Counter(routine))
    found = [(at, at + len(lit)) for lit in literals for at in range(len(text)) if text.startswith(lit, at)]
    m = pattern.search(text)
    if not found:
        assert m is None
        return
    assert m is not None
    assert any(start <= m.start() < end for start, end in found)
    assert m.start() < min(end for _, end in found)


@pytest.mark.parametrize("engine", ENGINES)
def test_settled_literals_do_not_stop_the_bulk_path(knowledge, tmp_path: Path, engine: str) -> None:
    """Liveness, not a list of line shapes: in a b9151-b9828 `-lv 4` log inside journalctl
    short-iso, the per-request lines whose literals only feed what is settled (an era already
    seen, a fact never printed in this era whose pattern does not match, the prompt-cache and
    checkpoint lines) are consumed in bulk. What stops a stretch is what can still change the
    report: here the `new prompt` line of a single-line signature, once per request."""
    import random

    gen = _gen("gen_requests")
    requests = 400
    lines = gen.session("b9700-iso", random.Random(9), requests, [], 10**9)
    path = tmp_path / "b9700-iso.log"
    path.write_text("\n".join(lines) + "\n")
    stops, fast = stretches(knowledge, path, engine)
    assert stops < 1.5 * requests  # a hand-written list of routine lines stopped ~6 times a request
    assert fast == _json(_report(knowledge, path, shortcuts=False))


def stretches(knowledge, path: Path, engine: str) -> tuple[int, str]:
    """How many stretches the bulk path took on the log, and the report's JSON."""
    from llamadiag.engine.scan import bulk

    count = 0
    stretch = bulk.BulkPath.stretch

    def counted(self, run, pos, base):  # type: ignore[no-untyped-def]
        nonlocal count
        count += 1
        return stretch(self, run, pos, base)

    bulk.BulkPath.stretch = counted  # type: ignore[method-assign]
    try:
        report = _report(knowledge, path, engine)
    finally:
        bulk.BulkPath.stretch = stretch  # type: ignore[method-assign]
    return count, _json(report)
