#!/usr/bin/env python3
"""Both cores: `explain --jobs 1` against `--jobs 2` (or any counts) on the same logs.

Each log is read by `llamadiag explain LOG -f json --no-progress --jobs N` for each N in turn,
round after round (alternating, so a change in the machine's load hits both); each child's
wall time, CPU time (user + system of it and of the processes it waited for: the range
workers, from wait4) and peak RSS are taken, and the outputs are checked byte for byte.
Reported: the median over rounds, the throughput of each (MB/s of wall and of CPU time),
and the load average before and after.

On a loaded machine with the kernel's autogroup scheduling, the processes of one session share
one session's CPU share, so wall time cannot show what a second idle core gives. `--ranges N`
measures it from CPU time instead, in this process: planning the ranges, each range's scan
(what one worker does) and the merge, against the scan of the whole file; the critical path
(plan + the longest range + merge) is the wall time on N idle cores, start-up aside.

    python bench/jobs.py bench/out/bench-200M.log [more logs] [--jobs 1,2] [--rounds 3]
    python bench/jobs.py bench/out/bench-200M.log --ranges 2
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def child(cmd: list[str]) -> tuple[float, float, int, str]:
    """Wall s, CPU s (with waited-for children), peak RSS KiB and the sha256 of stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    digest = hashlib.sha256()
    for chunk in iter(lambda: proc.stdout.read(1 << 16), b""):  # type: ignore[union-attr]
        digest.update(chunk)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, digest.hexdigest()


def critical_path(log: Path, pieces: int) -> None:
    """CPU of the plan, of each range's scan and of the merge, against one scan of the whole file."""
    from llamadiag import api
    from llamadiag.engine import ranges
    from llamadiag.source.ranges import read_range, window

    k = api.load_knowledge()
    size = log.stat().st_size

    def scan(start: int, end: int) -> tuple[ranges.RangeScan, float]:
        began = time.process_time()
        base, blocks, read = read_range(str(log), start, end)
        options = ranges.ScanOptions()
        out = ranges.scan_range(k, blocks, start=start, end=end, line_base=base, options=options, read=read)
        return out, time.process_time() - began

    began = time.process_time()
    spans = ranges.plan(k, size, pieces, lambda offset, limit: window(str(log), offset, limit))
    plan_s = time.process_time() - began
    parts = [scan(s, e) for s, e in spans]
    began = time.process_time()
    merged = parts[0][0]
    for part, _ in parts[1:]:
        merged = ranges.combine(merged, part)  # raises where an edge does not hold (scanned again)
    merge_s = time.process_time() - began
    whole, whole_s = scan(0, size)
    assert merged.result() == whole.result(), "ranges and whole file differ"
    longest = max(t for _, t in parts)
    path = plan_s + longest + merge_s
    mb = size / 1e6
    print(
        f"{log.name} ({mb:.1f} MB, {merged.run_count} runs) in {len(spans)} ranges: whole {whole_s:.2f} s CPU; "
        f"plan {plan_s:.3f} s, ranges {', '.join(f'{t:.2f}' for _, t in parts)} s, merge {merge_s:.3f} s; "
        f"critical path {path:.2f} s = {whole_s / path:.2f}x ({mb / path:.1f} MB/s against {mb / whole_s:.1f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", type=Path)
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ranges", type=int, default=0, help="measure the critical path of N ranges (see above)")
    args = ap.parse_args()
    if args.ranges:
        print(f"load average before: {os.getloadavg()}")
        for log in args.logs:
            critical_path(log, args.ranges)
        print(f"load average after: {os.getloadavg()}")
        return
    counts = [int(j) for j in args.jobs.split(",")]
    print(f"load average before: {os.getloadavg()}")
    for log in args.logs:
        mb = log.stat().st_size / 1e6
        runs: dict[int, list[tuple[float, float, int, str]]] = {j: [] for j in counts}
        for _ in range(args.rounds):
            for j in counts:
                cmd = [sys.executable, "-m", "llamadiag", "explain", str(log), "-f", "json", "--no-progress"]
                runs[j].append(child([*cmd, "--jobs", str(j)]))
        digests = {r[3] for rs in runs.values() for r in rs}
        print(f"{log.name} ({mb:.1f} MB): outputs {'identical' if len(digests) == 1 else 'DIFFER'}")
        for j, rs in runs.items():
            wall = statistics.median(r[0] for r in rs)
            cpu = statistics.median(r[1] for r in rs)
            rss = max(r[2] for r in rs) / 1024
            walls = ", ".join(f"{r[0]:.1f}" for r in rs)
            print(
                f"  --jobs {j}: wall {wall:.2f} s ({mb / wall:.1f} MB/s) [{walls}], "
                f"CPU {cpu:.2f} s ({mb / cpu:.1f} MB/s), peak RSS {rss:.0f} MiB"
            )
        print(f"  load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
