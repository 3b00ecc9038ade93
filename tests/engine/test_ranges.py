"""Both cores: a log scanned as byte ranges by several processes gives one process's report.

Every comparison is of the whole JSON report, byte for byte, with `explain`'s path
(`api.diagnose`, `--jobs 1`). The split must be real (ranges planned at run starts hold) and
exact where an edge falls anywhere else: inside a run's start-up, inside a multi-line failure
signature, or between a pasted command line and its start line, the edge is detected and the
two ranges are scanned again as one.
"""

from __future__ import annotations

import importlib.util
import json
import random
from itertools import pairwise
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llamadiag import api
from llamadiag.cli import app
from llamadiag.engine import ranges
from llamadiag.engine.analyze import report_of
from llamadiag.engine.reportdata import dump
from llamadiag.engine.scan.multimatch import hyperscan_available
from llamadiag.source.ranges import merge_reads, read_range, splittable_size, window
from tests.paths import ROOT, SAMPLES

REAL = sorted((SAMPLES / "real").glob("*.log"))
LOGS = sorted(p for p in SAMPLES.iterdir() if p.is_file()) + REAL
ENGINES = ["stdlib", *(["hyperscan"] if hyperscan_available() else [])]


@pytest.fixture(scope="module")
def k() -> api.Knowledge:
    return api.load_knowledge()


@pytest.fixture(autouse=True)
def split_small_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "SPLIT_MIN_BYTES", 0)  # the test logs are small


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LLAMADIAG_ENGINE", request.param)  # the forked workers inherit it
    return str(request.param)


def _json(d: api.Diagnosis) -> str:
    return json.dumps(dump(d.report, json=True))


def _bench(name: str):  # bench/*.py are scripts, not part of the package
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _scan(k: api.Knowledge, path: Path, spans: list[tuple[int, int]], jobs: int = 2) -> ranges.RangeScan:
    return ranges.scan_ranges(k, str(path), spans, read_range, ranges.ScanOptions(), jobs)


def _scan_here(k: api.Knowledge, path: Path, start: int, end: int) -> ranges.RangeScan:
    """One range scanned in this process."""
    base, blocks, read = read_range(str(path), start, end)
    return ranges.scan_range(k, blocks, start=start, end=end, line_base=base, options=ranges.ScanOptions(), read=read)


def _report_json(k: api.Knowledge, path: Path, scan: ranges.RangeScan) -> str:
    read = merge_reads(str(path), list(scan.reads))
    return json.dumps(dump(report_of(k, scan.result(), api._file_info(read), read.notes()), json=True))


def _plan(k: api.Knowledge, path: Path, pieces: int) -> list[tuple[int, int]]:
    size = splittable_size(str(path))
    assert size is not None
    return ranges.plan(k, size, pieces, lambda offset, limit: window(str(path), offset, limit))


def _line_start(path: Path, number: int) -> int:
    """The byte offset of line `number` (1-based)."""
    data = path.read_bytes()
    pos = 0
    for _ in range(number - 1):
        pos = data.index(b"\n", pos) + 1
    return pos


