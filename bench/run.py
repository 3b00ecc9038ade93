"""The benchmark: `llamadiag explain` against `LC_ALL=C grep -E -c -f` on the same log, per shape.

Shapes (`--shapes`, default all): `gen` is bench/gen.py's log; `req-<shape>` are the eras and
wrappers of bench/gen_requests.py, an independent generator of each era's per-request lines
(`req-mixed` every shape in turn); `real` replays the real-binary logs of sample_logs/real/
(concatenated in a seeded order to the size). Each log is generated once into bench/out/
(ignored by git) and the rules' signatures are exported with `llamadiag rules export --grep`.
Then, per shape and engine, explain runs `--rounds` times on the file (page cache warm), and
grep once per log and signatures (kept in bench/out/; `--grep-every-round` alternates them);
each child's wall time, CPU time (user + system) and peak RSS are taken. Reported per shape:
median MB/s of each (wall and CPU), the median of the per-round ratios grep time / explain
time (explain's throughput as a fraction of grep's; on CPU time, which a loaded machine
disturbs less), and the peak RSS; then the worst shape, the figure that counts. Start-up is
the median wall time of `explain` on a three-line log (`--startup-runs 0` skips it).

    python bench/run.py --sizes 200M [--shapes gen,req-mixed,real] [--rounds 3] [--engines hyperscan,stdlib]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

from gen import parse_size  # noqa: E402

GNU_TIME = Path("/usr/bin/time")


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int, bytes, float]:
    """(wall seconds, peak RSS KiB, exit code, stdout, CPU seconds) of one child, stdout piped.

    The peak RSS comes from GNU time when present: a child forked from this process
    could otherwise be charged for this process's pages."""
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as rss_file:
        prefix = [str(GNU_TIME), "-f", "%M", "-o", rss_file.name] if GNU_TIME.exists() else []
        start = time.perf_counter()
        proc = subprocess.Popen(prefix + cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        assert proc.stdout is not None
        out = proc.stdout.read()  # a pipe, not /dev/null: grep would stop at the first match
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {err.read().decode()[-500:]}")
        reported = rss_file.read().strip().splitlines()
        peak = int(reported[-1]) if prefix and reported and reported[-1].isdigit() else usage.ru_maxrss
        return wall, peak, proc.returncode, out, usage.ru_utime + usage.ru_stime


def llamadiag(*args: str) -> list[str]:
    return [sys.executable, "-m", "llamadiag", *args]


def env_for(engine: str | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if engine:
        env["LLAMADIAG_ENGINE"] = engine
    return env


def warm(path: Path) -> None:
    with path.open("rb") as f:
        while f.read(1 << 24):
            pass


REQUEST_SHAPES = ("b5060", "b5060-prefix", "b7003-docker", "b9700-lv4", "b9700-iso", "b11-lv4", "b11-journald", "mixed")
SHAPES = ("gen", *(f"req-{shape}" for shape in REQUEST_SHAPES), "real")


def make_log(shape: str, size_text: str) -> Path:
    """The log of a shape and size in bench/out/, generated (in a child) when missing."""
    size = parse_size(size_text)
    log = OUT / (f"bench-{size_text}.log" if shape == "gen" else f"{shape}-{size_text}.log")
    if log.exists() and abs(log.stat().st_size - size) <= size // 100:
        return log
    print(f"generating {log} ...", file=sys.stderr)
    # in a child: a fork copies this process, and its peak RSS would count in every child's
    if shape == "gen":
        cmd = [str(HERE / "gen.py"), "--size", size_text, "--out", str(log)]
    elif shape == "real":
        cmd = [str(HERE / "gen_requests.py"), "--replay-real", "--size", size_text, "--out", str(log)]
    else:
        cmd = [str(HERE / "gen_requests.py"), "--shape", shape[4:], "--size", size_text, "--out", str(log)]
    subprocess.run([sys.executable, *cmd], check=True)
    return log


def grep_once(log: Path, signatures: Path) -> tuple[float, int, int, bytes, float]:
    """grep's run on a log, measured once per log and signatures and kept in bench/out/ (with
    364 alternations GNU grep takes seconds to minutes per 20 MB, the same for every tree and
    engine compared): `--grep-every-round` measures it beside each explain instead."""
    key = hashlib.sha256(signatures.read_bytes() + f"{log.name}:{log.stat().st_size}".encode()).hexdigest()[:16]
    kept = OUT / f"grep-{key}.json"
    if kept.exists():
        wall, peak, code, out, cpu = json.loads(kept.read_text())
        return wall, peak, code, out.encode(), cpu
    grep = ["grep", "-E", "-c", "-f", str(signatures), str(log)]
    wall, peak, code, out, cpu = timed(grep, dict(os.environ, LC_ALL="C"))
    kept.write_text(json.dumps([wall, peak, code, out.decode(), cpu]))
    return wall, peak, code, out, cpu


def bench_shape(
    shape: str,
    size_text: str,
    engines: list[str],
    rounds: int,
    signatures: Path,
    grep_every_round: bool | None = False,
) -> list[dict]:
    log = make_log(shape, size_text)
    warm(log)
    mb = log.stat().st_size / 1e6
    grep = ["grep", "-E", "-c", "-f", str(signatures), str(log)]
    grep_env = dict(os.environ, LC_ALL="C")
    results = []
    for engine in engines:
        ex, gr, ratios, cpu_ratios, rss, grep_rss = [], [], [], [], [], []
        matches = b""
        for _ in range(rounds):
            explain = llamadiag("explain", str(log), "-f", "json", "--no-progress")
            wall, peak, _, _, cpu = timed(explain, env_for(engine))
            if grep_every_round is None:  # --no-grep
                g_wall, g_peak, matches, g_cpu = float("nan"), 0, b"", float("nan")
            elif grep_every_round:
                g_wall, g_peak, _, matches, g_cpu = timed(grep, grep_env)
            else:
                g_wall, g_peak, _, matches, g_cpu = grep_once(log, signatures)
            ex.append((wall, cpu))
            gr.append((g_wall, g_cpu))
            ratios.append(g_wall / wall)
            cpu_ratios.append(g_cpu / cpu)
            rss.append(peak)
            grep_rss.append(g_peak)
        row = {
            "shape": shape,
            "size": size_text,
            "mb": round(mb, 1),
            "engine": engine,
            "explain_mb_s": round(mb / statistics.median(w for w, _ in ex), 1),
            "explain_cpu_mb_s": round(mb / statistics.median(c for _, c in ex), 1),
            "grep_mb_s": round(mb / statistics.median(w for w, _ in gr), 1),
            "grep_cpu_mb_s": round(mb / statistics.median(c for _, c in gr), 1),
            "ratio": round(statistics.median(ratios), 3),
            "cpu_ratio": round(statistics.median(cpu_ratios), 3),
            "explain_peak_rss_mib": round(max(rss) / 1024, 1),
            "grep_peak_rss_mib": round(max(grep_rss) / 1024, 1),
            "grep_matching_lines": int(matches.strip() or 0),
            "rounds": rounds,
        }
        print(json.dumps(row), file=sys.stderr)
        results.append(row)
    return results


def startup(runs: int = 15) -> dict:
    small = ROOT / "sample_logs" / "seed-snippet.log"
    timed(llamadiag("explain", str(small)), env_for(None))  # fill the start-up cache first
    walls = [timed(llamadiag("explain", str(small)), env_for(None))[0] for _ in range(runs)]
    return {"startup_median_ms": round(statistics.median(walls) * 1000), "startup_min_ms": round(min(walls) * 1000)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="200M")
    ap.add_argument("--shapes", default=",".join(SHAPES), help=f"any of {', '.join(SHAPES)}")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engines", default="hyperscan,stdlib")
    ap.add_argument("--grep-every-round", action="store_true", help="run grep beside each explain (else once per log)")
    ap.add_argument("--no-grep", action="store_true", help="explain alone (ratios to grep left out)")
    ap.add_argument("--startup-runs", type=int, default=15, help="runs of the start-up measure (0: skip it)")
    args = ap.parse_args()
    if not shutil.which("grep"):
        raise SystemExit("grep is needed for the comparison")
    shapes = [shape.strip() for shape in args.shapes.split(",")]
    unknown = set(shapes) - set(SHAPES)
    if unknown:
        raise SystemExit(f"unknown shapes: {', '.join(sorted(unknown))} (known: {', '.join(SHAPES)})")
    OUT.mkdir(exist_ok=True)
    signatures = OUT / "signatures.ere"
    subprocess.run(llamadiag("rules", "export", "--grep", "-o", str(signatures)), env=env_for(None), check=True)
    rows = []
    for size in args.sizes.split(","):
        for shape in shapes:
            rows += bench_shape(
                shape,
                size.strip(),
                args.engines.split(","),
                args.rounds,
                signatures,
                None if args.no_grep else args.grep_every_round,
            )
    started = startup(args.startup_runs) if args.startup_runs else {"startup_median_ms": None, "startup_min_ms": None}
    summary = {"cpus": os.cpu_count(), "load_before": os.getloadavg(), **started, "rows": rows}
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (OUT / f"results-{stamp}.json").write_text(json.dumps(summary, indent=2))
    print(f"start-up (explain on a 3-line log): median {summary['startup_median_ms']} ms")
    print("| size | shape | engine | explain MB/s (CPU) | grep MB/s (CPU) | explain / grep (CPU) | explain peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['size']} | {r['shape']} | {r['engine']} | {r['explain_mb_s']} ({r['explain_cpu_mb_s']}) | "
            f"{r['grep_mb_s']} ({r['grep_cpu_mb_s']}) | {r['ratio']:.3f}x ({r['cpu_ratio']:.3f}x) | "
            f"{r['explain_peak_rss_mib']} MiB |"
        )
    for size in args.sizes.split(","):
        for engine in args.engines.split(","):
            mine = [r for r in rows if r["size"] == size.strip() and r["engine"] == engine]
            if mine:
                label = f"worst shape at {size} with {engine}"
                if args.no_grep:
                    worst = min(mine, key=lambda r: r["explain_cpu_mb_s"])
                    print(f"{label}: {worst['shape']}, {worst['explain_cpu_mb_s']} MB/s (CPU)")
                else:
                    worst = min(mine, key=lambda r: r["cpu_ratio"])
                    print(f"{label}: {worst['shape']}, {worst['cpu_ratio']:.3f}x grep (CPU)")


if __name__ == "__main__":
    main()
