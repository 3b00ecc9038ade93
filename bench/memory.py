"""Peak RSS of `llamadiag explain` per log size, engine and output format (issue #11's memory target).

Per size (bench/gen.py's log, as bench/run.py makes it), every pair of engine (hyperscan,
stdlib) and format (the text view in a pipe, `-f json`) runs `--rounds` times, the pairs
alternating within each round so that a change in the machine's load spreads over all of them.
Each child's peak RSS comes from GNU time (else `wait4`), its CPU time (user + system) from
`wait4`. One warm-up run first fills the start-up cache. `--timeline` also samples one json
run's resident set every 0.1 s from /proc, to show where in the run the memory grows.

    python bench/memory.py --sizes 10M,200M,1G [--rounds 3] [--timeline 1G]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import env_for, llamadiag, make_log, timed, warm  # noqa: E402

FORMATS = {"text": [], "json": ["-f", "json"]}


def measure(sizes: list[str], engines: list[str], rounds: int) -> list[dict]:
    """Rows of (size, engine, format): peak RSS of every round (MiB), median CPU seconds."""
    rows = []
    for size in sizes:
        log = make_log("gen", size)
        warm(log)
        timed(llamadiag("explain", str(log), "-f", "json", "--no-progress"), env_for(None))  # the cache
        peaks: dict[tuple[str, str], list[float]] = {}
        cpus: dict[tuple[str, str], list[float]] = {}
        for _ in range(rounds):
            for engine in engines:
                for fmt, args in FORMATS.items():
                    _, peak, _, _, cpu = timed(llamadiag("explain", str(log), *args, "--no-progress"), env_for(engine))
                    peaks.setdefault((engine, fmt), []).append(round(peak / 1024, 1))
                    cpus.setdefault((engine, fmt), []).append(cpu)
        for (engine, fmt), mib in peaks.items():
            row = {"size": size, "engine": engine, "format": fmt, "peak_rss_mib": mib}
            row["cpu_s_median"] = round(statistics.median(cpus[(engine, fmt)]), 2)
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    return rows


def timeline(size: str, engine: str | None = None, every: float = 0.1) -> list[tuple[float, float]]:
    """(seconds since start, RSS MiB) of one `explain -f json` run, sampled from /proc."""
    log = make_log("gen", size)
    cmd = llamadiag("explain", str(log), "-f", "json", "--no-progress")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env_for(engine))
    start, samples = time.perf_counter(), []
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            rss = next(line for line in status.read_text().splitlines() if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            break
        samples.append((round(time.perf_counter() - start, 1), round(int(rss.split()[1]) / 1024, 1)))
        time.sleep(every)
    return samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10M,200M,1G")
    ap.add_argument("--engines", default="hyperscan,stdlib")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeline", metavar="SIZE", help="also sample one json run's RSS over time at this size")
    args = ap.parse_args()
    rows = measure([s.strip() for s in args.sizes.split(",") if s.strip()], args.engines.split(","), args.rounds)
    print("| size | engine | format | peak RSS per round (MiB) | max | CPU s (median) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        peaks = r["peak_rss_mib"]
        listed = ", ".join(str(p) for p in peaks)
        print(f"| {r['size']} | {r['engine']} | {r['format']} | {listed} | {max(peaks)} | {r['cpu_s_median']} |")
    if args.timeline:
        samples = timeline(args.timeline)
        every = max(1, len(samples) // 60)
        print(f"timeline ({args.timeline}, json): " + " ".join(f"{t}s:{m}" for t, m in samples[::every]))
        print(f"last samples: {samples[-8:]}")


if __name__ == "__main__":
    main()
