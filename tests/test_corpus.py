"""Every shipped sample log gets exactly the findings its expectation entry lists."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llamadiag.selftest import analyze_file, check_expectation

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"


def _expectations() -> list[dict]:
    out = []
    for path in sorted((ROOT / "tests" / "expectations").glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text()) or []:
            entry["_file"] = path.name
            out.append(entry)
    return out


EXPECTATIONS = _expectations()


@pytest.mark.parametrize("entry", EXPECTATIONS, ids=[e["log"] for e in EXPECTATIONS])
def test_sample_log_verdict(knowledge, entry: dict) -> None:
    report = analyze_file(knowledge, SAMPLES / entry["log"], entry.get("cmdline"), entry.get("version_text"))
    assert check_expectation(report, entry) == []


def test_every_sample_log_has_an_expectation() -> None:
    listed = {e["log"] for e in EXPECTATIONS}
    shipped = {p.name for p in SAMPLES.iterdir() if p.is_file()} if SAMPLES.is_dir() else set()
    assert shipped - listed == set(), "sample logs without an expected verdict"
    assert listed - shipped == set(), "expectations for logs that do not exist"
