"""The conventions users bring (issue 13 points 12 and 13): build numbers as written, input
files that cannot be read, several logs, exit-code thresholds, quiet, colour, pager, config files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

SEED = ROOT / "sample_logs" / "seed-ticket.txt"
SPEC_CMD = "llama-server -m m.gguf --mmproj mm.gguf --spec-type draft-mtp"


def run(*args: str, cwd: Path | None = None, env: dict | None = None, stdin: bytes = b"") -> subprocess.CompletedProcess:
    full_env = {**os.environ, "COLUMNS": "120", **(env or {})}
    full_env.pop("NO_COLOR", None)
    full_env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "llamadiag", *args],
        capture_output=True,
        env=full_env,
        cwd=cwd,
        input=stdin,
        timeout=120,
    )


@pytest.mark.parametrize("build", ["b11503", "B11503", "11503"])
def test_lookup_takes_the_build_as_written(build: str) -> None:
    out = run("lookup", "--build", build, "--cmdline", SPEC_CMD, "-f", "json")
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout)["query"]["build"] == 11503


@pytest.mark.parametrize("build", ["-5", "0", "b", "latest"])
def test_a_build_that_is_no_build_number_is_refused(build: str) -> None:
    out = run("lookup", f"--build={build}", "--cmdline", SPEC_CMD)
    assert out.returncode == 2 and "is not a build number; give it as 11503 or b11503" in out.stderr.decode()


def test_version_text_from_a_file(tmp_path: Path) -> None:
    version = tmp_path / "version.txt"
    version.write_text("version: 11503 (abc1234)\nbuilt with cc for x86_64-linux-gnu\n")
    log = tmp_path / "server.log"
    log.write_text("0.41.772.031 E srv        decode: failed to process speculative batch\n")  # no version line
    out = run("facts", str(log), "--version-text", str(version), "-f", "json")
    assert out.returncode == 0, out.stderr.decode()
    assert '"build": 11503' in out.stdout.decode() and '"source": "version-text"' in out.stdout.decode()


def test_an_unreadable_version_text_file_is_an_error(tmp_path: Path) -> None:
    out = run("explain", str(SEED), "--version-text", str(tmp_path))  # a folder: exists, cannot be read
    assert out.returncode == 2 and f"cannot read {tmp_path}" in out.stderr.decode()
    assert out.stdout == b""


def test_a_version_text_without_a_version_is_not_silently_ignored() -> None:
    out = run("explain", str(SEED), "--version-text", "garbage")
    assert "--version-text holds no llama-server version line" in out.stderr.decode()
