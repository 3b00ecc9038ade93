"""Start-up: how long the light calls and `explain` on a small log take, beside `grep -E`.

Each case is a fresh process (what a user or a shell completion waits for). The cases run in
alternation, round after round, so that a busy machine slows them alike; per case the median
wall time (from process start to exit) and the median CPU time (user + system of the child,
from wait4: what a loaded machine does not inflate as much) are reported.

    --help, --version       the light calls: no analyzer, no knowledge loaded
    explain -f json         the same diagnosis written as JSON (no terminal view)
    lookup TEXT             the known issues behind an error text
    complete                a shell completion of a command name (bash)
    explain (warm cache)    the checked knowledge read from the start-up cache
    explain (cold cache)    an empty cache: YAML read, validated and every rule's examples run
    grep -E -c 'error|failed' LOG   what the command-line tools users compare it with take
    grep -E -c -f SIG LOG   the rules' signatures (`rules export --grep`) over the same log

    python bench/startup.py [--runs 21] [--cold-runs 3] [--log sample_logs/seed-snippet.log]
    python bench/startup.py --tree /tmp/old     # another source tree (git archive), run with -m
    python bench/startup.py --tree /tmp/old --tree .   # two trees, in alternation within each round
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child; its output is read and dropped."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    assert proc.stdout is not None
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # explain exits 1 when it finds a failure; grep when nothing matches
        raise SystemExit(f"{cmd} failed with exit {code}")
    return wall, usage.ru_utime + usage.ru_stime


def llamadiag_cmd() -> list[str]:
    """The installed console script beside this Python (what users run), else `python -m llamadiag`."""
    script = shutil.which("llamadiag", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "llamadiag"]


def tree_setup(tree: Path | None, tmp: Path, tag: str) -> tuple[list[str], dict[str, str], Path | None]:
    """The command, environment (its own warm cache) and working folder that run one tree."""
    exe = [sys.executable, "-m", "llamadiag"] if tree else llamadiag_cmd()
    path = os.pathsep.join(filter(None, [str(tree.resolve()) if tree else "", os.environ.get("PYTHONPATH")]))
    base = dict(os.environ, PYTHONPATH=path) if path else dict(os.environ)
    # bytecode cached as in any install: without it each run compiles every module from source (~130 ms)
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    base["XDG_CACHE_HOME"] = str(tmp / f"warm-{tag}")
    cwd = tree.resolve() if tree else None  # `python -m` puts the working folder first on the path
    return exe, base, cwd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=21, help="rounds of the fast cases")
    ap.add_argument("--cold-runs", type=int, default=3, help="rounds of explain with an empty cache (~1-2 s each)")
    ap.add_argument("--log", type=Path, default=ROOT / "sample_logs" / "seed-snippet.log")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument(
        "--tree",
        type=Path,
        action="append",
        help="measure this source tree (python -m llamadiag, it first on the path); repeat to compare trees, "
        "which then run in alternation within each round",
    )
    args = ap.parse_args()

    trees: list[Path | None] = list(args.tree or [None])
    tmp = Path(tempfile.mkdtemp(prefix="llamadiag-startup-"))
    log = str(args.log.resolve())
    cases: dict[str, tuple[list[str], dict[str, str], Path | None]] = {}
    cold: dict[str, tuple[list[str], dict[str, str], Path | None]] = {}
    signatures = tmp / "sig.ere"
    for i, tree in enumerate(trees):
        exe, env, cwd = tree_setup(tree, tmp, str(i))
        tag = f" [{tree.resolve().name}]" if len(trees) > 1 and tree else ""
        if i == 0:
            subprocess.run([*exe, "rules", "export", "--grep", "-o", str(signatures)], env=env, check=True, cwd=cwd)
        run_once([*exe, "explain", log], env, cwd)  # fill the warm cache
        completion = dict(env, _LLAMADIAG_COMPLETE="complete_bash", COMP_WORDS="llamadiag ex", COMP_CWORD="1")
        cases |= {
            f"llamadiag --help{tag}": ([*exe, "--help"], env, cwd),
            f"llamadiag --version{tag}": ([*exe, "--version"], env, cwd),
            f"completion of a command name{tag}": (exe, completion, cwd),
            f"explain, warm cache{tag}": ([*exe, "explain", log], env, cwd),
            f"explain -f json, warm cache{tag}": ([*exe, "explain", log, "-f", "json"], env, cwd),
            f"lookup 'CUDA error: out of memory'{tag}": ([*exe, "lookup", "CUDA error: out of memory"], env, cwd),
        }
        cold[f"explain, cold cache{tag}"] = ([*exe, "explain", log], env, cwd)
    cases["grep -E -c 'error|failed'"] = (["grep", "-E", "-c", "error|failed", log], dict(os.environ, LC_ALL="C"), None)
    grep_sig = ["grep", "-E", "-c", "-f", str(signatures), log]  # compiling ~500 EREs: seconds, so few runs
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in [*cases, *cold]}
    times["grep -E -c -f signatures"] = []
    for i in range(args.runs):
        for name, (cmd, env, cwd) in cases.items():
            times[name].append(run_once(cmd, env, cwd))
        if i < args.cold_runs:
            for name, (cmd, env, cwd) in cold.items():
                empty = dict(env, XDG_CACHE_HOME=str(tmp / f"cold{i}-{len(times[name])}-{abs(hash(name))}"))
                times[name].append(run_once(cmd, empty, cwd))
            times["grep -E -c -f signatures"].append(run_once(grep_sig, dict(os.environ, LC_ALL="C")))
    shutil.rmtree(tmp, ignore_errors=True)

    rows = []
    print(f"{args.log.name} ({args.log.stat().st_size} bytes), {args.runs} runs ({args.cold_runs} cold), medians")
    print(f"{'case':52} {'wall ms':>8} {'CPU ms':>8}")
    for name, samples in times.items():
        if not samples:
            continue
        wall = statistics.median(w for w, _ in samples) * 1000
        cpu = statistics.median(c for _, c in samples) * 1000
        rows.append({"case": name, "runs": len(samples), "wall_ms": round(wall), "cpu_ms": round(cpu)})
        print(f"{name:52} {wall:8.0f} {cpu:8.0f}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.json:
        args.json.write_text(json.dumps({"log": log, "rows": rows, "load": os.getloadavg()[0]}, indent=2) + "\n")


if __name__ == "__main__":
    main()
