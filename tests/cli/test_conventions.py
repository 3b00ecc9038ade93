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
    inherited = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full_env = {**inherited, "COLUMNS": "120", **(env or {})}
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


DEFAULT = ROOT / "sample_logs" / "seed-b11503-default.log"  # the seed failure, likely (no version line)


def test_explain_takes_several_logs_and_exits_with_the_worst(tmp_path: Path) -> None:
    healthy = tmp_path / "healthy.log"
    healthy.write_text("main: server is listening on http://127.0.0.1:8080 - starting the main loop\n")
    out = run("explain", str(healthy), str(SEED), "--color", "never")
    text = out.stdout.decode()
    assert out.returncode == 1
    assert f"· {healthy} ·" in text and f"· {SEED} ·" in text and "No known failure recognised." in text
    missing = run("explain", str(SEED), str(tmp_path / "gone.log"), str(healthy), "-f", "json")
    assert missing.returncode == 2 and "gone.log: no such file" in missing.stderr.decode()
    decoder, body, names = json.JSONDecoder(), missing.stdout.decode(), []
    i = 0
    while body[i:].strip():  # one JSON document per log, one after the other (as jq reads them)
        doc, i = decoder.raw_decode(body, i + len(body[i:]) - len(body[i:].lstrip()))
        names.append(doc["input"]["name"])
    assert names == [str(SEED), str(healthy)]


def test_fail_on_none_and_fail_confidence() -> None:
    assert run("explain", "-q", str(SEED)).returncode == 1
    assert run("explain", str(SEED), "-f", "json").returncode == 1  # the json renderer drains the findings
    assert run("explain", "-q", str(SEED), "--fail-on", "none").returncode == 0
    # the default log's finding is only likely: below --fail-confidence confirmed it does not fail the run
    assert run("explain", "-q", str(DEFAULT)).returncode == 1
    assert run("explain", "-q", str(DEFAULT), "--fail-confidence", "likely").returncode == 1
    assert run("explain", "-q", str(DEFAULT), "--fail-confidence", "confirmed").returncode == 0


def test_quiet_prints_nothing_but_errors(tmp_path: Path) -> None:
    out = run("explain", "-q", str(SEED))
    assert out.returncode == 1 and out.stdout == b"" and out.stderr == b""
    out = run("explain", "--quiet", str(tmp_path / "gone.log"))
    assert out.returncode == 2 and out.stdout == b"" and b"no such file" in out.stderr


def test_color_option_and_environment() -> None:
    def escapes(*args: str, env: dict | None = None) -> bool:
        return b"\x1b[" in run("explain", str(SEED), *args, env=env).stdout

    assert not escapes()  # a pipe: plain
    assert escapes("--color", "always")
    assert escapes(env={"FORCE_COLOR": "1"})
    assert not escapes("--color", "never", env={"FORCE_COLOR": "1"})
    assert b"\x1b[31m" not in run("explain", str(SEED), env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal")
@pytest.mark.parametrize("pager", [True, False])
def test_long_terminal_output_is_paged(tmp_path: Path, pager: bool) -> None:
    import pty

    paged = tmp_path / "paged.txt"
    main, side = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "LINES": "24", "PAGER": f"tee {paged}", "TERM": "xterm"}
    args = [sys.executable, "-m", "llamadiag", "explain", str(SEED), *([] if pager else ["--no-pager"])]
    proc = subprocess.Popen(args, stdin=side, stdout=side, stderr=side, env=env)  # a pager needs both
    os.close(side)
    while True:  # drain the terminal so the writer never blocks
        try:
            if not os.read(main, 65536):
                break
        except OSError:
            break
    proc.wait(timeout=120)
    os.close(main)
    assert proc.returncode == 1
    assert paged.exists() is pager
    if pager:
        assert "spec-vision-draft-position-gap" in paged.read_text()
    # a pipe is never paged
    assert run("explain", str(SEED), env={"PAGER": f"tee {paged}.pipe"}).returncode == 1
    assert not Path(f"{paged}.pipe").exists()
