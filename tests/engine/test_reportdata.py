"""The report dataclasses' dump, copy and validation (engine/reportdata.py): a report read back
from its JSON is the same report, data that does not fit is refused by name, and a redacted
report keeps its nested models."""

from __future__ import annotations

import json

import pytest

from llamadiag import api
from llamadiag.engine.findings import Evidence, Finding, Report, RunOut
from llamadiag.engine.reportdata import dump, load, rebuild, replace
from llamadiag.features.redact import redact_report
from tests.paths import SAMPLES

LOGS = ["memory-cuda-oom-b4589-raw.log", "templates-chatml-fallback-b5400-docker.log", "real/model-lfs-pointer.log"]


@pytest.mark.parametrize("name", LOGS)
def test_a_report_read_back_from_its_json_is_the_same_report(knowledge: api.Knowledge, name: str) -> None:
    report = api.diagnose(SAMPLES / name, knowledge=knowledge).report
    assert report.runs
    text = json.dumps(dump(report, json=True))
    again = load(Report, json.loads(text))
    assert again == report
    assert isinstance(again.runs[0], RunOut)
    assert all(isinstance(e, Evidence) for f in again.findings for e in f.evidence)
    assert json.dumps(dump(again, json=True)) == text


def test_data_that_does_not_fit_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="rules_version"):
        load(Report, {"version": "1", "input": {}, "runs": [], "findings": []})
    with pytest.raises(ValueError, match=r"evidence\.0\.line"):
        load(Finding, {"evidence": [{"line": "not a number", "text": "x"}]})


def test_json_dump_writes_lists_and_leaves_out_fields() -> None:
    ev = Evidence(line=3, text="decode: failed", time=float("inf"))
    assert dump(ev, json=True, exclude={"text"}) == {"line": 3, "time": None}
    assert dump(ev) == {"line": 3, "text": "decode: failed", "time": float("inf")}
    moved = replace(ev, line=4)
    assert (moved.line, ev.line, moved.text) == (4, 3, ev.text)


def test_a_redacted_report_keeps_its_models(knowledge: api.Knowledge) -> None:
    report = api.diagnose(SAMPLES / "templates-chatml-fallback-b5400-docker.log", knowledge=knowledge).report
    clean, summary = redact_report(report)
    assert type(clean) is Report and clean.findings and all(isinstance(f, Finding) for f in clean.findings)
    assert dump(clean) != dump(report) and summary.counts  # something was replaced ...
    assert rebuild(report, dump(report)) == report  # ... and an unchanged dump rebuilds the same report
