"""One cause, many runs: a crash loop of N restarts against one run of the same size.

The crash-loop log repeats a real failing llama-server log (start-up and failure, from
sample_logs/real/) N times. The one-run log of about the same size is a real start-up, then
routine requests (bench/gen.py's request lines) up to the size, then the same failure: one
run. Each log is read by `llamadiag explain -f json` and by `LC_ALL=C grep -E -c -f` with the
rules' signatures, alternately, `--rounds` times; each child's CPU time (user + system, from
wait4: the machine is shared, wall time says little) and peak RSS are taken. The baseline is
`explain` of a three-line log: the interpreter with the rules loaded.

`--later` gives each restart later time stamps (llama's own prefix), as a real crash loop
has; `--compare` also explains each log with every run read line by line
(LLAMADIAG_NO_REPLAY=1, the path before runs were replayed) and says whether the JSON is
the same. `--sample` may be given more than once.

    python bench/crashloop.py [--runs 10000] [--sample sample_logs/real/cuda-oom-ctx-fit-off-lv4.log]
                              [--later] [--compare] [--no-grep]
"""

from __future__ import annotations

import argparse
import os
import random
import re
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


def child(
    cmd: list[str], env: dict[str, str] | None = None, outputs: dict[str, bytes] | None = None, name: str = ""
) -> tuple[float, int, int]:
    """(CPU seconds, peak RSS KiB, stdout bytes) of one child; stdout is read from a pipe (and
    kept in `outputs[name]` when given)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        assert proc.stdout is not None
        size = 0
        kept: list[bytes] = []
        while chunk := proc.stdout.read(1 << 20):
            size += len(chunk)
            if outputs is not None:
                kept.append(chunk)
        _, _, usage = os.wait4(proc.pid, 0)
        if outputs is not None:
            outputs[name] = b"".join(kept)
        return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, size


LLAMA_TIME = re.compile(r"(?m)(?<![\d.])(\d+)\.(\d\d)\.(\d{3})\.(\d{3}) ")


def later(text: str, run: int) -> str:
    """llama's own time stamps (M.SS.mmm.uuu) `run` times 1.013 ms later: no two restarts are timed alike."""

    def shift(m: re.Match[str]) -> str:
        mi, s, ms, us = (int(g) for g in m.groups())
        total = ((mi * 60 + s) * 1000 + ms) * 1000 + us + run * 1013
        us, total = total % 1000, total // 1000
        ms, total = total % 1000, total // 1000
        return f"{total // 60}.{total % 60:02d}.{ms:03d}.{us:03d} "

    return LLAMA_TIME.sub(shift, text)


def crash_loop(sample: Path, runs: int, out: Path, vary: bool = False) -> int:
    """`runs` copies of the sample, one after the other (each copy is one start and one
    failure); `vary`: each with later time stamps."""
    text = sample.read_text(encoding="utf-8").rstrip("\n") + "\n"
    with out.open("w", encoding="utf-8", newline="\n") as f:
        for run in range(runs):
            f.write(later(text, run) if vary else text)
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
    ap.add_argument("--sample", type=Path, action="append")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--later", action="store_true", help="later time stamps in each restart")
    ap.add_argument("--compare", action="store_true", help="also read every run line by line (no replay)")
    ap.add_argument("--no-grep", action="store_true")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    # a cache of its own: the checked rules (a few seconds to build) are not evicted by
    # other checkouts sharing the user's cache while this runs
    os.environ["XDG_CACHE_HOME"] = str(OUT / "cache")
    exe = [sys.executable, "-m", "llamadiag"]
    signatures = OUT / "signatures.grep"
    subprocess.run([*exe, "rules", "export", "--grep", "-o", str(signatures)], check=True, capture_output=True)
    first = True
    for sample in args.sample or [DEFAULT_SAMPLE]:
        tag = f"{sample.stem}{'-later' if args.later else ''}-{args.runs}"
        loop = OUT / f"crashloop-{tag}.log"
        single = OUT / f"onerun-{sample.stem}-{args.runs}.log"
        size = crash_loop(sample, args.runs, loop, args.later)
        one_run(sample, size, single)
        if first:
            mini = OUT / "three-lines.log"
            mini.write_text("\n".join(sample.read_text().splitlines()[:3]) + "\n")
            child([*exe, "explain", "-f", "json", str(mini)])  # fills the cache
            _, base_rss, _ = child([*exe, "explain", "-f", "json", str(mini)])
            print(f"baseline (python + loaded rules, explain of 3 lines): peak RSS {base_rss / 1024:.1f} MiB")
            head = f"{'log':48} {'MB':>7} {'runs':>6} {'tool':14} {'CPU s':>7} {'MB/s':>7}"
            print(f"{head} {'peak MiB':>9} {'JSON KB':>8}")
            first = False
        measure(exe, signatures, [(single, 1), (loop, args.runs)], args)


def measure(exe: list[str], signatures: Path, logs: list[tuple[Path, int]], args: argparse.Namespace) -> None:
    """Each log by each tool, alternately, `args.rounds` times: median CPU, peak RSS, JSON size."""
    env = {**os.environ, "LC_ALL": "C"}
    plain = {k: v for k, v in os.environ.items() if k != "LLAMADIAG_NO_REPLAY"}
    for path, runs in logs:
        mb = path.stat().st_size / 1e6
        explain = [*exe, "explain", "-f", "json", str(path)]
        tools: dict[str, tuple[list[str], dict[str, str] | None]] = {"explain": (explain, plain)}
        if args.compare:
            tools["explain, read"] = (tools["explain"][0], {**plain, "LLAMADIAG_NO_REPLAY": "1"})
        if not args.no_grep:
            tools["grep -E"] = (["grep", "-E", "-c", "-f", str(signatures), str(path)], env)
        rows: dict[str, list[tuple[float, int, int]]] = {name: [] for name in tools}
        outputs: dict[str, bytes] = {}
        for _ in range(args.rounds):  # alternate: the machine's load changes
            for name, (cmd, cenv) in tools.items():
                rows[name].append(child(cmd, cenv, outputs, name))
        for tool, got in rows.items():
            cpu = statistics.median(g[0] for g in got)
            rss = max(g[1] for g in got)
            out = got[0][2] / 1e3 if tool.startswith("explain") else 0
            print(
                f"{path.name:48} {mb:7.1f} {runs:6} {tool:14} {cpu:7.2f} {mb / cpu if cpu else 0:7.1f} "
                f"{rss / 1024:9.1f} {out:8.1f}"
            )
        if args.compare:
            same = outputs["explain"] == outputs["explain, read"]
            print(f"  JSON with and without the replay: {'same' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
