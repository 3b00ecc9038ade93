"""The real-world corpus: labels and excerpts agree, and the scorer's guard holds.

The guard test runs llamadiag once per excerpt (about two minutes on two cores); set
LLAMADIAG_REALWORLD_JOBS to use more workers.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RULES = HERE.parent.parent / "rules"

_spec = importlib.util.spec_from_file_location("realworld_score", HERE / "score.py")
score = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = score  # dataclasses look the module up
_spec.loader.exec_module(score)

SUBSYSTEMS = {
    "CUDA",
    "Vulkan",
    "Metal",
    "ROCm/HIP",
    "SYCL",
    "CPU",
    "RPC",
    "model loading",
    "tokenizer/templates/tool calls",
    "context/KV cache",
    "speculative decoding",
    "multimodal",
    "HTTP/API",
    "router mode",
    "embeddings/rerank",
    "memory (OOM)",
    "Docker/Windows packaging",
    "healthy",
}
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def test_every_excerpt_is_labelled_and_every_label_has_its_file():
    labels = score.load_labels()
    files = [e["file"] for e in labels]
    assert len(files) == len(set(files)), "duplicate labels"
    on_disk = {p.name for p in score.EXCERPTS.iterdir() if p.is_file()}
    assert on_disk - set(files) == set(), "excerpts without a label"
    assert set(files) - on_disk == set(), "labels without an excerpt file"


@pytest.mark.parametrize("entry", score.load_labels(), ids=lambda e: e["file"])
def test_label_fields_are_valid(entry):
    classes = score.load_classes()
    for key in score.LABEL_FIELDS:
        assert key in entry, f"missing field {key}"
    assert isinstance(entry["issue"], int) and entry["issue"] > 0
    assert entry["file"].startswith(f"{entry['issue']}-") and entry["file"].endswith(".txt")
    assert isinstance(entry["settled"], bool)
    for key in ("title", "cause", "stated_by"):
        assert isinstance(entry[key], str) and entry[key].strip(), f"empty {key}"
    assert isinstance(entry["notes"], str)
    assert SLUG.match(entry["class"]), entry["class"]
    assert entry["class"] in classes, f"class {entry['class']} missing from classes.yaml"
    assert entry.get("subsystem") in SUBSYSTEMS
    assert isinstance(entry["fix"], list) and all(isinstance(n, int) and n > 0 for n in entry["fix"])
    assert re.match(r"^[\w.-]+/[\w.-]+$", entry.get("repo", "ggml-org/llama.cpp"))
    if entry["class"] == "healthy":
        assert entry["settled"] is False and entry["subsystem"] == "healthy"
    text = (score.EXCERPTS / entry["file"]).read_text(encoding="utf-8")
    assert text.strip(), "empty excerpt"


def test_classes_name_existing_rules():
    known = {p.stem for p in RULES.rglob("*.yaml")}
    classes = score.load_classes()
    assert "healthy" in classes and classes["healthy"] == []
    for cls, ids in classes.items():
        assert SLUG.match(cls), cls
        for rule_id in ids:
            assert rule_id in known, f"{cls}: no rule file named {rule_id}"


def test_classify_outcomes():
    acc = ["a"]
    f = lambda rid, conf="confirmed": {"rule_id": rid, "confidence": conf}  # noqa: E731
    assert score.classify([], acc, healthy=False) == "silent"
    assert score.classify([f("a")], acc, healthy=False) == "correct"
    assert score.classify([f("b"), f("a")], acc, healthy=False) == "right-not-first"
    assert score.classify([f("b", "likely")], acc, healthy=False) == "wrong"
    assert score.classify([f("b", "possible")], acc, healthy=False) == "wrong-possible"
    assert score.classify([], [], healthy=True) == "clean"
    assert score.classify([f("b", "possible")], [], healthy=True) == "false-alarm"


def test_realworld_guard_holds():
    jobs = int(os.environ.get("LLAMADIAG_REALWORLD_JOBS", "2"))
    results = score.score_corpus(jobs=jobs)
    summary = score.summarize(results)
    failures = score.check_guard(summary, score.load_guard())
    assert not failures, (failures, summary)


def test_guard_holds_a_count_as_well_as_a_share():
    summary = {"top1_pct": 80.0, "settled_outcomes": {"correct": 5}, "confident_wrong": 0, "healthy_false_alarms": 0}
    summary["errors"] = 0
    assert score.check_guard(summary, {"min_top1_pct": 70, "min_top1_correct": 6})
    assert score.check_guard(summary, {"min_top1_pct": 70, "min_top1_correct": 5}) == []
