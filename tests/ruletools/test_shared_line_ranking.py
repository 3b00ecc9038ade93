"""Lines that several causes print, pasted alone or with a little context (issue 15, partial
evidence): every candidate stays at `possible` until facts tell them apart, and the cause the
facts point to ranks first while the other is ruled out."""

from __future__ import annotations

from llamadiag.ruletools.selftest import analyze_text

MTP_PASTE = (
    "common_speculative_init_result: failed to create MTP context\nllama_server: exiting due to model loading error\n"
)
NON_CAUSAL = (
    "C:\\Sources\\llama.cpp\\src\\llama-context.cpp:1220: GGML_ASSERT((cparams.causal_attn || cparams.n_ubatch"
    ' >= n_tokens_all) && "non-causal attention requires n_ubatch >= n_tokens") failed\n'
)
SLOT_LINES = (
    "slot update_slots: id  2 | task 3 | prompt processing progress, n_past = 246, n_tokens = 1353,"
    " progress = 1.000000\n"
    "slot update_slots: id  2 | task 3 | prompt done, n_past = 246, n_tokens = 1353\n"
)


def _ranked(knowledge, text: str, cmdline: str | None = None) -> list[tuple[str, str]]:
    return [(f.rule_id, f.confidence) for f in analyze_text(knowledge, text, cmdline=cmdline).findings]


def test_mtp_failure_alone_names_both_mtp_causes_at_possible(knowledge) -> None:
    got = dict(_ranked(knowledge, MTP_PASTE))
    assert got.get("spec-mtp-with-external-draft-init-failed") == "possible"
    assert got.get("spec-mtp-model-without-mtp-layers") == "possible"


def test_mtp_failure_with_a_draft_model_on_the_command_line(knowledge) -> None:
    cmd = "llama-server -m t.gguf -md d.gguf --spec-type draft-dflash,draft-mtp,ngram-mod"
    got = _ranked(knowledge, MTP_PASTE, cmd)
    assert got[0] == ("spec-mtp-with-external-draft-init-failed", "likely")
    assert "spec-mtp-model-without-mtp-layers" not in dict(got)


def test_mtp_failure_without_a_draft_model_on_the_command_line(knowledge) -> None:
    got = _ranked(knowledge, MTP_PASTE, "llama-server -m t.gguf --spec-type draft-mtp")
    assert got[0][0] == "spec-mtp-model-without-mtp-layers"
    assert "spec-mtp-with-external-draft-init-failed" not in dict(got)


def test_non_causal_assert_alone_is_only_possible_for_either_cause(knowledge) -> None:
    got = dict(_ranked(knowledge, NON_CAUSAL))
    assert got.get("embeddings-batch-over-ubatch-assert") == "possible"
    assert got.get("non-causal-ubatch-too-small-vision") == "possible"


def test_non_causal_assert_on_an_embedding_server(knowledge) -> None:
    cmd = "llama-server -m snowflake-arctic-embed-l-v2.0-q8_0.gguf --embedding -ub 1024 -b 4096 -np 4"
    got = _ranked(knowledge, SLOT_LINES + NON_CAUSAL, cmd)
    assert got[0] == ("embeddings-batch-over-ubatch-assert", "likely")
    assert "non-causal-ubatch-too-small-vision" not in dict(got)


def test_non_causal_assert_after_an_image_batch(knowledge) -> None:
    image = "decoding image batch 1/1, n_tokens_batch = 1120\n"
    got = _ranked(knowledge, SLOT_LINES + image + NON_CAUSAL)
    assert got[0] == ("non-causal-ubatch-too-small-vision", "likely")
    assert "embeddings-batch-over-ubatch-assert" not in dict(got)


def test_llama_box_decode_failure_after_an_invalid_token(knowledge) -> None:
    text = (
        "3.49.305.557 E llama_prepare_sbatch: invalid token[11] = 74429\n"
        "3.49.305.562 E llama_decode: failed to decode, ret = -1\n"
        "3.49.305.567 E srv              update_slots: failed to decode the batch: KV cache is full - try"
        " increasing it via the context size, i = 0, n_batch = 2048, ret = -1\n"
        "3.49.305.569 E srv                send_error: task 1 | error = decoding exceeds the available context"
        " size. try increasing the context size.\n"
    )
    got = _ranked(knowledge, text)
    assert got[0] == ("request-token-ids-outside-vocab", "likely")
    assert ("context-size-exceeded", "possible") in got
    assert "kv-cache-no-memory-slot" not in dict(got)


def test_range_check_on_a_negative_token_id_is_not_the_draft_binding(knowledge) -> None:
    text = (
        "terminate called after throwing an instance of 'std::out_of_range'\n"
        "  what():  vector::_M_range_check: __n (which is 18446744073709551615) >= this->size() (which is 151936)\n"
    )
    got = _ranked(knowledge, text, "llama-server -m t.gguf -md dflash.gguf --spec-type draft-dflash")
    assert got[0] == ("request-token-ids-outside-vocab", "likely")
    assert "spec-draft-load-vector-range" not in dict(got)
