"""Version strings of every era, unusable versions, and era inference."""

from __future__ import annotations

import pytest

from llamadiag.engine.facts import parse_version, usable_build
from llamadiag.ruletools.selftest import analyze_text


@pytest.mark.parametrize(
    "text,build,commit,extra",
    [
        (
            "build: 4589 (eb7cf15a) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu",
            "4589",
            "eb7cf15a",
            {"target": "x86_64-linux-gnu"},
        ),
        (
            "build: 8689 (20efe75cf) with MSVC 19.38.33134.0 for x64",
            "8689",
            "20efe75cf",
            {"compiler": "MSVC 19.38.33134.0"},
        ),
        ("build_info: b9048-5207d120e", "9048", "5207d120e", {}),
        (
            "common_params_print_info: build 9219 (49b42c9c3) with GNU 13.3.0 for Linux x86_64",
            "9219",
            "49b42c9c3",
            {"target": "Linux x86_64"},
        ),
        (
            "version: 9075 (c0ae3ad2c)\nbuilt with GNU 13.3.0 for Linux x86_64",
            "9075",
            "c0ae3ad2c",
            {"compiler": "GNU 13.3.0"},
        ),
        ("version: 0.1.0-dev (build 10405, commit e79e4bf66)", "10405", "e79e4bf66", {"semver": "0.1.0-dev"}),
        (
            "version: 0.4.1-dev (build 11059, commit 4c1a0af40)\nbuilt with GNU 15.2.0 for Linux x86_64",
            "11059",
            "4c1a0af40",
            {"semver": "0.4.1-dev"},
        ),
        (
            "build: 5000 (abcdef12) with Apple clang version 16.0.0 (clang-1600.0.26.3) for arm64-apple-darwin23.6.0 (debug)",
            "5000",
            "abcdef12",
            {"debug": "(debug)"},
        ),
        ('{"system_fingerprint":"b7700-707cbafc"}', "7700", "707cbafc", {}),
        ("b10217-ddd4ec142", "10217", "ddd4ec142", {}),
    ],
)
def test_version_shapes(knowledge, text, build, commit, extra) -> None:
    fields = parse_version(text, knowledge.versions)
    assert fields["build"] == build and fields["commit"] == commit
    for key, value in extra.items():
        assert fields[key] == value


@pytest.mark.parametrize(
    "text,reason_word",
    [
        ("version: 0 (unknown)", "without git"),
        ("version: 8064 (unknown)", "commit is unknown"),
        ("version: 1 (0a635dc)", "fork"),
        ("b10715-mix-86bd2d3", "fork"),
    ],
)
def test_unusable_versions(knowledge, text, reason_word) -> None:
    usable, reason = usable_build(parse_version(text, knowledge.versions), knowledge.versions)
    assert not usable and reason_word in reason


def test_unusable_version_is_not_used_for_the_fix_window(knowledge) -> None:
    report = analyze_text(
        knowledge,
        "E srv        decode: failed to process speculative batch\n",
        "llama-server -m m.gguf --mmproj p.gguf --spec-type draft-mtp",
        "version: 0 (unknown)",
    )
    finding = report.findings[0]
    assert finding.confidence == "likely"  # partial signature; build unusable, so no version verdict
    assert "without git" in finding.version_status


@pytest.mark.parametrize(
    "lines,lo,hi",
    [
        (
            [
                "0.00.000.412 I cmn  common_param: common_params_print_info: verbosity = 3 (adjust with the `-lv N` CLI arg)",
                "0.03.161.010 I srv  llama_server: listening on http://127.0.0.1:8080",
            ],
            9829,
            None,
        ),
        (
            [
                "0.00.000.100 I log_info: verbosity = 3 (adjust with the `-lv N` CLI arg)",
                "0.00.300.000 I srv          main: loading model",
            ],
            9151,
            9252,
        ),
        (
            [
                "0.00.000.100 I log_info: verbosity = 3 (adjust with the `-lv N` CLI arg)",
                "0.00.300.000 I srv  llama_server: model loaded",
            ],
            9253,
            9828,
        ),
        (["build_info: b9048-5207d120e"], 9048, 9048),
        (['{"tid":"140","timestamp":1717000000,"level":"INFO","function":"main","line":1,"msg":"x"}'], None, 3760),
        (
            [
                "main: server is listening on http://0.0.0.0:9999 - starting the main loop",
                "llm_load_print_meta: arch             = llama",
            ],
            None,
            4462,
        ),
    ],
)
def test_era_bounds_the_build(knowledge, lines, lo, hi) -> None:
    report = analyze_text(knowledge, "\n".join(lines) + "\n")
    facts = report.runs[0].facts
    assert facts.get("build_min") == lo and facts.get("build_max") == hi


def test_build_number_that_contradicts_the_era_is_flagged(knowledge) -> None:
    log = "build: 11474 (0123abcd) with GNU 13.3.0 for Linux x86_64\nmain: HTTP server is listening, hostname: 0.0.0.0, port: 8080, http threads: 7\n"
    facts = analyze_text(knowledge, log).runs[0].facts
    assert "does not fit" in facts["version_problem"]
