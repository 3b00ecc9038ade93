"""Writing rules: the `rules new` skeleton fails lint with its TODOs and passes once filled;
the checked loader refuses an unfinished rule; a rule's source file is known (#13 point 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llamadiag.knowledge.loader import load_knowledge
from llamadiag.ruletools.lint import lint
from llamadiag.ruletools.skeleton import SkeletonError, write_skeleton

# a real llama-server failure line (from a Windows log in sample_logs/), and its healthy neighbour
FAILING = "llama_model_load: error loading model: tensor 'blk.0.attn_q.weight' data is not within the file bounds"
HEALTHY = "llama_model_load: loaded meta data with 37 key-value pairs and 291 tensors"


def _filled(path: Path) -> None:
    """Fill the skeleton the way an author would: every TODO replaced."""
    data = yaml.safe_load(path.read_text())
    data.update(
        title="Model file cut short: a tensor lies beyond the end of the GGUF file",
        summary="The server stops at start-up with 'data is not within the file bounds'.",
        diagnosis="The model file ends before tensor {tensor}: it was not downloaded completely.",
        root_cause="A GGUF file holds its tensors at offsets its header gives; a partial download ends early.",
        remediation=[{"text": "Download the model again and compare its size with the published one."}],
        verification={"steps": ["The server starts and prints 'server is listening'."]},
    )
    data["versions"]["fix_note"] = "Not a bug of llama-server: the file is incomplete."
    data["signatures"] = [
        {
            "name": "tensor-out-of-bounds",
            "entries": [
                {"regex": r"tensor '(?P<tensor>[^']+)' data is not within the file bounds", "literal": "file bounds"}
            ],
            "within": 1,
        }
    ]
    data["examples"] = [
        {"name": "truncated download", "expect": "likely", "log": FAILING + "\n"},
        {"name": "a healthy load", "expect": "none", "log": HEALTHY + "\n"},
    ]
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_skeleton_fails_lint_with_its_todos_and_passes_once_filled(tmp_path: Path) -> None:
    path = write_skeleton("model-file-truncated", "model-loading", tmp_path)
    assert path == tmp_path / "model-loading" / "model-file-truncated.yaml"
    k = load_knowledge([tmp_path], builtin=False)
    assert not k.errors and [r.rule.id for r in k.rules] == ["model-file-truncated"]  # the skeleton loads
    issues = [i for i in lint(k) if i.severity == "error"]
    todo = [i for i in issues if i.check == "unfinished"]
    assert {i.message.split(":")[0] for i in todo} >= {"TODO left in title", "TODO left in diagnosis"}
    assert all(i.line for i in todo)  # each TODO with its line in the file
    _filled(path)
    k = load_knowledge([tmp_path], builtin=False)
    assert not k.errors
    assert [str(i) for i in lint(k) if i.severity == "error"] == []


def test_an_unfinished_rule_is_refused_with_its_first_todo(tmp_path: Path, monkeypatch) -> None:
    from llamadiag.ruletools.checked import checked_knowledge

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    write_skeleton("model-file-truncated", "model-loading", tmp_path / "rules")
    k = checked_knowledge([tmp_path / "rules"], builtin=False)
    assert k.rules == [] and "rule refused: TODO left in title" in str(k.errors[0])


def test_a_skeleton_refuses_bad_names_and_existing_files(tmp_path: Path) -> None:
    with pytest.raises(SkeletonError, match="lowercase"):
        write_skeleton("Bad Id", "server", tmp_path)
    with pytest.raises(SkeletonError, match="category"):
        write_skeleton("ok-id", "../etc", tmp_path)
    write_skeleton("ok-id", "server", tmp_path)
    with pytest.raises(SkeletonError, match="exists"):
        write_skeleton("ok-id", "server", tmp_path)


def test_source_file_of_shipped_and_user_rules(tmp_path: Path) -> None:
    k = load_knowledge()
    loaded = k.rule("spec-vision-draft-position-gap")
    assert loaded is not None and loaded.source_file() == "rules/speculative/spec-vision-draft-position-gap.yaml"
    user = tmp_path / "speculative"
    user.mkdir()
    (user / "spec-vision-draft-position-gap.yaml").write_bytes(loaded.path.read_bytes())
    mine = load_knowledge([tmp_path]).rule("spec-vision-draft-position-gap")
    assert mine is not None and mine.source_file() == str(user / "spec-vision-draft-position-gap.yaml")
    assert mine.overrides == loaded.path and "overrides the shipped rule" in (mine.overrides_note() or "")


def test_a_letterless_literal_gets_a_warning_and_a_word_of_the_line_does_not(tmp_path: Path) -> None:
    """` 501` (an HTTP status) is on countless lines: lint says so; the rule's own word is fine."""
    path = write_skeleton("embeddings-disabled-501", "server", tmp_path)
    _filled(path)
    data = yaml.safe_load(path.read_text())
    data["diagnosis"] = "The embeddings request was refused with HTTP {status}."
    data["signatures"][0]["entries"] = [{"regex": r"embeddings (?P<status>501)\b", "literal": " 501"}]
    data["examples"] = [
        {"name": "refused", "expect": "likely", "log": "srv  log_server_r: request: POST /v1/embeddings 501\n"},
        {"name": "served", "expect": "none", "log": "srv  log_server_r: request: POST /v1/embeddings 200\n"},
    ]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    issues = lint(load_knowledge([tmp_path], builtin=False))
    assert [str(i) for i in issues if i.severity == "error"] == []  # a working rule, only slow
    warned = [i for i in issues if i.check == "literal-strength"]
    assert len(warned) == 1 and "' 501' has no letter" in warned[0].message and warned[0].severity == "warning"
    data["signatures"][0]["entries"] = [{"regex": r"embeddings (?P<status>501)\b", "literal": "embeddings 501"}]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert [i for i in lint(load_knowledge([tmp_path], builtin=False)) if i.check == "literal-strength"] == []