@pytest.fixture(scope="module")
def concatenated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every sample log and every real log one after the other: hundreds of runs of every era and
    wrapper, compose instances and router children among them."""
    path = tmp_path_factory.mktemp("cat") / "all.log"
    path.write_bytes(b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in LOGS))
    return path


@pytest.fixture(scope="module")
def real_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real binary's logs one after the other (one instance: every planned edge can hold)."""
    path = tmp_path_factory.mktemp("real") / "real.log"
    path.write_bytes(b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in REAL))
    return path


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sessions of every bench/gen.py style and every bench/gen_requests.py shape (each a restart,
    with spliced failures), over 2 MB: the ranges reach the bulk path."""
    gen, req = _bench("gen"), _bench("gen_requests")
    pool, real_pool = gen.failures(), req.failures()
    turn = iter(range(10**6))
    lines: list[str] = []
    for i, style in enumerate(["default", "lv4", "journald", "ansi", "legacy", "raw"]):
        lines += gen.session(style, random.Random(i), 160, lambda: pool[next(turn) % len(pool)], every=60)
    for i, shape in enumerate(["b5060", "b5060-prefix", "b7003-docker", "b9700-lv4", "b9700-iso", "b11-lv4"]):
        lines += req.session(shape, random.Random(10 + i), 110, real_pool, 40)
    path = tmp_path_factory.mktemp("gen") / "gen.log"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 2 << 20
    return path


@pytest.mark.parametrize("pieces", [2, 7])
def test_generated_log_same_report_in_ranges(k, generated: Path, engine: str, pieces: int) -> None:
    one = _json(api.diagnose(generated, knowledge=k))
    assert _json(api.diagnose(generated, knowledge=k, jobs=2, pieces=pieces)) == one
    spans = _plan(k, generated, pieces)
    scan = _scan(k, generated, spans)
    assert len(spans) == pieces and scan.rescanned == 0  # the split is real: every planned edge held
    assert _report_json(k, generated, scan) == one


@pytest.mark.parametrize("pieces", [2, 7])
def test_every_sample_and_real_log_same_report_in_ranges(k, concatenated: Path, engine: str, pieces: int) -> None:
    one = _json(api.diagnose(concatenated, knowledge=k))
    assert _json(api.diagnose(concatenated, knowledge=k, jobs=2, pieces=pieces)) == one
    assert len(_plan(k, concatenated, pieces)) == pieces


def test_real_logs_split_where_runs_start(k, real_only: Path, engine: str) -> None:
    one = _json(api.diagnose(real_only, knowledge=k))
    spans = _plan(k, real_only, 7)
    scan = _scan(k, real_only, spans)
    assert len(spans) == 7 and scan.rescanned <= 1
    assert _report_json(k, real_only, scan) == one == _json(api.diagnose(real_only, knowledge=k, jobs=2, pieces=7))


def test_crash_loop_same_report_in_ranges(k, tmp_path: Path, engine: str) -> None:
    path = tmp_path / "loop.log"
    _bench("crashloop").crash_loop(SAMPLES / "real" / "cuda-oom-ctx-fit-off-lv4.log", 300, path)
    one = api.diagnose(path, knowledge=k)
    assert one.report.run_count == 300
    spans = _plan(k, path, 7)
    scan = _scan(k, path, spans)
    assert len(spans) == 7 and scan.rescanned == 0
    assert _report_json(k, path, scan) == _json(one) == _json(api.diagnose(path, knowledge=k, jobs=2, pieces=7))


def test_edges_inside_a_signature_and_a_start_up_are_scanned_again(k, real_only: Path, engine: str) -> None:
    """Edges that one process would read across: inside a run's start-up (after its start line,
    and before it, between version output or a command line and the start line) and between
    the lines of a multi-line failure signature. Each is caught and its ranges read as one."""
    one = api.diagnose(real_only, knowledge=k)
    multi = next(f for f in one.report.findings if len({e.line for e in f.evidence}) > 1)
    second = sorted({e.line for e in multi.evidence})[1]
    run = next(r for r in one.report.runs if r.startup_seen and r.index > 2)
    cuts = sorted({_line_start(real_only, n) for n in (second, run.first_line + 1, run.first_line + 3)})
    size = real_only.stat().st_size
    edges = [0, *cuts, size]
    scan = _scan(k, real_only, list(pairwise(edges)))
    assert scan.rescanned == len(cuts)  # none of these edges proves an exact join
    assert _report_json(k, real_only, scan) == _json(one)


def test_a_planned_edge_on_a_pasted_command_line_holds(k, tmp_path: Path) -> None:
    """A run whose start-up begins with the command line (preamble): the edge goes before it."""
    cmd = "$ llama-server -m /models/qwen.gguf -c 8192 -ngl 99\n"
    lines = (SAMPLES / "real" / "cuda-oom-ctx-fit-off-lv4.log").read_bytes().rstrip(b"\n").split(b"\n")
    sample = b"\n".join(lines[1:]) + b"\n"  # from its start line (`build ...`) on
    path = tmp_path / "pasted.log"
    path.write_bytes((cmd.encode() + sample) * 40)
    one = _json(api.diagnose(path, knowledge=k))
    spans = _plan(k, path, 3)
    assert all(path.read_bytes()[s : s + len(cmd)] == cmd.encode() for s, _ in spans)
    scan = _scan(k, path, spans)
    assert len(spans) == 3 and scan.rescanned == 0
    assert _report_json(k, path, scan) == one
    # an edge between the command line and its start line is caught
    at = spans[1][0] + len(cmd)
    scan = _scan(k, path, [(0, at), (at, path.stat().st_size)])
    assert scan.rescanned == 1 and _report_json(k, path, scan) == one


def test_combine_is_associative_on_real_range_summaries(k, real_only: Path) -> None:
    parts = [_scan_here(k, real_only, start, end) for start, end in _plan(k, real_only, 4)]
    a, b, c, d = parts
    assert all(ranges.fits(x, y) for x, y in pairwise(parts))
    left = ranges.combine(ranges.combine(ranges.combine(a, b), c), d)
    right = ranges.combine(a, ranges.combine(b, ranges.combine(c, d)))
    middle = ranges.combine(ranges.combine(a, ranges.combine(b, c)), d)
    one = _json(api.diagnose(real_only, knowledge=k))
    assert _report_json(k, real_only, left) == _report_json(k, real_only, right) == one
    assert _report_json(k, real_only, middle) == one
    assert left.result() == right.result() == middle.result()


def test_ranges_that_do_not_join_are_refused(k, real_only: Path) -> None:
    size = real_only.stat().st_size
    at = _line_start(real_only, 3)
    scans = [_scan_here(k, real_only, start, end) for start, end in [(0, at), (at, size)]]
    assert not ranges.fits(*scans)
    with pytest.raises(ValueError, match="do not join"):
        ranges.combine(*scans)


def test_explain_jobs_gives_the_same_json(generated: Path) -> None:
    runner = CliRunner()
    args = ["explain", str(generated), "-f", "json", "--no-progress"]
    one = runner.invoke(app, args)
    two = runner.invoke(app, [*args, "--jobs", "2"])
    auto = runner.invoke(app, [*args, "-j", "auto"])
    assert one.exit_code == two.exit_code == auto.exit_code
    assert one.stdout == two.stdout == auto.stdout and '"findings"' in one.stdout
    bad = runner.invoke(app, [*args, "--jobs", "0"])
    assert bad.exit_code == 2 and "--jobs" in bad.output


def test_compressed_input_and_stdin_are_not_split(tmp_path: Path, generated: Path) -> None:
    import gzip

    packed = tmp_path / "gen.log.gz"
    packed.write_bytes(gzip.compress(generated.read_bytes()))
    assert splittable_size(str(packed)) is None and splittable_size("-") is None
    assert splittable_size(str(generated)) == generated.stat().st_size
