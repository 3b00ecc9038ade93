"""Peak RSS of `llamadiag explain` per log size, engine and output format (issue #11's memory target).

Per size (bench/gen.py's log, as bench/run.py makes it), every pair of engine (hyperscan,
stdlib) and format (the text view in a pipe, `-f json`) runs `--rounds` times, the pairs
alternating within each round so that a change in the machine's load spreads over all of them.
Each child's peak RSS comes from GNU time (else `wait4`), its CPU time (user + system) from
`wait4`. One warm-up run first fills the start-up cache. `--timeline` also samples one json
run's resident set every 0.1 s from /proc, to show where in the run the memory grows.
`--where` runs one `explain -f json` per engine with the analyzer watched after each block:
each block where the peak rises by 0.5 MiB or more is printed with glibc's heap (its size and
what is in use, `mallinfo2`) and the runs read so far, to tell what lives (in use grows) from
what is fragmentation (the heap grows, in use does not).

    python bench/memory.py --sizes 10M,200M,1G [--rounds 3] [--timeline 1G] [--where 1G]
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


# the child of `--where`: explain with Analyzer.feed_bytes wrapped to report each rise of the peak
WHERE = r"""
import ctypes, sys
from pathlib import Path
import llamadiag.engine.analyze as an
from llamadiag.cli import entry

class Info(ctypes.Structure):
    names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    _fields_ = [(n, ctypes.c_size_t) for n in names.split()]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
feed, seen = an.Analyzer.feed_bytes, {"blocks": 0, "peak": 0.0}

def peak():
    lines = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in lines if line.startswith("VmHWM")) / 1024

def watched(self, block):
    done = feed(self, block)
    seen["blocks"] += 1
    now = peak()
    if now >= seen["peak"] + 0.5:
        m = libc.mallinfo2()
        heap, used = m.arena / 2**20, m.uordblks / 2**20
        print(f"block {seen['blocks']}: peak {now:.1f} MiB, heap {heap:.1f} (in use {used:.1f}),"
              f" runs {self.summary.run_count}", flush=True)
        seen["peak"] = now
    return done

an.Analyzer.feed_bytes = watched
sys.argv = ["llamadiag", "explain", sys.argv[1], "-f", "json", "--no-progress", "-o", "/dev/null"]
try:
    entry.main()
finally:
    print(f"end: peak {peak():.1f} MiB", flush=True)
"""


def where(size: str, engines: list[str]) -> None:
    """Per engine, the blocks where `explain`'s peak rises, with glibc's heap (see the doc)."""
    log = make_log("gen", size)
    for engine in engines:
        print(f"where ({size}, {engine}, json):", flush=True)
        subprocess.run([sys.executable, "-c", WHERE, str(log)], env=env_for(engine), check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10M,200M,1G")
    ap.add_argument("--engines", default="hyperscan,stdlib")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeline", metavar="SIZE", help="also sample one json run's RSS over time at this size")
    ap.add_argument("--where", metavar="SIZE", help="only: the blocks where the peak rises, per engine, at this size")
    args = ap.parse_args()
    if args.where:
        where(args.where, args.engines.split(","))
        return
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
