"""`llamadiag fleet` as a user runs it: formats, exit codes, a line per unreadable log, and the
same JSON from one process, a local pool and an existing Dask cluster given by --scheduler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160"}
    return subprocess.run(
        [sys.executable, "-m", "llamadiag", "fleet", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_json_report_and_one_error_line_per_unreadable_log(fleet_dir: Path) -> None:
    done = run(str(fleet_dir), "-f", "json", "-p", "1")
    assert done.returncode == 2, done.stderr  # logs not read: the report is printed, the run says so
    report = json.loads(done.stdout)
    assert report["instances"] == 11 and report["format"] == 1
    assert report["failures"][0]["rule_id"] == "spec-vision-draft-position-gap"
    errors = [line for line in done.stderr.splitlines() if line.startswith("llamadiag: not read:")]
    assert errors == [f"llamadiag: not read: {e['log']}: {e['error']}" for e in report["errors"]]
    assert [e["log"] for e in report["errors"]] == ["gpu-b/broken", "gpu-c/core"]


def test_markdown_and_rich_exit_1_on_an_error_severity_failure(fleet_dir: Path) -> None:
    md = run(str(fleet_dir / "gpu-a"), str(fleet_dir / "gpu-b" / "oom.log"), "-f", "markdown", "-p", "1")
    assert md.returncode == 1, md.stderr
    assert "## Upgrade plan" in md.stdout
    assert "Upgrading these 1 instance(s) to b11548 or later fixes #30204 on all of them." in md.stdout
    assert "| `spec-vision-draft-position-gap` " in md.stdout
    rich = run(str(fleet_dir / "gpu-a"), "-p", "1")
    assert rich.returncode == 1
    assert "fleet of 2 instance(s) from 2 log(s)" in rich.stdout
    assert "Upgrade plan" in rich.stdout
    assert run(str(fleet_dir / "gpu-a" / "seed-lv4.log"), "--fail-on", "critical", "-p", "1").returncode == 0


def test_nothing_to_read_is_a_usage_error(tmp_path: Path) -> None:
    done = run(str(tmp_path / "nope"))
    assert done.returncode == 2
    assert "not read:" in done.stderr and "no log to read" in done.stderr


def test_pool_and_existing_dask_cluster_print_the_same_json(fleet_dir: Path) -> None:
    pytest.importorskip("distributed", reason="the fleet extra is not installed")
    from distributed import LocalCluster

    one = run(str(fleet_dir), "-f", "json", "-p", "1")
    pooled = run(str(fleet_dir), "-f", "json", "-p", "2")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        clustered = run(str(fleet_dir), "-f", "json", "--scheduler", cluster.scheduler_address)
    assert clustered.returncode == one.returncode == pooled.returncode == 2, clustered.stderr
    assert clustered.stdout == one.stdout == pooled.stdout
