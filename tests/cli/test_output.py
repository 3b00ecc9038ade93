"""Output as users meet it from the shell (#13 points 8-10): a reader that closes the pipe,
-o FILE, formats a command refuses, help placeholders, usage and rule errors in plain words,
and terminal views without Python reprs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llamadiag.cli.options import DraftFormat, ExplainFormat, Format
from tests.paths import SAMPLES

TICKET = SAMPLES / "seed-ticket.txt"  # a confirmed error-severity failure
HEALTHY = SAMPLES / "seed-b11721-fixed-default.log"  # the fixed build: nothing at or above error


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "llamadiag", *args], capture_output=True, env=env, timeout=120)


def closed_early(*args: str) -> tuple[int, bytes]:
    """Run with a reader that is gone before the output is written (`| head -0`)."""
    cmd = [sys.executable, "-m", "llamadiag", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    return proc.wait(timeout=120), err


def test_a_closed_pipe_ends_quietly_with_the_status_of_the_diagnosis() -> None:
    for fmt in ("rich", "json", "sarif"):
        assert closed_early("explain", "-f", fmt, str(TICKET)) == (1, b"")  # a failure was found
        assert closed_early("explain", "-f", fmt, str(HEALTHY)) == (0, b"")  # nothing was found
    assert closed_early("facts", str(TICKET)) == (0, b"")
    assert closed_early("lookup", "-f", "json", "port in use") == (0, b"")  # something matched


def test_output_file_is_written_whole_and_stdout_stays_empty(tmp_path: Path) -> None:
    target = tmp_path / "out.sarif"
    target.write_text("old")
    done = run("explain", "-f", "sarif", "-o", str(target), str(TICKET))
    assert done.returncode == 1 and done.stdout == b""
    log = json.loads(target.read_text())
    assert log["version"] == "2.1.0" and log["runs"][0]["results"][0]["ruleId"] == "spec-vision-draft-position-gap"
    assert [p.name for p in tmp_path.iterdir()] == ["out.sarif"]  # no temporary file left
    view = tmp_path / "view.txt"
    assert run("explain", "--output", str(view), str(TICKET)).returncode == 1
    assert (
        "== CONFIRMED Speculative draft (MTP / EAGLE3) loses position sync on image requests [error]"
        in view.read_text()
    )
    facts = tmp_path / "facts.md"
    assert run("facts", "-f", "markdown", "-o", str(facts), str(TICKET)).returncode == 0
    assert "| fact | value | from |" in facts.read_text()


def test_an_unwritable_output_is_a_clear_error(tmp_path: Path) -> None:
    done = run("explain", "-f", "json", "-o", str(tmp_path / "missing" / "out.json"), str(TICKET))
    assert done.returncode == 2
    assert b"cannot write" in done.stderr and b"Traceback" not in done.stderr


def test_formats_that_a_command_does_not_have_are_refused() -> None:
    done = run("report", "-f", "rich", str(TICKET))
    assert done.returncode == 2
    assert b"'rich' is not one of 'markdown', 'json'" in done.stderr
    done = run("probe", "-f", "markdown", "http://127.0.0.1:9")
    assert done.returncode == 2 and b"'markdown' is not one of 'rich', 'json'" in done.stderr


@pytest.mark.parametrize(
    ("command", "formats"),
    [
        (["explain", str(TICKET)], [f.value for f in ExplainFormat]),
        (["facts", str(TICKET)], [f.value for f in Format]),
        (["lookup", "failed to process speculative batch"], [f.value for f in Format]),
        # a log no rule explains: report drafts only then (a rule explains nearmiss-image-no-spec.log)
        (["report", str(SAMPLES / "context-kv-retry-recovers-nearmiss-compose.log")], [f.value for f in DraftFormat]),
    ],
    ids=lambda x: x[0] if isinstance(x, list) and x and not x[0].startswith(("rich", "json")) else "",
)
def test_every_advertised_format_works(command: list[str], formats: list[str]) -> None:
    outputs = set()
    for fmt in formats:
        done = run(*command, "--format", fmt)
        assert done.returncode in (0, 1), (fmt, done.stderr)
        assert done.stdout.strip(), fmt
        outputs.add(done.stdout)
    assert len(outputs) == len(formats)  # each format is its own, none falls back to another


def test_jsonl_and_github_print_one_line_per_finding() -> None:
    lines = run("explain", "-f", "jsonl", str(TICKET)).stdout.decode().splitlines()
    assert [json.loads(line)["rule_id"] for line in lines] == ["spec-vision-draft-position-gap"]
    lines = run("explain", "-f", "github", str(TICKET)).stdout.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("::error file=") and ",line=47," in lines[0]
    assert run("explain", "-f", "jsonl", str(HEALTHY)).stdout == b""


def test_help_shows_placeholders_not_python_types() -> None:
    for command in (["explain"], ["facts"], ["lookup"], ["compare"], ["rules", "show"], ["watch"]):
        text = run(*command, "--help").stdout.decode()
        assert "<list[" not in text and "<str>" not in text and "<int>" not in text and "{" not in text, command
    text = run("explain", "--help").stdout.decode()
    assert "Usage: llamadiag explain [OPTIONS] LOG" in text
    assert "--rules DIR" in text and "--cmdline COMMAND" in text and "-o, --output FILE" in text


def test_usage_errors_are_in_plain_words() -> None:
    err = run("lookup", "--limit", "abc", "port in use").stderr.decode()
    assert "Invalid value for '--limit' / '-n': should be a whole number" in err and "Input should" not in err
    err = run("lookup", "--limit", "0", "port in use").stderr.decode()
    assert "should be 1 or more" in err and "greater than or equal" not in err
    err = run("explain", "-f", "yaml", str(TICKET)).stderr.decode()
    assert "'yaml' is not one of" in err and "Value error" not in err


def test_rule_errors_carry_no_pydantic_prefix(tmp_path: Path) -> None:
    source = next(SAMPLES.parent.glob("rules/*/spec-vision-draft-position-gap.yaml")).read_text()
    broken = "\n".join(
        "  fixed_in: null" if line.strip().startswith("fixed_in:") else line for line in source.splitlines()
    )
    (tmp_path / "broken.yaml").write_text(broken.replace("id: spec-vision-draft-position-gap", "id: broken-copy"))
    err = run("rules", "lint", "--rules", str(tmp_path)).stderr.decode()
    assert "fixed_in is null: say what is known in fix_note" in err
    assert "Value error" not in err


def test_terminal_views_show_no_python_reprs() -> None:
    out = run("explain", str(TICKET)).stdout.decode()
    run_line = next(line for line in out.splitlines() if line.startswith("  run 0:"))
    assert "backend Vulkan" in run_line and "with --mmproj" in run_line
    assert "[" not in run_line and "=True" not in run_line
    why = run("explain", "--why", str(TICKET)).stdout.decode()
    assert "spec_type in [draft-mtp, mtp, draft-eagle3] (value: draft-mtp)" in why
    assert "has_mmproj equals true (value: yes)" in why and "'" not in why.split("Conditions")[1].split("--")[0]
    facts = run("facts", str(SAMPLES / "seed-b11503-default.log")).stdout.decode()
    assert '{"' not in facts and "True" not in facts
    assert "draft acceptance 62.7% (1245 of 1986 drafted tokens, 5 request(s))" in facts
