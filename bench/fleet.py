"""The fleet benchmark: `llamadiag fleet` over a generated fleet, in three modes.

The fleet (--logs logs, --total bytes in all, default 200 logs and 1 GiB) is generated once into
a cache folder outside the checkout ($LLAMADIAG_BENCH_CACHE, else the user cache folder's
`bench/`), keyed by the generator's parameters and the hash of the generators and of the sample
logs they splice in; generation is timed and reported apart from the measurement. Each log is one
instance of one shape:

- bench/gen.py styles: default, lv4, journald, ansi colours, b5400 docker -t, raw;
- bench/gen_requests.py eras and wrappers: b5060 (bare and with prefixes), b7003 docker -t,
  b9700 -lv 4 (bare and in journalctl short-iso), b11 -lv 4, b11 in journalctl;
- wrappers holding several servers: a docker compose file of three services, a
  `kubectl logs --prefix` file of two pods;

with failures spliced in at an interval that varies per log (the shipped rules' positive examples
for gen.py styles, the real failing logs of sample_logs/real/ for gen_requests.py shapes; one log
in five healthy), sizes spread log-normally (a few logs of tens of MB, many small ones, as in a
real fleet) and modification times over two weeks.

Modes, each in its own child process (so its CPU and memory are its own), alternated per round:
  serial   one process (`--processes 1`)
  pool     the embedded local process pool of --workers processes
  dask     a Dask LocalCluster of --workers worker processes (its start is inside the wall time
           and also reported alone), in this environment: run the bench with a `[fleet]` venv's
           python to measure what `--workers N` gives (no numpy since --html draws with plotly)
  cluster  an existing Dask cluster (`--scheduler`) started from a worker environment
           (--worker-python: a venv with `pip install 'llamadiag[fleet-worker]'`, no numpy): a
           `dask scheduler` and a `dask worker` of --workers processes; the parent's CPU does not
           count the scheduler's and nannies' then (they are other processes)
Reported per mode: wall time, CPU time of the parent and of each worker (read from /proc), the
speed-up over serial, the CPU efficiency (workers' CPU / (wall x workers): 1.0 when every worker
computed all the time), peak RSS of each worker (VmHWM), for Dask also each worker's RSS before any
task, the load average around the run, and the SHA-256 of the JSON report (equal in all modes).

    python bench/fleet.py [--logs 200] [--total 1G] [--workers 2] [--rounds 2] [--modes serial,pool,dask]
    python bench/fleet.py --modes pool,cluster --worker-python .venv-worker/bin/python
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import hashlib
import json
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))
# bench/gen.py and bench/gen_requests.py (with PyYAML) are imported where a log is generated,
# not here: a LocalCluster's spawned workers import this main module, and its imports would
# count in every worker's memory (+1.8 MiB measured), which `llamadiag fleet` does not pay

GEN_STYLES = ("default", "lv4", "journald", "ansi", "legacy", "raw")
REQ_SHAPES = ("b5060", "b5060-prefix", "b7003-docker", "b9700-lv4", "b9700-iso", "b11-lv4", "b11-journald")
KINDS = (*GEN_STYLES, *REQ_SHAPES, "compose", "kubectl")
EVERY = (0, 300, 800, 2000, 150)  # requests between failures, by log; 0: a healthy instance
DAY0 = 1_780_000_000
MIB = 1 << 20


# ---------------------------------------------------------------- the fleet, generated once


def fleet_sizes(logs: int, total: int, seed: int) -> list[int]:
    """Log sizes spread log-normally around total/logs (the biggest about ten times the median)."""
    r = random.Random(seed)
    weights = [r.lognormvariate(0, 0.9) for _ in range(logs)]
    scale = total / sum(weights)
    return [max(64 << 10, int(w * scale)) for w in weights]


def _sessions(kind: str, r: random.Random, every: int, left: int):  # type: ignore[no-untyped-def]
    """The next server session of a log of this kind, as lines (wrapped for compose/kubectl)."""
    n = max(30, min(r.randint(300, 4000), left // 900 + 30))  # no 5 MB session for a 100 kB log
    if kind in GEN_STYLES or kind == "compose":
        style = "default" if kind == "compose" else kind
        pool = _pools()[0]
        turn = [r.randrange(len(pool))]

        def inject() -> list[str]:
            turn[0] += 1
            return pool[turn[0] % len(pool)]

        import gen

        body = gen.session(style, r, n, inject, every or 10**9)
        if kind == "compose":  # a session (a start of the server) of one of three services
            service = f"llama-{r.randint(1, 3)}"
            return [f"{service}  | {line}" for line in body]
        return body
    shape = "b11-lv4" if kind == "kubectl" else kind
    import gen_requests

    body = gen_requests.session(shape, r, n, _pools()[1] if every else [], every or 10**9)
    if kind == "kubectl":
        pod = f"llama-{r.randint(0, 1)}"
        return [f"[pod/{pod}/llama-server] {line}" for line in body]
    return body


_POOLS: list[tuple[list[list[str]], list[list[str]]]] = []


def _pools() -> tuple[list[list[str]], list[list[str]]]:
    """The failures to splice in: the rules' positive examples (gen.py), the real failing logs."""
    if not _POOLS:
        import gen
        import gen_requests

        _POOLS.append((gen.failures(), gen_requests.failures()))
    return _POOLS[0]


