"""`llamadiag watch` as real processes: pipes fed in pieces, signals, tail -F, closed output, bad input.

No timing asserts: each test waits (with a generous timeout) for the event it needs, and
fails if it never comes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.paths import ROOT

SEED = (ROOT / "sample_logs" / "seed-b11503-default.log").read_bytes()
SEED_LV4 = (ROOT / "sample_logs" / "seed-b11503-lv4.log").read_bytes()
OOM = (ROOT / "sample_logs" / "memory-cuda-oom-b4589-raw.log").read_bytes()
WAIT = 60.0
POSIX = pytest.mark.skipif(os.name != "posix", reason="signals and tail -F semantics are POSIX")


def start(*args: str) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "120"}
    cmd = [sys.executable, "-m", "llamadiag", "watch", *args]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


class Events:
    """Reads watch's JSON Lines in a thread; tests wait for the event they need."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.items: list[dict[str, Any]] = []
        self.closed = False
        self.cond = threading.Condition()
        self.proc = proc
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self.cond:
                self.items.append(json.loads(raw))
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def wait_for(self, **want: Any) -> dict[str, Any] | None:
        def found() -> dict[str, Any] | None:
            return next((e for e in self.items if all(_get(e, k) == v for k, v in want.items())), None)

        with self.cond:
            self.cond.wait_for(lambda: found() is not None or self.closed, WAIT)
            return found()

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        with self.cond:
            return [e for e in self.items if e["type"] == kind]


def _get(event: dict[str, Any], dotted: str) -> Any:
    value: Any = event
    for part in dotted.split("__"):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def finish(proc: subprocess.Popen) -> str:
    proc.wait(timeout=WAIT)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert "Traceback" not in err, err
    return err


def test_a_finding_arrives_while_the_writer_is_still_writing() -> None:
    proc = start("-", "--format", "jsonl")
    events = Events(proc)
    completing = SEED.index(b"failed to process speculative batch")
    cut = SEED.index(b"\n", completing) + 1
    seen_before_rest: list[bool] = []

    def writer() -> None:
        assert proc.stdin is not None
        for i in range(0, cut, 777):  # pieces that end mid-line, with pauses
            proc.stdin.write(SEED[i : min(i + 777, cut)])
            proc.stdin.flush()
            time.sleep(0.01)
        seen_before_rest.append(events.wait_for(type="finding") is not None)
        proc.stdin.write(SEED[cut:])
        proc.stdin.close()

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join(WAIT * 2)
    finish(proc)
    assert seen_before_rest == [True]
    kinds = [e["type"] for e in events.items]
    assert kinds[0] == "run_start" and kinds[-1] == "summary" and kinds.count("finding") == 1
    finding = events.of_type("finding")[0]["finding"]
    assert finding["rule_id"] == "spec-vision-draft-position-gap" and finding["evidence"][0]["line"] == 70
    assert proc.returncode == 1


@POSIX
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_gives_the_summary_then_ends_by_that_signal(sig: signal.Signals) -> None:
    proc = start("-", "--format", "jsonl")
    events = Events(proc)
    assert proc.stdin is not None
    proc.stdin.write(SEED)
    proc.stdin.flush()
    assert events.wait_for(type="finding") is not None
    proc.send_signal(sig)
    summary = events.wait_for(type="summary")
    finish(proc)
    proc.stdin.close()
    assert summary is not None and summary["reason"] == f"stopped by {sig.name}"
    assert [c["rule_id"] for c in summary["causes"]] == ["spec-vision-draft-position-gap"]
    assert proc.returncode == -sig


@POSIX
def test_follow_and_a_signal_analyse_a_last_line_without_its_newline(tmp_path: Path) -> None:
    # the writer stopped mid-line: the failure's last line has no newline yet
    completing = SEED.index(b"failed to process speculative batch")
    cut = SEED.index(b"\n", completing)
    log = tmp_path / "server.log"
    log.write_bytes(SEED[:cut])
    proc = start(str(log), "--follow", "--format", "jsonl")
    events = Events(proc)
    assert events.wait_for(type="run_start") is not None  # every complete line was read
    proc.send_signal(signal.SIGTERM)
    summary = events.wait_for(type="summary")
    finish(proc)
    assert summary is not None and summary["reason"] == "stopped by SIGTERM"
    assert [n["kind"] for n in events.of_type("notice")] == ["partial_line"]
    finding = events.of_type("finding")[0]["finding"]
    assert finding["rule_id"] == "spec-vision-draft-position-gap"
    assert proc.returncode == -signal.SIGTERM


