"""`llamadiag report`: a bug-report draft for what no rule explains; the templates it groups lines into."""

from __future__ import annotations

import json
from pathlib import Path

from llamadiag.engine.unmatched import mask, unmatched_templates
from tests.cli.test_cli import run
from tests.paths import SAMPLES

UNKNOWN = """\
build: 6550 (5c6a4dbe6) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu
system info: n_threads = 16, n_threads_batch = 16, total_threads = 32
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes
llama_model_loader: loaded meta data with 38 key-value pairs and 579 tensors from /home/bob/models/Qwen3-30B-A3B-Q4_K_M.gguf (version GGUF V3 (latest))
main: server is listening on http://0.0.0.0:8080 - starting the main loop
slot launch_slot_: id  0 | task 0 | processing task
ggml_backend_cuda_graph_compute: CUDA graph update failed for node 0x55d1c2a3b4c0 (op MUL_MAT), disabling graphs
slot launch_slot_: id  0 | task 12 | processing task
ggml_backend_cuda_graph_compute: CUDA graph update failed for node 0x55d1c2a9f120 (op MUL_MAT), disabling graphs
sampler_sample: error: grammar stack is empty after 17 tokens, aborting
srv  log_server_r: request: POST /v1/chat/completions 10.0.3.7 500
"""


def test_mask_groups_variable_parts() -> None:
    assert mask("id  0 | task 17 | size = 62.813 MiB at 0x7f3a2b, /home/u/m.gguf") == (
        "id <n> | task <n> | size = <size> at <hex>, <path>"
    )
    t = unmatched_templates(
        [
            (3, "W", "retry 1 of 5 after 250 ms", set()),
            (9, "W", "retry 2 of 5 after 500 ms", set()),
            (12, "E", "fatal: cannot open /tmp/x/y.bin", set()),
            (14, "I", "all fine", set()),
            (20, "E", "explained failure", {"some-rule"}),
        ],
        explained_rules={"some-rule"},
    )
    assert [(x.level, x.template, x.count, x.first_line, x.last_line) for x in t] == [
        ("E", "fatal: cannot open <path>", 1, 12, 12),
        ("W", "retry <n> of <n> after <n> ms", 2, 3, 9),
    ]


def test_report_drafts_llama_cpp_issue_form(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(UNKNOWN)
    out = run("report", str(log))
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    for heading in (
        "### Name and Version",
        "### Operating systems",
        "### GGML backends",
        "### Hardware",
        "### Models",
        "### Problem description & steps to reproduce",
        "### First Bad Commit",
        "### Relevant log output",
        "### Before filing, please answer",
    ):
        assert heading in text, heading
    assert "version: 6550 (5c6a4dbe6)" in text and "\nLinux\n" in text and "CUDA" in text
    assert "NVIDIA GeForce RTX 4090" in text and "Qwen3-30B-A3B-Q4_K_M.gguf" in text
    # grouped and masked: the two graph-update lines (no level letter in this era, "failed" reads as an
    # error) are one template, the most frequent error first
    table = text[text.index("| level |") :]
    assert table.index("| E | 2 | 8–10 | `ggml_backend_cuda_graph_compute: CUDA graph update failed for node <hex>") < (
        table.index("| E | 1 | 11–11 | `sampler_sample: error: grammar stack is empty after <n> tokens, aborting` |")
    )
    assert "<!-- Title: Misc. bug: ggml_backend_cuda_graph_compute: CUDA graph update failed" in text
    assert "bob" not in text and "10.0.3.7" not in text
    assert "full llama-server command line" in text  # the log has none: a question


def test_report_json_and_known_findings() -> None:
    out = run("report", str(SAMPLES / "seed-b11503-default.log"), "--format", "json", "--force")
    data = json.loads(out.stdout)
    assert data["known_findings"][0].startswith("spec-vision-draft-position-gap")
    # the seed error lines are explained by that finding, so they are not among the templates
    assert not any("speculative batch" in t["template"] for t in data["templates"])
    assert data["name_and_version"].startswith("version: 11503") or "unknown" in data["name_and_version"]
    assert data["redaction"]["enabled"] is True


def test_report_bad_input() -> None:
    out = run("report", "/nonexistent/server.log")
    assert out.returncode == 2 and b"Traceback" not in out.stderr


# -- no draft where a rule explains the failure or nothing failed (#13 point 5) ----------------
REAL = SAMPLES / "real"


def test_no_draft_for_healthy_or_empty_logs(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    # healthy-lv4: its sampler-params line holds 'penalty_last_n' (a known report's literal) and
    # was taken for an error; the others drafted a report titled after the CORS warning
    for log in (REAL / "healthy-default.log", REAL / "healthy-lv4.log", REAL / "cuda-healthy-ngl99.log", empty):
        out = run("report", str(log))
        assert out.returncode == 3, (log, out.stdout[:200])
        assert out.stdout == b"" and b"nothing to report" in out.stderr, log
    data = json.loads(run("report", str(REAL / "healthy-default.log"), "-f", "json").stdout)
    assert data["reason"] == "nothing"


def test_no_draft_when_a_rule_explains_the_failure() -> None:
    log = REAL / "port-in-use.log"
    out = run("report", str(log))
    assert out.returncode == 1 and out.stdout == b""
    message = " ".join(out.stderr.decode().split())
    assert f"llamadiag explain {log}" in message and "port-already-in-use" in message
    assert "docs/rules/port-already-in-use.md" in message
    data = json.loads(run("report", str(log), "-f", "json").stdout)
    assert (data["reason"], data["rule_id"]) == ("explained", "port-already-in-use")
    # --force drafts anyway; the title is never a warning (here the error lines are explained)
    forced = run("report", str(log), "--force", "-f", "json")
    assert forced.returncode == 0
    draft = json.loads(forced.stdout)
    assert draft["title"] == "Misc. bug: <one line: what fails>" and "CORS" not in draft["title"]


def test_offloaded_layers_mean_a_gpu(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "0.00.100.000 I srv  llama_server: initializing ...\n"
        "0.00.200.000 I load_tensors: offloaded 63/63 layers to GPU\n"
        "0.00.300.000 I srv  llama_server: listening on http://127.0.0.1:8080\n"
        "0.01.000.000 E srv  frobnicate: widget queue wedged after 17 tokens\n"
    )
    draft = json.loads(run("report", str(log), "-f", "json").stdout)
    assert "CPU" not in draft["ggml_backends"] and "63/63 layers offloaded to the GPU" in draft["ggml_backends"]
    assert draft["title"] == "Misc. bug: srv frobnicate: widget queue wedged after <n> tokens"
    real = json.loads(run("report", str(REAL / "cuda-healthy-ngl99-lv4.log"), "--force", "-f", "json").stdout)
    assert real["ggml_backends"] == "CUDA (3/3 layers offloaded to the GPU)"
