"""A big plain log in the fleet is scanned as byte ranges (one leaf each) and joined per log: the
fleet report is byte for byte the one without splitting, in 1 process, a pool of 2 and a Dask
LocalCluster; where a planned edge cannot be joined, the log is scanned whole and the report is
still the same. The "big" log is small here (the real logs one after the other, about 0.3 MB):
the threshold is lowered instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llamadiag import api
from llamadiag.features import fleet
from llamadiag.features.fleet import graph
from llamadiag.features.fleet.perlog import join_summary, summarize_piece
from tests.paths import SAMPLES

SPLIT_ABOVE = 60_000  # bytes: the big log gets about 5 pieces, the sample logs stay whole


@pytest.fixture(scope="module")
def fleet_with_big_log(fleet_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample fleet plus one multi-run log (the real llama-server logs one after the other;
    not the router's: its children's lines are other instances, and a range that ends inside
    one of their runs rightly cannot be joined, which the test after this one covers)."""
    root = tmp_path_factory.mktemp("split") / "fleet"
    shutil.copytree(fleet_dir, root)  # modification times kept: the same "seen" times
    logs = [p for p in sorted((SAMPLES / "real").glob("*.log")) if not p.name.startswith("router-")]
    real = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in logs)
    big = root / "gpu-d" / "multi.log"
    big.parent.mkdir()
    big.write_bytes(real)
    os.utime(big, (1_780_100_000, 1_780_100_000))
    return root


@pytest.fixture(scope="module")
def knowledge() -> api.Knowledge:
    return api.load_knowledge()


def _json(root: Path, backend: fleet.Backend, k: api.Knowledge, split_above: int) -> str:
    tasks, bad = fleet.expand([str(root)])
    assert not bad
    summary = fleet.run(tasks, backend, knowledge=k, split_above=split_above)
    return fleet.build_report(summary, k).model_dump_json(indent=2)


def _all_ways(root: Path, k: api.Knowledge) -> list[str]:
    """The report with splitting in 1 process, a pool of 2 and a Dask LocalCluster of 2."""
    out = [_json(root, fleet.SerialBackend(), k, SPLIT_ABOVE)]
    with fleet.WorkerPool(2) as pool:
        out.append(_json(root, fleet.PoolBackend(pool), k, SPLIT_ABOVE))
    if _has_dask():
        from llamadiag.features.fleet.dask_backend import DaskBackend, dask_client

        with dask_client(workers=2) as client:
            out.append(_json(root, DaskBackend(client), k, SPLIT_ABOVE))
    return out


def _has_dask() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def _big_task(root: Path) -> fleet.LogTask:
    tasks, _ = fleet.expand([str(root)])
    return next(t for t in tasks if t.name == "gpu-d/multi")


def test_a_big_log_split_into_ranges_gives_the_same_report(fleet_with_big_log: Path, knowledge: api.Knowledge) -> None:
    whole = _json(fleet_with_big_log, fleet.SerialBackend(), knowledge, 0)
    tasks, _ = fleet.expand([str(fleet_with_big_log)])
    splits = graph.plan_splits(tasks, SPLIT_ABOVE, knowledge)
    # the split is real: only the big log, in several ranges, and every edge joins (no fallback)
    assert [tasks[i].name for i in splits] == ["gpu-d/multi"]
    (spans,) = splits.values()
    assert len(spans) >= 4
    big = _big_task(fleet_with_big_log)
    assert join_summary(big, (), tuple(summarize_piece(big, s, e) for s, e in spans)) is not None
    assert '"gpu-d/multi"' in whole
    assert _all_ways(fleet_with_big_log, knowledge) == [whole] * (3 if _has_dask() else 2)


def test_a_log_whose_edge_cannot_be_joined_is_scanned_whole(
    fleet_with_big_log: Path, knowledge: api.Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _json(fleet_with_big_log, fleet.SerialBackend(), knowledge, 0)
    big = _big_task(fleet_with_big_log)
    data = Path(big.url).read_bytes()
    # edges at line starts in the middle of runs (where no planner would cut): they cannot join
    cuts = [data.index(b"\n", len(data) * i // 3) + 1 for i in (1, 2)]
    spans = [(0, cuts[0]), (cuts[0], cuts[1]), (cuts[1], len(data))]
    assert join_summary(big, (), tuple(summarize_piece(big, s, e) for s, e in spans)) is None
    monkeypatch.setattr(graph.api, "plan_pieces", lambda source, k, pieces: spans)  # planned here, not in workers
    assert _all_ways(fleet_with_big_log, knowledge) == [whole] * (3 if _has_dask() else 2)


def test_split_above_option_of_the_command(tmp_path: Path, knowledge: api.Knowledge) -> None:
    # a crash loop of about 1.1 MB: `--split-above 1` (MB) splits it in two ranges that join
    crash = tmp_path / "node-1" / "crash.log"
    crash.parent.mkdir()
    crash.write_bytes((SAMPLES / "real" / "cuda-oom-ctx-fit-off-lv4.log").read_bytes() * 110)
    tasks, _ = fleet.expand([str(tmp_path)])
    (spans,) = graph.plan_splits(tasks, 1 << 20, knowledge).values()
    assert len(spans) == 2
    assert join_summary(tasks[0], (), tuple(summarize_piece(tasks[0], s, e) for s, e in spans)) is not None

    def fleet_json(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "llamadiag", "fleet", str(tmp_path), "-f", "json", "--no-progress", *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 1, done.stderr  # the out-of-memory failure
        return done.stdout

    assert fleet_json("-p", "2", "--split-above", "1") == fleet_json("-p", "1", "--split-above", "0")


def test_ranges_over_the_template_cap_are_not_joined(
    fleet_with_big_log: Path, knowledge: api.Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a range that hit the cap of unmatched templates may have dropped lines of a group that the
    # ranges before it hold: its join is refused and the log read whole, the same report again
    monkeypatch.setattr("llamadiag.engine.unmatched.MAX_TEMPLATES", 3)
    whole = _json(fleet_with_big_log, fleet.SerialBackend(), knowledge, 0)
    big = _big_task(fleet_with_big_log)
    tasks, _ = fleet.expand([str(fleet_with_big_log)])
    (spans,) = graph.plan_splits(tasks, SPLIT_ABOVE, knowledge).values()
    assert join_summary(big, (), tuple(summarize_piece(big, s, e) for s, e in spans)) is None
    assert _json(fleet_with_big_log, fleet.SerialBackend(), knowledge, SPLIT_ABOVE) == whole
