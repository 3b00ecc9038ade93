"""The command line as a user meets it: exit codes, formats, hostile log text, bad input."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import DATA

SEED_SNIPPET = """\
0.41.772.010 E init: the tokens of sequence 3 in the input batch have inconsistent sequence positions:
 - the last position stored in the memory module of the context (i.e. the KV cache) for sequence 3 is X = 17
 - the tokens for sequence 3 in the input batch have a starting position of Y = 942
 it is required that the sequence positions remain consecutive: Y = X + 1
0.41.772.031 E srv        decode: failed to process speculative batch
0.41.772.040 E srv  update_slots: decode() failed: failed to process speculative batch
"""
SEED_CMD = "llama-server -m g.gguf --mmproj mmproj-F16.gguf --spec-type draft-mtp --spec-draft-n-max 3"


def run(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "COLUMNS": "120", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "llamadiag", *args], input=stdin, capture_output=True, env=full_env, timeout=300
    )


@pytest.fixture()
def seed_log(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text(SEED_SNIPPET)
    return path


def test_json_contract(seed_log: Path) -> None:
    out = run(
        "explain",
        str(seed_log),
        "--format",
        "json",
        "--cmdline",
        SEED_CMD,
        "--version-text",
        "version: 11503 (d41c07e2b)\nbuilt with GNU 14.2.0 for Linux x86_64",
    )
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    run0 = data["runs"][0]
    assert run0["index"] == 0 and run0["facts"]["build"] == 11503 and run0["facts"]["commit"] == "d41c07e2b"
    assert run0["facts"]["flags"]["spec-type"] == "draft-mtp"
    f = data["findings"][0]
    # every condition is known from the options, but a snippet is never confirmed: the lines
    # before it could change the verdict, and a question asks for the whole log
    assert (f["rule_id"], f["confidence"], f["severity"], f["run"]) == (
        "spec-vision-draft-position-gap",
        "likely",
        "error",
        0,
    )
    assert any("from the server's start" in q for q in f["questions"])
    assert f["values"]["X"] == 17 and f["values"]["Y"] == 942 and f["values"]["seq"] == 3
    assert f["evidence"][0]["line"] == 1 and "inconsistent sequence positions" in f["evidence"][0]["text"]
    assert f["fixed_in"] == 11548
    fix = next(r for r in f["references"] if r["role"] == "fix")
    assert (fix["kind"], fix["id"], fix["build"]) == ("pr", "30257", 11548)
    assert {"text", "command"} <= set(f["remediation"][0])
    assert f["workarounds"] and f["verification"] and isinstance(f["questions"], list)
    assert "upgrade" in f["version_status"]


def test_markdown_reads_as_a_ticket_reply(seed_log: Path) -> None:
    out = run("explain", str(seed_log), "--format", "markdown", "--cmdline", SEED_CMD, "--build", "11503")
    text = out.stdout.decode()
    for heading in ("**What happened.**", "**What to do, in order**", "**How to verify the fix**", "**References**"):
        assert heading in text
    assert "[PR #30257](https://github.com/ggml-org/llama.cpp/pull/30257)" in text


def test_exit_codes(tmp_path: Path, seed_log: Path) -> None:
    healthy = tmp_path / "ok.log"
    healthy.write_text("srv  update_slots: all slots are idle\n")
    assert run("explain", str(healthy)).returncode == 0
    assert run("explain", str(seed_log)).returncode == 1
    assert run("explain", str(seed_log), "--fail-on", "critical").returncode == 0
    assert run("explain", str(tmp_path / "missing.log")).returncode == 2
    assert run("explain", str(seed_log), "--format", "yaml").returncode == 2


def test_stdin_and_gzip(tmp_path: Path) -> None:
    out = run("explain", "-", "--format", "json", stdin=gzip.compress(SEED_SNIPPET.encode()))
    assert json.loads(out.stdout)["findings"][0]["rule_id"] == "spec-vision-draft-position-gap"


@pytest.mark.parametrize(
    "content,message",
    [
        (b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 20, "binary data"),
        (gzip.compress(SEED_SNIPPET.encode() * 500)[:300], "truncated"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    out = run("explain", str(path))
    assert out.returncode == 2
    err = out.stderr.decode().strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in out.stderr.decode()


def test_empty_log_is_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    out = run("explain", str(path), "--format", "json")
    assert out.returncode == 0 and json.loads(out.stdout)["findings"] == []


def test_log_text_cannot_style_or_drive_the_terminal(tmp_path: Path) -> None:
    hostile = (
        "E srv        decode: failed to process speculative batch [bold red]PWNED[/] "
        "\x1b]0;title\x07\x1b[2J\x1b[31mred\n"
    )
    path = tmp_path / "hostile.log"
    path.write_bytes(hostile.encode())
    out = run("explain", str(path), env={"FORCE_COLOR": "1", "TERM": "xterm-256color"})
    text = out.stdout.decode()
    assert "[bold red]PWNED[/]" in text  # shown literally, not interpreted
    assert "\x1b]0;" not in text and "\x1b[2J" not in text and "\x07" not in text


def test_broken_rule_file_is_reported_and_others_still_load(tmp_path: Path, seed_log: Path) -> None:
    rules = tmp_path / "myrules" / "server"
    rules.mkdir(parents=True)
    (rules / "broken.yaml").write_text("id: broken\ntitle: x\ncategory: server\nseverity: bogus\n")
    (rules / "slow.yaml").write_text((DATA / "catastrophic-rule.yaml").read_text())
    out = run("explain", str(seed_log), "--rules", str(tmp_path / "myrules"), "--format", "json")
    assert out.returncode == 2
    err = out.stderr.decode()
    assert "broken.yaml:4: severity" in err
    assert "slow.yaml" in err and "backtrack" in err
    assert json.loads(out.stdout)["findings"][0]["rule_id"] == "spec-vision-draft-position-gap"


def test_facts_command(seed_log: Path) -> None:
    out = run("facts", str(seed_log), "--format", "json", "--cmdline", SEED_CMD)
    data = json.loads(out.stdout)
    assert data["schema_version"] and data["rules_version"]  # the wrapper explain's JSON has
    facts = data["runs"][0]["facts"]
    assert facts["has_mmproj"] is True and facts["spec_type"] == "draft-mtp"


def test_rules_commands() -> None:
    assert run("rules", "test").returncode == 0
    schema = json.loads(run("rules", "schema").stdout)
    assert "signatures" in schema["properties"]
    assert b"spec-vision-draft-position-gap" in run("rules", "list").stdout
