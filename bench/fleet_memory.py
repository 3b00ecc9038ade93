"""Where a Dask fleet worker's memory goes: RSS (and, in a second cluster, tracemalloc) at points
of a worker's life, on a cluster started from a worker environment as `bench/fleet.py --modes
cluster` starts it (`dask scheduler` + `dask worker --nworkers N --nthreads 1`, no profiler).

Points, per worker: bare (Dask's own, before anything of ours), after importing the per-log work
(`llamadiag.features.fleet.perlog`), after the command's knowledge is handed over
(`DaskBackend.share_knowledge`), the biggest log summarised alone (its peak: the peak RSS is
reset first through /proc/self/clear_refs), then the whole fleet (the peak over all its logs).

    python bench/fleet_memory.py --total 100M --worker-python .venv-worker/bin/python [--tracemalloc]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fleet as bench  # noqa: E402  (bench/fleet.py: the fleet, the cluster, /proc readings)
import gen  # noqa: E402


def usage() -> dict[str, float]:
    """RSS now and peak since the last reset, on the worker (MiB)."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {
        "rss": round(int(status["VmRSS"].split()[0]) / 1024, 1),
        "peak": round(int(status["VmHWM"].split()[0]) / 1024, 1),
    }


def reset_peak() -> None:
    """Start the peak RSS (VmHWM) afresh (Linux: writing 5 to clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")


def import_perlog() -> None:
    """What the first task of ours imports on a worker."""
    import llamadiag.features.fleet.perlog  # noqa: F401


def traced() -> dict[str, Any]:
    """tracemalloc's current and peak (MiB), then its peak reset."""
    import tracemalloc

    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    return {"traced": round(cur / 2**20, 2), "traced_peak": round(peak / 2**20, 2)}


def top_files(limit: int = 12) -> list[tuple[str, float]]:
    """The files that allocated the memory tracemalloc sees now, biggest first (MiB)."""
    import tracemalloc

    stats = tracemalloc.take_snapshot().statistics("filename")
    return [(s.traceback[0].filename.split("site-packages/")[-1], round(s.size / 2**20, 2)) for s in stats[:limit]]


def start_tracing() -> None:
    """tracemalloc from now on (its own bookkeeping adds to RSS: use this run for shares only)."""
    import tracemalloc

    tracemalloc.start()


def measure(folder: Path, worker_python: str, workers: int, trace: bool) -> dict[str, Any]:
    """The points above on a fresh cluster."""
    from llamadiag import api
    from llamadiag.features import fleet
    from llamadiag.features.fleet.dask_backend import DaskBackend, dask_client
    from llamadiag.features.fleet.perlog import summarize

    k = api.load_knowledge()
    tasks, bad = fleet.expand([str(folder)])
    assert not bad, bad
    biggest = max(tasks, key=lambda t: t.size or 0)
    out: dict[str, Any] = {"biggest_log_mb": round((biggest.size or 0) / 1e6, 2)}
    with bench.cluster_of(worker_python, workers) as scheduler, dask_client(scheduler=scheduler) as client:
        client.wait_for_workers(workers)
        time.sleep(1)

        def point(name: str, extra: Any = None) -> None:
            out[name] = client.run(usage)
            if trace:
                for w, t in client.run(traced).items():
                    out[name][w].update(t)
            if extra is not None:
                out[name + "_top"] = extra

        if trace:
            client.run(start_tracing)
        point("bare")
        client.run(import_perlog)
        point("imported")
        backend = DaskBackend(client)
        backend.share_knowledge((), k)
        point("knowledge", client.run(top_files) if trace else None)
        client.run(reset_peak)
        # the biggest log on every worker, alone
        for w in client.scheduler_info()["workers"]:
            client.submit(summarize, biggest, (), pure=False, workers=[w]).result()
        point("biggest_log")
        client.run(reset_peak)
        fleet.run(tasks, backend, knowledge=k)
        point("whole_fleet", client.run(top_files) if trace else None)
    return out


def main() -> None:
    """Measure and print the points as JSON."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", type=int, default=200)
    ap.add_argument("--total", default="100M")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-python", required=True)
    ap.add_argument("--tracemalloc", action="store_true", help="also tracemalloc's figures (inflates RSS)")
    args = ap.parse_args()
    folder, _ = bench.fleet_folder(args.logs, gen.parse_size(args.total), args.seed, args.workers)
    os.environ.setdefault("PYTHONPATH", str(HERE.parent))
    print(json.dumps(measure(folder, args.worker_python, args.workers, args.tracemalloc), indent=1))


if __name__ == "__main__":
    main()
