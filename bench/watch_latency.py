"""Detection latency of `llamadiag watch`: from the line that completes a finding's evidence
being written into the pipe, to the finding event being read from watch's output.

A realistic log (a shipped sample: startup, requests, a failure) is replayed in a loop at a
fixed rate into `python -m llamadiag watch - --format jsonl`. Each replay starts a new server
run, so each loop yields one new finding. The writer keeps the write time of every line; the
reader matches each finding to its last evidence line.

    python bench/watch_latency.py --rate 1000 --rate 10000 --seconds 20 [--follow] [--busy]

With --follow the lines are appended to a file that watch follows (`watch --follow FILE`)
instead of being piped to its stdin.

The latency includes watch's settle window (20 lines after the evidence, or 0.2 s of quiet),
since that is what an operator waits for.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
SAMPLE = ROOT / "sample_logs" / "seed-b11503-default.log"


def measure(rate: int, seconds: float, sample: Path, target: Path | None) -> dict:
    cycle = sample.read_bytes().splitlines(keepends=True)
    total = int(rate * seconds)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    source = [str(target), "--follow"] if target else ["-"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "llamadiag", "watch", *source, "--format", "jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    written = [0.0] * (total + 1)  # write time by line number (1-based)
    latencies: list[float] = []

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            now = time.perf_counter()
            event = json.loads(raw)
            if event["type"] == "finding":
                last = max(e["line"] for e in event["finding"]["evidence"])
                if last <= total and written[last]:
                    latencies.append(now - written[last])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(1.5)  # start-up (rules, imports) is not detection latency
    assert proc.stdin is not None
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT) if target else proc.stdin.fileno()
    start = time.perf_counter()
    sent = 0
    while sent < total:
        now = time.perf_counter()
        due = min(total, int((now - start) * rate) + 1)
        if due > sent:
            chunk = b"".join(cycle[i % len(cycle)] for i in range(sent, due))
            stamp = time.perf_counter()
            for n in range(sent + 1, due + 1):
                written[n] = stamp
            os.write(fd, chunk)
            sent = due
        else:
            time.sleep(max(0.0, start + (sent + 1) / rate - now))
    elapsed = time.perf_counter() - start
    if target:
        time.sleep(1.0)  # let the last events out, then stop the follower
        proc.terminate()
    proc.stdin.close()
    proc.wait(timeout=120)
    reader.join(timeout=10)
    ordered = sorted(latencies)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return {
        "input": "follow" if target else "pipe",
        "rate": rate,
        "achieved_rate": round(total / elapsed),
        "findings": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2) if ordered else None,
        "p90_ms": round(pick(0.90), 2) if ordered else None,
        "p99_ms": round(pick(0.99), 2) if ordered else None,
        "max_ms": round(ordered[-1] * 1000, 2) if ordered else None,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, action="append", help="lines per second (repeatable)")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    parser.add_argument(
        "--busy",
        action="store_true",
        help="replay a generated request-heavy log (bench/gen.py, a failure every 60 requests) instead of "
        "the seed sample, whose every ~100 lines are a whole server start",
    )
    parser.add_argument("--follow", action="store_true", help="append to a followed file instead of a pipe")
    args = parser.parse_args()
    sys.setswitchinterval(0.0005)  # the reader thread must see each event at once, not after 5 ms
    if args.busy:
        from gen import generate

        args.sample = ROOT / "bench" / "out" / "busy-stream.log"
        args.sample.parent.mkdir(exist_ok=True)
        generate(6 << 20, args.sample, seed=5, inject_every=60)
    for rate in args.rate or [1000, 10000]:
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "server.log" if args.follow else None
            print(json.dumps(measure(rate, args.seconds, args.sample, target)), flush=True)


if __name__ == "__main__":
    main()
