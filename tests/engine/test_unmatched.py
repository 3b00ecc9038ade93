"""`explain --unmatched` lists the warning/error lines no rule accounts for, as templates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LOG = """\
0.00.000.412 I cmn  common_param: common_params_print_info: verbosity = 3 (adjust with the `-lv N` CLI arg)
0.00.651.020 W srv  llama_server: -----------------
0.00.651.024 W srv  llama_server: CORS is set to allow all origins ('*') and no API key is set
0.01.100.000 I common_speculative_init_result: creating MTP draft context against the target model 'g.gguf'
0.03.120.000 I srv    load_model: loaded multimodal model, 'mmproj-F16.gguf'
0.03.161.004 I srv  llama_server: model loaded
0.03.161.010 I srv  llama_server: listening on http://127.0.0.1:8080
1.10.000.001 E srv  frobnicate: widget 17 failed to frobnicate after 3 tries (/opt/w/17.bin)
1.11.000.001 E srv  frobnicate: widget 18 failed to frobnicate after 5 tries (/opt/w/18.bin)
1.12.000.001 W slot update_slots: id  0 | task 9 | odd thing happened, n = 42
1.13.000.001 E srv        decode: failed to process speculative batch
1.13.000.002 E srv  update_slots: decode() failed: failed to process speculative batch
"""


def test_unmatched_templates(tmp_path: Path) -> None:
    log = tmp_path / "s.log"
    log.write_text(LOG)
    out = subprocess.run(
        [sys.executable, "-m", "llamadiag", "explain", str(log), "--unmatched", "--format", "json"],
        capture_output=True,
        timeout=120,
    )
    data = json.loads(out.stdout)
    templates = {t["template"]: t for t in data["unmatched"]}
    widget = next(t for k, t in templates.items() if "frobnicate" in k)
    assert widget["count"] == 2 and widget["level"] == "E" and widget["first_line"] == 8
    assert "<n>" in widget["template"] and "17" not in widget["template"]
    assert any("odd thing happened" in k for k in templates)
    # explained by the finding, and start-up banners: not listed
    assert not any("speculative batch" in k for k in templates)
    assert not any("CORS" in k or "-----" in k for k in templates)
    assert data["findings"][0]["rule_id"] == "spec-vision-draft-position-gap"


# --- known reports with no settled cause (rules/formats/unsettled.yaml) ---------------------------

ADRENO = "ggml_vulkan: vk::Device::createComputePipeline: ErrorUnknown"
FATTN = "/home/u/llama.cpp/ggml/src/ggml-cuda/fattn.cu:579: fatal error"


def test_unsettled_file_is_sound() -> None:
    from llamadiag.api import load_knowledge
    from llamadiag.engine.unmatched import level_of, looks_like
    from llamadiag.knowledge.formatmodel import Unsettled
    from llamadiag.knowledge.formats import builtin_format

    spec = builtin_format(Unsettled)
    assert len(spec.reports) >= 25
    rule_ids = {r.rule.id for r in load_knowledge().rules}
    for r in spec.reports:
        assert r.title and r.known and r.checked
        assert set(r.explained_by) <= rule_ids, r.issue
        for example in r.examples:
            # the line as posted matches its own entry and counts as an error line to group
            assert r.issue in [x.issue for x in looks_like([example], limit=100)], (r.issue, example)
            assert level_of(None, example) == "E", (r.issue, example)


def test_templates_carry_looks_like() -> None:
    from llamadiag.engine.unmatched import unmatched_templates

    t = unmatched_templates(
        [(5, None, FATTN, set()), (6, None, ADRENO, set()), (7, "E", "something else failed", set())]
    )
    by = {x.first_line: x for x in t}
    assert [x.issue for x in by[5].looks_like] == [24440, 24324]
    assert by[5].looks_like[0].label() == "#24440 (open, no known fix)"
    # open reports first, then the newest; at most three
    assert [x.issue for x in by[6].looks_like] == [28635, 12421, 9452]
    assert by[6].looks_like[1].label() == "#12421 (closed as stale, no known fix)"
    assert by[7].looks_like == []


def test_a_finding_that_settles_the_line_drops_the_hint() -> None:
    from llamadiag.engine.unmatched import looks_like

    line = "srv  send_error: task id = 7, error: Invalid input batch."
    assert [x.issue for x in looks_like([line])] == [14204]
    assert looks_like([line], findings={"batch-position-mismatch"}) == []


def test_no_false_match_on_healthy_sample_logs() -> None:
    from llamadiag.api import diagnose, load_knowledge
    from tests.paths import SAMPLES

    k = load_knowledge()
    healthy = [p for p in sorted(SAMPLES.iterdir()) if any(w in p.name for w in ("nearmiss", "near-miss", "fixed"))]
    # and two logs whose "Invalid input batch." a rule explains (explained_by)
    healthy += [
        SAMPLES / "context-batch-positions-b7003-docker-t.log",
        SAMPLES / "nearmiss-positions-parallel-slots.log",
    ]
    assert len(set(healthy)) >= 8
    for path in dict.fromkeys(healthy):
        report = diagnose(path, knowledge=k, unmatched=True).report
        hints = [(t.template, x.issue) for t in report.unmatched for x in t.looks_like]
        assert hints == [], (path.name, hints)