def generate_log(folder: Path, i: int, size: int, seed: int) -> int:
    """Log `i` of the fleet, `size` bytes cut at a line end; deterministic per (seed, i)."""
    r = random.Random(seed * 100_003 + i)
    kind = KINDS[i % len(KINDS)]
    every = EVERY[i % len(EVERY)]
    path = folder / f"rack-{i % 8}" / f"node-{i:03d}-{kind}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with path.open("w", encoding="utf-8", newline="\n", buffering=1 << 20) as f:
        while written < size:
            text = "\n".join(_sessions(kind, r, every, size - written)) + "\n"
            if written + len(text) > size:
                text = text[: text.rfind("\n", 0, size - written) + 1] or text[: text.find("\n") + 1]
            f.write(text)
            written += len(text.encode())
    t = DAY0 + (i * 7919 % 14) * 86400 + i * 60
    os.utime(path, (t, t))
    return written


def _generate_one(job: tuple[Path, int, int, int]) -> int:
    return generate_log(*job)


def fleet_key(logs: int, total: int, seed: int) -> str:
    """The cache key: the parameters, the generators' code and the sample logs they read."""
    import inspect

    h = hashlib.sha256(f"{logs}:{total}:{seed}:{KINDS}:{EVERY}".encode())
    for p in (HERE / "gen.py", HERE / "gen_requests.py"):
        h.update(p.read_bytes())
    for fn in (fleet_sizes, _sessions, generate_log):  # this file's generator, not its measuring
        h.update(inspect.getsource(fn).encode())
    for p in sorted((ROOT / "sample_logs").rglob("*.log")):
        h.update(p.name.encode() + p.read_bytes())
    for p in sorted((ROOT / "rules").rglob("*.yaml")):  # gen.py splices the rules' examples
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def cache_root() -> Path:
    """Where generated fleets are kept: outside the checkout, reused by later runs."""
    if os.environ.get("LLAMADIAG_BENCH_CACHE"):
        return Path(os.environ["LLAMADIAG_BENCH_CACHE"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("llamadiag", appauthor=False)) / "bench"


def fleet_folder(logs: int, total: int, seed: int, workers: int) -> tuple[Path, float | None]:
    """The fleet's folder, generated (on `workers` processes) unless the cache has it; and the
    seconds generation took (None when it came from the cache)."""
    folder = cache_root() / f"fleet-{logs}-{total >> 20}M-s{seed}-{fleet_key(logs, total, seed)}"
    done = folder / "complete.json"
    if done.exists():
        return folder, None
    print(f"generating {folder} ...", file=sys.stderr)
    start = time.perf_counter()
    sizes = fleet_sizes(logs, total, seed)
    jobs = sorted(((folder, i, s, seed) for i, s in enumerate(sizes)), key=lambda j: -j[2])
    with cf.ProcessPoolExecutor(workers) as pool:
        written = sum(pool.map(_generate_one, jobs))
    took = time.perf_counter() - start
    done.write_text(json.dumps({"logs": logs, "bytes": written, "seconds": round(took, 1)}))
    return folder, took


# ---------------------------------------------------------------- one measured run (a child)


def proc_usage(pid: int) -> dict[str, float]:
    """CPU seconds (user + system, the process's own threads), peak and current RSS of a live
    process, from /proc (Linux)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    tick = os.sysconf("SC_CLK_TCK")
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {
        "pid": pid,
        "cpu_s": (int(fields[11]) + int(fields[12])) / tick,
        "peak_rss_mib": int(status["VmHWM"].split()[0]) / 1024,
        "rss_mib": int(status["VmRSS"].split()[0]) / 1024,
    }


def own_usage() -> dict[str, float]:
    """This process's usage (run on a Dask worker through `client.run`)."""
    return proc_usage(os.getpid())


@contextlib.contextmanager
def cluster_of(python: str, workers: int) -> Iterator[str]:
    """A Dask cluster started from another environment's `python` (`dask scheduler` and a
    `dask worker` of `workers` processes, one thread each, without the stack profiler, as the
    LocalCluster runs): its scheduler's address. The worker environment is what a worker host
    installs (`pip install 'llamadiag[fleet-worker]'`: no numpy, nor plotly or pySigma)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED="False")
    dask = [python, "-m", "dask"]
    procs = [
        subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], env=env),
        subprocess.Popen([*dask, "worker", address, "--nworkers", str(workers), "--nthreads", "1"], env=env),
    ]
    try:
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(30)


def child(mode: str, folder: Path, workers: int, worker_python: str = "") -> dict:
    """One timed fleet run in this process (called in a child of the benchmark)."""
    from llamadiag import api
    from llamadiag.features import fleet

    k = api.load_knowledge()
    tasks, bad = fleet.expand([str(folder)])
    assert not bad, bad
    load0 = os.getloadavg()[0]
    start, cpu0 = time.perf_counter(), time.process_time()
    bare: list[dict[str, float]] = []
    cluster_start_s = 0.0
    if mode == "serial":
        summary = fleet.run(tasks, fleet.SerialBackend(), knowledge=k)
        wall = time.perf_counter() - start
        usage = [{**own_usage(), "cpu_s": time.process_time() - cpu0}]
    elif mode == "pool":
        with fleet.WorkerPool(workers) as pool:
            summary = fleet.run(tasks, fleet.PoolBackend(pool), knowledge=k)
            wall = time.perf_counter() - start
            usage = [proc_usage(pid) for pid in pool.pids]  # read while they live
    else:
        from llamadiag.features.fleet.dask_backend import DaskBackend, dask_client

        with (
            cluster_of(worker_python, workers) if mode == "cluster" else contextlib.nullcontext(None)
        ) as scheduler, dask_client(workers=None if scheduler else workers, scheduler=scheduler) as client:
            client.wait_for_workers(workers)
            cluster_start_s = time.perf_counter() - start
            bare = list(client.run(own_usage).values())  # before any task: Dask's own cost
            summary = fleet.run(tasks, DaskBackend(client), knowledge=k)
            wall = time.perf_counter() - start
            usage = list(client.run(own_usage).values())
    parent_cpu = time.process_time() - cpu0 if mode != "serial" else 0.0
    load1 = os.getloadavg()[0]
    report = fleet.build_report(summary, k).model_dump_json(indent=2)
    cpus = [u["cpu_s"] for u in usage]
    return {
        "mode": mode,
        "wall_s": wall,  # from the first log handed out (or the cluster's start) to the merged summary
        "cluster_start_s": cluster_start_s,
        "parent_cpu_s": parent_cpu,  # expansion, hand-out, merges; for Dask also scheduler and nannies
        "worker_cpu_s": cpus,
        "cpu_s": parent_cpu + sum(cpus),
        "cpu_efficiency": sum(cpus) / (wall * len(cpus)),
        "worker_peak_rss_mib": [u["peak_rss_mib"] for u in usage],
        "worker_bare_rss_mib": [u["rss_mib"] for u in bare],
        "load_average": [round(load0, 2), round(load1, 2)],
        "report_sha256": hashlib.sha256(report.encode()).hexdigest(),
        "instances": json.loads(report)["instances"],
    }


# ---------------------------------------------------------------- the benchmark


def _row(mode: str, results: list[dict], workers: int, size: int, serial_wall: float | None) -> dict:
    wall = statistics.median(r["wall_s"] for r in results)
    return {
        "mode": mode,
        "workers": 1 if mode == "serial" else workers,
        "wall_s": round(wall, 1),
        "walls": [round(r["wall_s"], 1) for r in results],
        "cluster_start_s": [round(r["cluster_start_s"], 1) for r in results] if mode in ("dask", "cluster") else None,
        "cpu_s": [round(r["cpu_s"], 1) for r in results],
        "parent_cpu_s": [round(r["parent_cpu_s"], 1) for r in results],
        "worker_cpu_s": [[round(c, 1) for c in r["worker_cpu_s"]] for r in results],
        "cpu_efficiency": [round(r["cpu_efficiency"], 2) for r in results],
        "mb_per_s": round(size / 1e6 / wall, 2),
        "speedup_vs_serial": round(serial_wall / wall, 2) if serial_wall else None,
        "worker_peak_rss_mib": round(max(max(r["worker_peak_rss_mib"]) for r in results), 1),
        "worker_bare_rss_mib": [round(max(r["worker_bare_rss_mib"]), 1) for r in results if r["worker_bare_rss_mib"]],
        "load_average": [r["load_average"] for r in results],
        "report_sha256": results[0]["report_sha256"][:16],
        "same_report_every_round": len({r["report_sha256"] for r in results}) == 1,
    }


def main() -> None:
    """Generate (or reuse) the fleet, run the modes alternately, print and save the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", type=int, default=200)
    ap.add_argument("--total", default="1G", help="size of the whole fleet (K, M, G suffixes)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", default="serial,pool,dask", help="serial, pool, dask, cluster")
    ap.add_argument(
        "--worker-python",
        default="",
        help="the python of a worker environment (pip install 'llamadiag[fleet-worker]') for the cluster mode",
    )
    ap.add_argument("--out", type=Path, default=OUT / "fleet-results.json", help="where the figures are saved")
    ap.add_argument("--generate-only", action="store_true", help="generate the fleet, print its folder, stop")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.dir, args.workers, args.worker_python)))
        return
    import gen

    folder, generated_s = fleet_folder(args.logs, gen.parse_size(args.total), args.seed, args.workers)
    sizes = [p.stat().st_size for p in folder.rglob("*.log")]
    print(
        f"fleet: {folder} ({len(sizes)} logs, {sum(sizes) / 1e6:.1f} MB, largest {max(sizes) / 1e6:.1f} MB)"
        + (f", generated in {generated_s:.0f} s" if generated_s else ", from the cache"),
        file=sys.stderr,
    )
    if args.generate_only:
        return
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    modes = args.modes.split(",")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for rnd in range(args.rounds):
        for mode in modes if rnd % 2 == 0 else list(reversed(modes)):  # alternate: the load drifts
            cmd = [sys.executable, __file__, "--child", mode, "--dir", str(folder), "--workers", str(args.workers)]
            cmd += ["--worker-python", args.worker_python]
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            runs[mode].append(result)
            with args.out.with_suffix(".partial.jsonl").open("a") as partial:  # kept if a later run fails
                partial.write(json.dumps(result) + "\n")
            print(
                f"round {rnd}: {mode}: {result['wall_s']:.1f} s wall, {result['cpu_s']:.1f} s CPU, "
                f"load {result['load_average']}",
                file=sys.stderr,
            )
    serial_wall = statistics.median(r["wall_s"] for r in runs["serial"]) if runs.get("serial") else None
    rows = [_row(mode, results, args.workers, sum(sizes), serial_wall) for mode, results in runs.items()]
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "fleet": str(folder),
        "logs": len(sizes),
        "bytes": sum(sizes),
        "largest_log_bytes": max(sizes),
        "generated_s": round(generated_s, 1) if generated_s else None,
        "cpus": os.cpu_count(),
        "peak_rss_of_this_benchmark_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "identical_report_in_all_modes": len({r["report_sha256"] for rs in runs.values() for r in rs}) == 1,
        "modes": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2))
    print(json.dumps({**summary, "modes": None}, indent=2))
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
