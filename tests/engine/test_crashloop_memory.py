"""MEMORY TEST (subprocesses, about 15-20 s of CPU): a crash loop of 10,000 runs is explained in
flat memory, with a report whose size does not grow with the runs (issue #10 point 11).

Each log is explained by `llamadiag explain -f json` in a child process; its peak RSS comes
from wait4 (ru_maxrss of that child alone) and its report is the child's stdout. No timing is
asserted. The crash loop repeats a real failing start-up (sample_logs/real/model-file-missing.log,
cut to its start lines and the failure); the one-run log of about the same size is a real
healthy start-up followed by its own request lines repeated, then the same failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import SAMPLES

MiB = 1024  # ru_maxrss is in KiB on Linux
RUNS = 10_000


def _crash_run() -> str:
    lines = (SAMPLES / "real" / "model-file-missing.log").read_text().splitlines()
    return "\n".join(lines[i] for i in (0, 1, 3, 4, 14)) + "\n"  # start, verbosity, load, failure, exit


def _one_run(size: int) -> str:
    lines = (SAMPLES / "real" / "healthy-lv4.log").read_text().splitlines()
    head, requests = "\n".join(lines[:159]) + "\n", "\n".join(lines[159:]) + "\n"
    body = requests * (size // len(requests))
    return head + body + _crash_run().splitlines()[3] + "\n"


def _explain(path: Path) -> tuple[int, dict]:
    """(peak RSS in KiB, the JSON report) of `llamadiag explain -f json PATH` in a child."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "llamadiag", "explain", "-f", "json", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak, not the largest child's so far
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode in (0, 1), proc.returncode
    return usage.ru_maxrss, json.loads(out)


@pytest.fixture(scope="module")
def explained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict, int]]:
    folder = tmp_path_factory.mktemp("crashloop")
    run = _crash_run()
    logs = {
        "three lines": run.splitlines()[0] + "\n",
        "100 runs": run * 100,
        "10,000 runs": run * RUNS,
    }
    logs["1 run"] = _one_run(len(logs["10,000 runs"]))
    out = {}
    for name, text in logs.items():
        path = folder / f"{name.replace(' ', '-').replace(',', '')}.log"
        path.write_text(text)
        rss, report = _explain(path)
        out[name] = (rss, report, len(json.dumps(report, indent=2)))
    return out


def test_ten_thousand_runs_in_flat_memory(explained: dict[str, tuple[int, dict, int]]) -> None:
    baseline = explained["three lines"][0]  # the interpreter with the rules loaded
    one_run = explained["1 run"][0]
    loop, report, _ = explained["10,000 runs"]
    assert report["run_count"] == RUNS
    assert loop <= baseline + 64 * MiB, (baseline, loop)
    assert loop <= one_run + 16 * MiB, (one_run, loop)  # no more than a single run of the same size


def test_the_report_does_not_grow_with_the_runs(explained: dict[str, tuple[int, dict, int]]) -> None:
    _, small, small_size = explained["100 runs"]
    _, large, large_size = explained["10,000 runs"]
    assert (small["run_count"], large["run_count"]) == (100, RUNS)
    assert (
        [f["rule_id"] for f in small["findings"]]
        == [f["rule_id"] for f in large["findings"]]
        == ["model-file-not-found"]
    )
    assert large["findings"][0]["seen"]["runs"] == RUNS and len(large["runs"]) == len(small["runs"])
    assert abs(large_size - small_size) < 1024, (small_size, large_size)  # longer line numbers only
