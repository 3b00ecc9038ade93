"""User rule folders add rules or override shipped ones by id; --why explains exclusions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.paths import DATA, RULES

SEED = RULES / "speculative" / "spec-vision-draft-position-gap.yaml"
SNIPPET = "E srv        decode: failed to process speculative batch\n"


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "llamadiag", *args], capture_output=True, timeout=120, env={**os.environ, **(env or {})}
    )


def test_xdg_rule_overrides_shipped_rule_by_id(tmp_path: Path) -> None:
    rule = yaml.safe_load(SEED.read_text())
    rule["title"] = "Locally patched title"
    folder = tmp_path / "cfg" / "llamadiag" / "rules" / "speculative"
    folder.mkdir(parents=True)
    (folder / "spec-vision-draft-position-gap.yaml").write_text(yaml.safe_dump(rule, sort_keys=False))
    log = tmp_path / "s.log"
    log.write_text(SNIPPET)
    out = run(
        "explain",
        str(log),
        "--format",
        "json",
        env={"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    finding = json.loads(out.stdout)["findings"][0]
    assert finding["title"] == "Locally patched title"


def test_extra_rule_folder_adds_a_rule(tmp_path: Path) -> None:
    folder = tmp_path / "mine" / "server"
    folder.mkdir(parents=True)
    (folder / "site-gpu-fell-off.yaml").write_text((DATA / "site-gpu-fell-off.yaml").read_text())

    log = tmp_path / "k.log"
    log.write_text("Nov 28 10:11:12 gpu1 kernel: NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n")
    out = run("explain", str(log), "--rules", str(tmp_path / "mine"), "--format", "json")
    findings = json.loads(out.stdout)["findings"]
    assert (
        findings[0]["rule_id"] == "site-gpu-fell-off" and findings[0]["diagnosis"] == "GPU 0000:01:00 fell off the bus."
    )


def test_why_names_the_fact_that_ruled_a_rule_out(tmp_path: Path) -> None:
    log = tmp_path / "s.log"
    log.write_text(SNIPPET)
    out = run(
        "explain", str(log), "--why", "--format", "json", "--cmdline", "llama-server -m m.gguf --spec-type draft-mtp"
    )
    data = json.loads(out.stdout)
    assert data["findings"] == []
    reason = data["ruled_out"][0]
    assert reason["rule_id"] == "spec-vision-draft-position-gap" and "has_mmproj" in reason["reason"]
    text = run(
        "explain", str(log), "--why", "--cmdline", "llama-server -m m.gguf --spec-type draft-mtp"
    ).stdout.decode()
    assert "Ruled out" in text and "has_mmproj" in text


def test_truncated_paste_still_diagnoses(tmp_path: Path) -> None:
    # a paste that starts and ends mid-message
    log = tmp_path / "paste.txt"
    log.write_text(
        "e (i.e. the KV cache) for sequence 3 is X = 17\n"
        " - the tokens for sequence 3 in the input batch have a starting position of Y = 942\n"
        " it is required that the sequence positions remain consecutive: Y = X + 1\n"
        "0.41.772.031 E srv        decode: failed to process speculative batch\n"
        "0.41.772.040 E srv  update_slots: decode() fai"
    )
    out = run(
        "explain",
        str(log),
        "--format",
        "json",
        "--cmdline",
        "llama-server -m m.gguf --mmproj p.gguf --spec-type draft-mtp",
        "--build",
        "11502",
    )
    finding = json.loads(out.stdout)["findings"][0]
    # a cut paste is a snippet: at most likely, whatever the options settle
    assert finding["rule_id"] == "spec-vision-draft-position-gap" and finding["confidence"] == "likely"
    assert (finding["values"]["X"], finding["values"]["Y"], finding["values"]["gap"]) == (17, 942, 924)
    assert "upgrade" in finding["version_status"]
