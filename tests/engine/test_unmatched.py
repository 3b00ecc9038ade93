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
