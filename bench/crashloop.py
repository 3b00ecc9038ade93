"""One cause, many runs: a crash loop of N restarts against one run of the same size.

The crash-loop log repeats a real failing llama-server log (start-up and failure, from
sample_logs/real/) N times. The one-run log of about the same size is a real start-up, then
routine requests (bench/gen.py's request lines) up to the size, then the same failure: one
run. Each log is read by `llamadiag explain -f json` and by `LC_ALL=C grep -E -c -f` with the
rules' signatures, alternately, `--rounds` times; each child's CPU time (user + system, from
wait4: the machine is shared, wall time says little) and peak RSS are taken. The baseline is
`explain` of a three-line log: the interpreter with the rules loaded.

    python bench/crashloop.py [--runs 10000] [--sample sample_logs/real/cuda-oom-ctx-fit-off-lv4.log]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

from gen import Clock, request_default  # noqa: E402

DEFAULT_SAMPLE = ROOT / "sample_logs" / "real" / "cuda-oom-ctx-fit-off-lv4.log"
HEALTHY = ROOT / "sample_logs" / "real" / "healthy-lv4.log"


def child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """(CPU seconds, peak RSS KiB, stdout bytes) of one child; stdout is read from a pipe."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        assert proc.stdout is not None
        size = 0
        while chunk := proc.stdout.read(1 << 20):
            size += len(chunk)
        _, _, usage = os.wait4(proc.pid, 0)
        return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, size


def crash_loop(sample: Path, runs: int, out: Path) -> int:
    """`runs` copies of the sample, one after the other (each copy is one start and one failure)."""
    text = sample.read_bytes().rstrip(b"\n") + b"\n"
    with out.open("wb") as f:
        for _ in range(runs):
            f.write(text)
    return out.stat().st_size


def one_run(sample: Path, size: int, out: Path) -> int:
    """A healthy start-up, routine requests up to `size`, then the sample's lines (the failure)."""
    r = random.Random(1)
    clock = Clock(r)
    head = HEALTHY.read_text().splitlines()
    tail = sample.read_text().splitlines()
    written = 0
    with out.open("w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(head) + "\n")
        task = 0
        while written < size - 2 * len(sample.read_bytes()):
            text = "\n".join(request_default(r, clock, task, lv4=True)) + "\n"
            f.write(text)
            written += len(text)
            task += 1
        # the failure without its own start-up lines: the same run ends with it
        f.write("\n".join(line for line in tail if " E " in line or line.startswith("E ")) + "\n")
    return out.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--sample", type=Path, default=DEFAULT_SAMPLE)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    loop = OUT / f"crashloop-{args.sample.stem}-{args.runs}.log"
    single = OUT / f"onerun-{args.sample.stem}-{args.runs}.log"
    size = crash_loop(args.sample, args.runs, loop)
    one_run(args.sample, size, single)
    mini = OUT / "three-lines.log"
    mini.write_text("\n".join(args.sample.read_text().splitlines()[:3]) + "\n")
    signatures = OUT / "signatures.grep"
    exe = [sys.executable, "-m", "llamadiag"]
    subprocess.run([*exe, "rules", "export", "--grep", "-o", str(signatures)], check=True, capture_output=True)
    env = {**os.environ, "LC_ALL": "C"}
    _, base_rss, _ = child([*exe, "explain", "-f", "json", str(mini)])
    print(f"baseline (python + loaded rules, explain of 3 lines): peak RSS {base_rss / 1024:.1f} MiB")
    header = f"{'log':32} {'MB':>7} {'runs':>6} {'tool':8} {'CPU s':>7} {'MB/s':>7} {'peak MiB':>9} {'JSON KB':>8}"
    print(header)
    for path, runs in ((single, 1), (loop, args.runs)):
        mb = path.stat().st_size / 1e6
        rows: dict[str, list[tuple[float, int, int]]] = {"explain": [], "grep -E": []}
        for _ in range(args.rounds):  # alternate: the machine's load changes
            rows["explain"].append(child([*exe, "explain", "-f", "json", str(path)]))
            rows["grep -E"].append(child(["grep", "-E", "-c", "-f", str(signatures), str(path)], env))
        for tool, got in rows.items():
            cpu = statistics.median(g[0] for g in got)
            rss = max(g[1] for g in got)
            out = got[0][2] / 1e3 if tool == "explain" else 0
            print(
                f"{path.name:32} {mb:7.1f} {runs:6} {tool:8} {cpu:7.2f} {mb / cpu if cpu else 0:7.1f} "
                f"{rss / 1024:9.1f} {out:8.1f}"
            )


if __name__ == "__main__":
    main()
