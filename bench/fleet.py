"""The fleet benchmark: `llamadiag fleet` over a generated fleet, in three modes.

A fleet of --logs logs (--total bytes in all) is generated once into bench/out/ (git ignores
it) from bench/gen.py's building blocks: each log is one instance in one style (default, lv4,
journald, ansi colours, a b5400 docker -t era, raw, or a compose service prefix), with the
failures of the shipped rules spliced in at an interval that varies per log (some logs have
none), and a modification time spread over two weeks.

Modes, each in its own child process (so its peak RSS and CPU are its own), alternated per
round:
  serial   one process (`--processes 1`)
  pool     the embedded local process pool of --workers processes
  dask     a Dask LocalCluster of --workers worker processes (started inside the timing)
Reported per mode: median wall time, CPU time (the child and its workers), the speed-up over
serial, peak RSS per worker (max over workers), and the SHA-256 of the JSON report (all equal).

    python bench/fleet.py [--logs 200] [--total 200M] [--workers 2] [--rounds 2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

import gen  # noqa: E402

STYLES = ("default", "lv4", "journald", "ansi", "legacy", "raw", "compose")
BYTES_PER_REQUEST = {"default": 1350, "lv4": 2680, "journald": 1850, "ansi": 1450, "legacy": 730, "raw": 510}
DAY0 = 1_780_000_000


def _injector(pool: list[list[str]], start: int):  # type: ignore[no-untyped-def]
    """The shipped rules' failures in turn, from a per-log starting point."""
    turn = [start]

    def inject() -> list[str]:
        turn[0] += 1
        return pool[turn[0] % len(pool)]

    return inject


def generate_fleet(folder: Path, logs: int, total: int) -> None:
    """The fleet's logs, one per instance, deterministic."""
    pool = gen.failures()
    per_log = total // logs
    for i in range(logs):
        r = random.Random(i)
        style = STYLES[i % len(STYLES)]
        base = "default" if style == "compose" else style
        every = (0, 300, 800, 2000, 10**9)[i % 5]  # 10**9: a healthy instance
        inject = _injector(pool, i)

        lines: list[str] = []
        size = 0
        while size < per_log:
            n = max(50, (per_log - size) // BYTES_PER_REQUEST[base] + 1)
            body = gen.session(base, r, n, inject, every or 150)
            if style == "compose":
                body = [f"llama-{i % 3 + 1}  | {line}" for line in body]
            lines += body
            size += sum(len(line) + 1 for line in body)
        rack = f"rack-{i % 8}"
        path = folder / rack / f"node-{i:03d}-{style}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        t = DAY0 + (i * 7919 % 14) * 86400 + i * 60
        os.utime(path, (t, t))


def _usage() -> tuple[int, float, int]:
    """(pid, CPU seconds, peak RSS KiB) of the process that runs it."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return os.getpid(), u.ru_utime + u.ru_stime, u.ru_maxrss


def _usage_after_pause(_: int) -> tuple[int, float, int]:
    time.sleep(1.0)  # long enough that each pool process takes one of these
    return _usage()


def child(mode: str, folder: Path, workers: int) -> dict:
    """One timed fleet run in this process (called in a child of the benchmark)."""
    from llamadiag import api
    from llamadiag.features import fleet

    k = api.load_knowledge()
    tasks, bad = fleet.expand([str(folder)])
    assert not bad, bad
    start, cpu0 = time.perf_counter(), time.process_time()
    usage: list[tuple[int, float, int]] = []  # per worker, taken after the work
    if mode == "serial":
        summary = fleet.run(tasks, fleet.SerialBackend())
    elif mode == "pool":
        import concurrent.futures as cf

        with cf.ProcessPoolExecutor(workers) as pool:
            summary = fleet.run(tasks, fleet.PoolBackend(pool))
            wall_work = time.perf_counter() - start
            usage = list({u[0]: u for u in pool.map(_usage_after_pause, range(workers))}.values())
    else:
        from llamadiag.features.fleet.dask_backend import DaskBackend, dask_client

        with dask_client(workers=workers) as client:
            summary = fleet.run(tasks, DaskBackend(client))
            wall_work = time.perf_counter() - start
            usage = list(client.run(_usage).values())
    if mode == "serial":
        wall_work = time.perf_counter() - start
        usage = [(os.getpid(), time.process_time() - cpu0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)]
    own_cpu = time.process_time() - cpu0 if mode != "serial" else 0.0
    report = fleet.build_report(summary, k).model_dump_json(indent=2)
    cpus = [u[1] for u in usage]
    return {
        "mode": mode,
        "wall_s": wall_work,  # from the first log handed out to the merged summary
        "cpu_s": own_cpu + sum(cpus),  # this process (expansion, merges for the pool) and the workers
        "worker_cpu_s": cpus,
        # on free cores the run takes as long as its busiest worker: total CPU / busiest worker's CPU
        "cpu_parallelism": sum(cpus) / max(cpus),
        "worker_peak_rss_mib": max(u[2] for u in usage) / 1024,
        "report_sha256": hashlib.sha256(report.encode()).hexdigest(),
        "instances": json.loads(report)["instances"],
        "failures": len(json.loads(report)["failures"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", type=int, default=200)
    ap.add_argument("--total", default="200M", help="size of the whole fleet (K, M, G suffixes)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", default="serial,pool,dask")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.dir, args.workers)))
        return
    total = gen.parse_size(args.total)
    folder = OUT / f"fleet-{args.logs}-{args.total}"
    if not folder.exists():
        print(f"generating {folder} ...", file=sys.stderr)
        generate_fleet(folder, args.logs, total)
    size = sum(p.stat().st_size for p in folder.rglob("*.log"))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    modes = args.modes.split(",")
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for rnd in range(args.rounds):
        for mode in modes if rnd % 2 == 0 else list(reversed(modes)):  # alternate: load drifts
            cmd = [sys.executable, __file__, "--child", mode, "--dir", str(folder), "--workers", str(args.workers)]
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            runs[mode].append(result)
            print(f"round {rnd}: {mode}: {result['wall_s']:.1f} s", file=sys.stderr)
    serial_wall = statistics.median(r["wall_s"] for r in runs.get("serial", [])) if "serial" in runs else None
    rows = []
    for mode, results in runs.items():
        wall = statistics.median(r["wall_s"] for r in results)
        rows.append(
            {
                "mode": mode,
                "workers": 1 if mode == "serial" else args.workers,
                "wall_s": round(wall, 2),
                "walls": [round(r["wall_s"], 2) for r in results],
                "cpu_s": round(statistics.median(r["cpu_s"] for r in results), 2),
                "worker_cpu_s": [[round(c, 1) for c in r["worker_cpu_s"]] for r in results],
                "cpu_parallelism": round(statistics.median(r["cpu_parallelism"] for r in results), 2),
                "mb_per_s": round(size / 1e6 / wall, 1),
                "speedup_vs_serial": round(serial_wall / wall, 2) if serial_wall else None,
                "worker_peak_rss_mib": round(max(r["worker_peak_rss_mib"] for r in results), 1),
                "report_sha256": results[0]["report_sha256"][:16],
                "same_report_every_round": len({r["report_sha256"] for r in results}) == 1,
            }
        )
    same = len({r["report_sha256"] for rs in runs.values() for r in rs}) == 1
    summary = {
        "logs": args.logs,
        "bytes": size,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "identical_report_in_all_modes": same,
        "modes": rows,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "fleet-results.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
