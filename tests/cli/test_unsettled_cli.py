"""`explain --unmatched` and `report` name the known unsettled llama.cpp report a line looks like."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import run

# #24440's setup: Gemma 4 with an MTP draft and -sm tensor; the flash-attention dispatch rule
# excludes -sm tensor, so the abort is left to the unsettled reports.
LOG = """\
llama-server.exe -m gemma-4-31B-it-Q8_0.gguf --spec-type draft-mtp -sm tensor -fa on -ngl 99
build: 9589 (fb83cc9a0) with Clang 20.1.8 for Windows x86_64
system info: n_threads = 16, n_threads_batch = 16, total_threads = 32
main: server is listening on http://127.0.0.1:8080 - starting the main loop
slot launch_slot_: id  0 | task 0 | processing task
D:\\a\\llama.cpp\\llama.cpp\\ggml\\src\\ggml-cuda\\fattn.cu:579: fatal error
"""


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text(LOG)
    return path


def test_explain_unmatched_rich(log: Path) -> None:
    out = run("explain", str(log), "--unmatched", env={"COLUMNS": "220"})
    text = out.stdout.decode()
    assert "Lines no rule explains" in text
    assert "looks like #24440 (open, no known fix)" in text
    assert "looks like #24324 (open, no known fix)" in text


def test_explain_unmatched_json(log: Path) -> None:
    out = run("explain", str(log), "--unmatched", "--format", "json")
    data = json.loads(out.stdout)
    (template,) = [t for t in data["unmatched"] if t["looks_like"]]
    first = template["looks_like"][0]
    assert {"issue", "title", "state", "note", "url", "state_words"} <= set(first)
    assert (first["issue"], first["state"]) == (24440, "open")
    assert first["url"] == "https://github.com/ggml-org/llama.cpp/issues/24440"


def test_explain_unmatched_markdown(log: Path) -> None:
    out = run("explain", str(log), "--unmatched", "--format", "markdown")
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert "## Lines no rule explains" in text
    assert "looks like [#24440](https://github.com/ggml-org/llama.cpp/issues/24440) (open, no known fix)" in text


def test_report_points_to_the_open_thread(log: Path) -> None:
    out = run("report", str(log))
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    head = text.split("### Name and Version")[0]
    assert (
        "Possibly the same as [#24440](https://github.com/ggml-org/llama.cpp/issues/24440) (open): "
        "add your details there instead of filing a new issue." in head
    )
    assert "| #24440, #24324 |" in text  # the grouped-lines table names them too
    data = json.loads(run("report", str(log), "--format", "json").stdout)
    assert [x["issue"] for x in data["possibly_same"]] == [24440, 24324]


def test_report_without_a_known_match_says_nothing_of_it(tmp_path: Path) -> None:
    path = tmp_path / "other.log"
    path.write_text(LOG.replace("ggml-cuda\\fattn.cu:579: fatal error", "widget.cpp:12: fatal error"))
    text = run("report", str(path)).stdout.decode()
    assert "Possibly the same as" not in text


def test_report_on_a_closed_thread_says_to_link_it(tmp_path: Path) -> None:
    path = tmp_path / "adreno.log"
    path.write_text(
        LOG.replace(
            "D:\\a\\llama.cpp\\llama.cpp\\ggml\\src\\ggml-cuda\\fattn.cu:579: fatal error",
            "ggml_vulkan: vk::Device::createComputePipeline: ErrorUnknown",
        )
    )
    text = run("report", str(path)).stdout.decode()
    assert "Possibly the same as [#28635]" in text and "(open): add your details there" in text
    assert (
        "Possibly the same as [#12421](https://github.com/ggml-org/llama.cpp/issues/12421) (closed as stale): "
        "it was closed without a fix: link it from your report." in text
    )