@POSIX
def test_follow_survives_rotation_and_truncation(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    proc = start(str(log), "--follow", "--format", "jsonl")
    events = Events(proc)
    assert events.wait_for(type="notice", kind="missing") is not None
    log.write_bytes(SEED_LV4)
    first = events.wait_for(type="finding", finding__run=0)
    assert first is not None and first["finding"]["facts_used"]["build"]["value"] == 11503

    log.rename(tmp_path / "server.log.1")  # logrotate: rename, then the server opens a new file
    log.write_bytes(SEED_LV4.replace(b"build 11503 (d41c07e2b)", b"build 11721 (0abc1234d)"))
    assert events.wait_for(type="notice", kind="rotated") is not None
    second = events.wait_for(type="finding", finding__run=1)
    assert second is not None and second["finding"]["confidence"] == "regression"
    assert second["finding"]["facts_used"]["build"]["value"] == 11721

    with log.open("r+b") as f:  # copytruncate: the same file is emptied, then written again
        f.truncate(0)
    assert events.wait_for(type="notice", kind="truncated") is not None
    with log.open("ab") as f:
        f.write(OOM)
    third = events.wait_for(type="finding", finding__rule_id="cuda-oom-model-load")
    assert third is not None and third["finding"]["run"] == 2
    proc.send_signal(signal.SIGTERM)
    finish(proc)
    runs = [e["run"]["facts"].get("build") for e in events.of_type("run_start")]
    assert runs == [11503, 11721, 4589]


@POSIX
@pytest.mark.parametrize("fmt", ["jsonl", "rich"])
def test_a_closed_output_pipe_ends_watch_quietly(fmt: str) -> None:
    out = subprocess.run(
        f"{sys.executable} -m llamadiag watch - --format {fmt} | head -1; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        input=SEED * 3,
        capture_output=True,
        timeout=WAIT,
    )
    assert out.stdout.decode().startswith('{"type": "run_start"' if fmt == "jsonl" else "▶ run 0")
    assert out.stderr == b"" and out.returncode == 128 + signal.SIGPIPE


@POSIX
def test_a_closed_output_pipe_is_noticed_while_the_input_is_quiet() -> None:
    proc = start("-", "--format", "jsonl")
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(SEED)
    proc.stdin.flush()
    while json.loads(proc.stdout.readline())["type"] != "finding":
        pass
    proc.stdout.close()  # nothing more is due to be written: watch must notice by itself
    finish(proc)
    proc.stdin.close()
    assert proc.returncode == -signal.SIGPIPE


def test_bad_input_is_skipped_with_notices_and_loses_no_finding() -> None:
    lines = SEED.splitlines(keepends=True)
    garbage = bytes(range(128, 256)) * 2000
    proc = start("-", "--format", "jsonl")
    events = Events(proc)

    def writer() -> None:
        assert proc.stdin is not None
        proc.stdin.writelines(lines[:40])
        proc.stdin.write(b"x" * (50 << 20) + b"\n")  # a 50 MB line
        proc.stdin.write(garbage + b"\n" + garbage[:999] + b"\n")  # binary data in the middle
        proc.stdin.writelines(lines[40:])
        proc.stdin.write(b"0.41.772.099 I srv  stops in the middle of a li")  # no newline at the end
        proc.stdin.close()

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join(WAIT * 2)
    finish(proc)
    notices = {e["kind"]: e for e in events.of_type("notice")}
    assert set(notices) == {"long_line", "binary", "partial_line"}
    assert notices["long_line"]["line"] == 41 and "lines 42-43" in notices["binary"]["message"]
    finding = events.of_type("finding")[0]["finding"]
    assert finding["rule_id"] == "spec-vision-draft-position-gap"
    assert [e["line"] for e in finding["evidence"]] == [73, 77]  # three lines later than in the clean log
    summary = events.of_type("summary")[0]
    assert summary["input"]["long_lines_cut"] == 1 and summary["input"]["binary_lines_skipped"] == 2
    assert proc.returncode == 1


def test_the_rich_view_shows_log_text_but_never_its_escape_sequences() -> None:
    hostile = SEED.replace(
        b"failed to process speculative batch", b"failed to process speculative batch \x1b]0;pwned\x07\x1b[2J[red]x[/]"
    )
    proc = start("-")
    assert proc.stdin is not None and proc.stdout is not None
    out, err = proc.communicate(hostile, timeout=WAIT)
    text = out.decode()
    assert "Speculative draft (MTP / EAGLE3) loses position sync" in text and "[red]x[/]" in text
    assert "\x1b]0;" not in text and "\x1b[2J" not in text and "\x07" not in text
    assert "spec-vision-draft-position-gap" in text.split("llamadiag watch ·")[1]  # the summary table
    assert "Traceback" not in err.decode() and proc.returncode == 1


def test_usage_errors_are_one_line() -> None:
    for args, message in ((["-", "--follow"], "--follow needs a file name"), (["/nonexistent.log"], "no such file")):
        proc = start(*args)
        _, err = proc.communicate(b"", timeout=WAIT)
        assert proc.returncode == 2
        assert message in err.decode() and len(err.decode().strip().splitlines()) == 1


def test_the_finding_event_is_the_finding_explain_prints() -> None:
    log = str(ROOT / "sample_logs" / "backends-cuda-no-kernel-image-b4589.log")  # has a home folder path
    env = {**os.environ, "COLUMNS": "120"}
    explained = subprocess.run(
        [sys.executable, "-m", "llamadiag", "explain", log, "--format", "json"], capture_output=True, env=env
    )
    proc = start(log, "--format", "jsonl")
    out, _ = proc.communicate(timeout=WAIT)
    events = [json.loads(line) for line in out.splitlines()]
    (finding,) = [e["finding"] for e in events if e["type"] == "finding"]
    expected = json.loads(explained.stdout)["findings"][0]
    # explain groups a cause across runs (`seen`); watch reports each run's finding as it completes
    assert expected.pop("seen")["runs"] == 1 and finding.pop("seen") is None
    assert finding == expected
    assert "/home/USER/" in json.dumps(finding) and "/home/ops/" not in out.decode()  # redacted, as explain's
    assert events[-1]["redaction"]["enabled"] is True


@POSIX
def test_dash_f_follows_a_file_as_in_tail(tmp_path: Path) -> None:
    # issue 13 point 11: -f is --follow (tail, journalctl, docker, kubectl), the format is --format only
    log = tmp_path / "server.log"
    log.write_bytes(b"")
    proc = start("-f", str(log), "--format", "jsonl")
    events = Events(proc)
    log.write_bytes(SEED)  # written after watch started: only a follower sees it
    assert events.wait_for(type="finding", finding__rule_id="spec-vision-draft-position-gap") is not None
    proc.send_signal(signal.SIGTERM)
    assert events.wait_for(type="summary") is not None
    finish(proc)
    assert proc.returncode == -signal.SIGTERM


def test_dash_f_with_a_format_name_says_what_f_means_now() -> None:
    proc = start("-f", "jsonl")
    _, err = proc.communicate(b"", timeout=WAIT)
    assert proc.returncode == 2 and "use --format jsonl" in err.decode()


def test_compact_format_is_one_plain_line_per_event() -> None:
    hostile = SEED.replace(b"failed to process speculative batch", b"failed to process speculative batch \x1b[2J")
    proc = start("-", "--format", "compact")
    out, err = proc.communicate(hostile, timeout=WAIT)
    lines = out.decode().splitlines()
    assert proc.returncode == 1 and "Traceback" not in err.decode()
    assert lines[0].startswith("INFO run-start line 1: run 0: ")
    assert lines[1] == (
        "ERROR spec-vision-draft-position-gap line 84: "
        "Speculative draft (MTP / EAGLE3) loses position sync on image requests (likely, run 0)"
    )
    assert lines[-1].startswith("INFO summary line 98: end of input; 1 run(s), 1 finding(s)")
    assert all(line.isprintable() for line in lines)  # no colour, no control sequence
    assert "╭" not in out.decode()


def test_json_is_a_format_name_of_watch_as_of_explain() -> None:
    proc = start("-", "--format", "json")
    out, _ = proc.communicate(SEED, timeout=WAIT)
    kinds = [json.loads(line)["type"] for line in out.decode().splitlines()]
    assert kinds == ["run_start", "finding", "summary"]
