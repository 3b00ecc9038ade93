"""Conditions that compare a fact with another fact, and `given` for command-line options:
three-valued like every condition (an unknown side is a question, never a verdict)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from llamadiag.api import diagnose, diagnose_text
from llamadiag.engine.facts import FactValue
from llamadiag.engine.reasoning import check, expected_text
from llamadiag.knowledge.rulemodel import Condition
from tests.paths import SAMPLES


def facts(**values: object) -> dict[str, FactValue]:
    return {name.replace("__", "."): FactValue(v, 1, "log") for name, v in values.items()}


def cond(**spec: object) -> Condition:
    return Condition.model_validate(spec)


@pytest.mark.parametrize(
    ("spec", "known", "expected"),
    [
        ({"fact": "n_ctx", "equals_fact": "n_ctx_train"}, {"n_ctx": 131072, "n_ctx_train": 131072}, True),
        ({"fact": "n_ctx", "equals_fact": "n_ctx_train"}, {"n_ctx": 2048, "n_ctx_train": 4096}, False),
        ({"fact": "n_ctx", "not_equals_fact": "n_ctx_train"}, {"n_ctx": 2048, "n_ctx_train": 4096}, True),
        ({"fact": "n_ctx", "at_least_fact": "n_ctx_train"}, {"n_ctx": 8192, "n_ctx_train": 4096}, True),
        ({"fact": "n_ctx", "at_most_fact": "n_ctx_train"}, {"n_ctx": 8192, "n_ctx_train": 4096}, False),
        # numbers compare as numbers whatever their type; words case-blind
        ({"fact": "n_ctx", "equals_fact": "n_ctx_train"}, {"n_ctx": "4096", "n_ctx_train": 4096.0}, True),
        (
            {"fact": "cache_type_k", "equals_fact": "cache_type_v"},
            {"cache_type_k": "Q8_0", "cache_type_v": "q8_0"},
            True,
        ),
    ],
)
def test_fact_to_fact_verdicts(spec: dict, known: dict, expected: bool) -> None:
    used: dict[str, FactValue] = {}
    assert check(cond(**spec), facts(**known), used) is expected
    assert set(used) == set(known)  # both sides are shown as the facts the verdict used


@pytest.mark.parametrize("known", [{"n_ctx": 4096}, {"n_ctx_train": 4096}, {}])
def test_an_unknown_side_is_unknown_not_false(known: dict) -> None:
    for test in ("equals_fact", "not_equals_fact", "at_least_fact", "at_most_fact"):
        assert check(cond(fact="n_ctx", **{test: "n_ctx_train"}), facts(**known), {}) is None


def test_ordering_of_words_is_unknown() -> None:
    c = cond(fact="cache_type_k", at_least_fact="cache_type_v")
    assert check(c, facts(cache_type_k="q8_0", cache_type_v="f16"), {}) is None


def test_expected_text_shows_the_other_fact_and_its_value() -> None:
    c = cond(fact="n_ctx", equals_fact="n_ctx_train")
    assert expected_text(c) == "equals_fact n_ctx_train"
    assert expected_text(c, facts(n_ctx_train=131072)) == "equals_fact n_ctx_train (131072)"


def test_given_needs_a_command_line() -> None:
    not_given = cond(fact="flag.ctx-size", given=False)
    assert check(not_given, facts(n_ctx=4096), {}) is None  # no command line: not known
    assert check(not_given, facts(flag__model="m.gguf"), {}) is True
    with_c = {"flag.model": FactValue("m.gguf", None, "cmdline"), "flag.ctx-size": FactValue("8192", None, "cmdline")}
    assert check(not_given, with_c, {}) is False
    # exists keeps its meaning: no fact, whatever the reason
    assert check(cond(fact="flag.ctx-size", exists=False), facts(n_ctx=4096), {}) is True


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"fact": "n_ctx", "equals_fact": "n_ctx_train", "at_least": 1}, "one test"),
        ({"fact": "n_ctx", "equals_fact": "n_ctx"}, "with itself"),
        ({"fact": "n_ctx", "given": True}, "flag.<name>"),
        ({"any_of": [{"fact": "n_ctx", "equals": 1}], "equals_fact": "n_ctx_train"}, "any_of"),
    ],
)
def test_the_model_refuses_ill_formed_comparisons(spec: dict, words: str) -> None:
    with pytest.raises(ValidationError, match=words.replace("<", ".").replace(">", ".")):
        Condition.model_validate(spec)


def test_a_range_stays_one_test() -> None:
    c = cond(fact="n_ctx", at_least=32768, at_most=1048576)
    assert check(c, facts(n_ctx=131072), {}) is True


# --- end to end: the rule that compares n_ctx with n_ctx_train, on realistic logs -------------

RULE = "context-default-training-size-oom"
VULKAN_KV = SAMPLES / "memory-vulkan-kv-oom-b8150-windows-msvc.log"  # -c 0 -fit off, n_ctx = n_ctx_train
VULKAN_CMD = "llama-server.exe -m C:\\models\\Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 0 -fit off"


def _verdict(report, rule: str = RULE):
    finding = next((f for f in report.findings if f.rule_id == rule), None)
    ruled = next((r for r in report.ruled_out if r.rule_id == rule), None)
    return finding, ruled


def test_context_equal_to_training_context_names_the_default() -> None:
    finding, _ = _verdict(diagnose(VULKAN_KV, cmdline=VULKAN_CMD).report)
    assert finding is not None and finding.confidence == "likely"  # partial evidence: never confirmed
    assert {"n_ctx", "n_ctx_train"} <= set(finding.facts_used)
    assert "40960 tokens, n_ctx_train = 40960" in finding.diagnosis


def test_a_chosen_smaller_context_rules_the_default_out() -> None:
    text = VULKAN_KV.read_text(encoding="utf-8").replace(
        "n_ctx                 = 40960", "n_ctx                 = 16384"
    )
    _, ruled = _verdict(diagnose_text(text).report)
    assert ruled is not None and "equals_fact n_ctx_train (40960)" in ruled.reason


def test_an_unprinted_context_is_a_question_not_a_verdict() -> None:
    text = "\n".join(ln for ln in VULKAN_KV.read_text(encoding="utf-8").splitlines() if "n_ctx " not in ln)
    finding, ruled = _verdict(diagnose_text(text).report)
    assert ruled is None and finding is not None
    assert finding.conditions[0].status == "unknown"
    assert any("training context" in q for q in finding.questions)


def test_real_server_context_set_above_training_is_not_the_default() -> None:
    # the real llama-server, -c 400000000 on a 4096-token model (tests/realserver/capture.py)
    report = diagnose(SAMPLES / "real" / "cuda-oom-ctx-fit-off-lv4.log").report
    finding, ruled = _verdict(report)
    assert finding is None and ruled is not None
    assert any(f.rule_id == "cuda-oom-model-load" for f in report.findings)


def test_c_0_on_the_command_line_is_no_context_size() -> None:
    # a 2026 default-verbosity log prints neither n_ctx nor n_ctx_train; -c 0 must not become
    # "n_ctx = 0" (which would rule the rule out), it leaves the size unknown
    text = "\n".join(ln for ln in VULKAN_KV.read_text(encoding="utf-8").splitlines() if "n_ctx" not in ln)
    report = diagnose_text(text, cmdline=VULKAN_CMD).report
    finding, ruled = _verdict(report)
    assert ruled is None and finding is not None and finding.confidence == "likely"
    assert "n_ctx" not in finding.facts_used


@pytest.mark.parametrize(
    ("log", "same"),
    [("seed-mtp-image-lv4.log", True), ("healthy-lv4.log", False), ("healthy-default.log", None)],
)
def test_real_server_facts_compare(log: str, same: bool | None) -> None:
    # the real llama-server (b11312) at -lv 4 prints both sides (default -c: 4096 = 4096; -c 2048);
    # at default verbosity it prints neither, and the comparison stays unknown
    run = diagnose(SAMPLES / "real" / log).report.runs[0]
    known = {k: FactValue(v, None, "log") for k, v in run.facts.items()}
    assert check(cond(fact="n_ctx", equals_fact="n_ctx_train"), known, {}) is same


OOM_AT_LOAD = "llama_kv_cache_init: failed to allocate buffer for kv cache\nllama_init_from_model: failed to initialize the context\n"


def test_a_shared_line_with_no_fact_known_names_no_guess() -> None:
    """Every out-of-memory at load prints the allocation line: the default-context rule
    (needs_a_known_fact) is ruled out when none of its facts is known, and names its cause when
    the sizes are in the log."""
    finding, ruled = _verdict(diagnose_text(OOM_AT_LOAD).report)
    assert finding is None and ruled is not None and "known" in ruled.reason
    sized = "print_info: n_ctx_train      = 163840\nllama_context: n_ctx         = 163840\n" + OOM_AT_LOAD
    finding, _ = _verdict(diagnose_text(sized).report)
    assert finding is not None and finding.confidence == "likely"
