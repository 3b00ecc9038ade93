"""Detection latency of `llamadiag watch`: from the line that completes a finding's evidence
being written into the pipe, to the finding event being read from watch's output.

A realistic log (a shipped sample: startup, requests, a failure) is replayed in a loop at a
fixed rate into `python -m llamadiag watch - --format jsonl`. Each replay starts a new server
run, so each loop yields one new finding. The writer keeps the write time of every line; the
reader matches each finding to its last evidence line.

    python bench/watch_latency.py --rate 1000 --rate 10000 --seconds 20 [--follow] [--busy]

With --follow the lines are appended to a file that watch follows (`watch --follow FILE`)
instead of being piped to its stdin.

With --idle the stream goes quiet after each finding's evidence: each sample (repeatable
--sample) is cut after each line that completes a finding's evidence (found with `explain -f
json` beforehand); each piece is written in one burst and followed by 0.6 s of silence (the
rest of the sample after its last finding is left out, so each copy starts a new run). The
lines before the completing one are written 0.1 s ahead, so the time measured is that of the
completing line alone, as the target of issue #11 defines it. The
latency then splits in two: findings whose rule is settled once their evidence is complete
(watch judges them on that line) and findings that wait for the 0.2 s of quiet.

    python bench/watch_latency.py --idle --rounds 30 --sample sample_logs/real/port-in-use.log ...

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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
SAMPLE = ROOT / "sample_logs" / "seed-b11503-default.log"


def start_watch(
    source: list[str], record: Callable[[int, float], None]
) -> tuple[subprocess.Popen[bytes], threading.Thread]:
    """`llamadiag watch SOURCE --format jsonl` in a child, and a thread that calls `record(line,
    time)` with the last evidence line of each finding event as it is read; returns once the
    child's start-up (rules, imports), which is not detection latency, is over."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "llamadiag", "watch", *source, "--format", "jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            now = time.perf_counter()
            event = json.loads(raw)
            if event["type"] == "finding":
                record(max(e["line"] for e in event["finding"]["evidence"]), now)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(1.5)
    return proc, reader


def measure(rate: int, seconds: float, sample: Path, target: Path | None) -> dict:
    cycle = sample.read_bytes().splitlines(keepends=True)
    total = int(rate * seconds)
    written = [0.0] * (total + 1)  # write time by line number (1-based)
    latencies: list[float] = []

    def record(last: int, now: float) -> None:
        if last <= total and written[last]:
            latencies.append(now - written[last])

    proc, reader = start_watch([str(target), "--follow"] if target else ["-"], record)
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


def evidence_ends(sample: Path) -> list[int]:
    """The lines that complete the evidence of the sample's findings (`explain -f json`), sorted."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "llamadiag", "explain", "-f", "json", str(sample)],
        capture_output=True,
        env=env,
        check=False,
    ).stdout
    return sorted({max(e["line"] for e in f["evidence"]) for f in json.loads(out)["findings"] if f["evidence"]})


def measure_idle(samples: list[Path], rounds: int) -> dict:
    """Latency when the stream goes quiet right after the evidence (see the module docstring)."""
    pieces: list[tuple[str, list[bytes]]] = []  # (sample, lines up to the next evidence end)
    for sample in samples:
        lines = sample.read_bytes().splitlines(keepends=True)
        start = 0
        for end in evidence_ends(sample):
            pieces.append((sample.name, lines[start:end]))
            start = end
    written: dict[int, tuple[float, str]] = {}  # evidence end line -> (write time, sample)
    latencies: dict[str, list[float]] = {}

    def record(last: int, now: float) -> None:
        if last in written:
            stamp, name = written[last]
            latencies.setdefault(name, []).append(now - stamp)

    proc, reader = start_watch(["-"], record)
    assert proc.stdin is not None
    fd = proc.stdin.fileno()
    line = 0
    for _ in range(rounds):
        for name, lines in pieces:
            os.write(fd, b"".join(lines[:-1]))  # the lines before the evidence's last one ...
            line += len(lines)
            time.sleep(0.1)  # ... are analysed first (less than the 0.2 s after which a partial match is judged)
            written[line] = (time.perf_counter(), name)
            os.write(fd, lines[-1])
            time.sleep(0.6)
    proc.stdin.close()
    proc.wait(timeout=120)
    reader.join(timeout=10)
    every = sorted(x for xs in latencies.values() for x in xs)
    at_once = [x for x in every if x < 0.2]  # judged on the evidence line, not released by quiet
    ms = lambda xs, q: round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 2) if xs else None  # noqa: E731
    return {
        "input": "pipe, idle after the evidence",
        "samples": len(samples),
        "pieces": len(pieces),
        "findings": len(every),
        "judged_at_once": len(at_once),
        "at_once_p50_ms": ms(at_once, 0.5),
        "at_once_p99_ms": ms(at_once, 0.99),
        "waited_for_quiet_p50_ms": ms([x for x in every if x >= 0.2], 0.5),
        "per_sample_median_ms": {k: round(statistics.median(v) * 1000, 1) for k, v in sorted(latencies.items())},
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, action="append", help="lines per second (repeatable)")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--sample", type=Path, action="append", help="log to replay (repeatable with --idle)")
    parser.add_argument("--idle", action="store_true", help="go quiet after each finding's evidence")
    parser.add_argument("--rounds", type=int, default=20, help="copies of each sample with --idle")
    parser.add_argument(
        "--busy",
        action="store_true",
        help="replay a generated request-heavy log (bench/gen.py, a failure every 60 requests) instead of "
        "the seed sample, whose every ~100 lines are a whole server start",
    )
    parser.add_argument("--follow", action="store_true", help="append to a followed file instead of a pipe")
    args = parser.parse_args()
    sys.setswitchinterval(0.0005)  # the reader thread must see each event at once, not after 5 ms
    if args.idle:
        print(json.dumps(measure_idle(args.sample or [SAMPLE], args.rounds)), flush=True)
        return
    sample = (args.sample or [SAMPLE])[0]
    if args.busy:
        from gen import generate

        sample = ROOT / "bench" / "out" / "busy-stream.log"
        sample.parent.mkdir(exist_ok=True)
        generate(6 << 20, sample, seed=5, inject_every=60)
    for rate in args.rate or [1000, 10000]:
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "server.log" if args.follow else None
            print(json.dumps(measure(rate, args.seconds, sample, target)), flush=True)


if __name__ == "__main__":
    main()
