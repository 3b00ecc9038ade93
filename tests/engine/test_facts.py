"""Facts read from realistic logs of several eras, each traceable to its line."""

from __future__ import annotations

from llamadiag.ruletools.selftest import analyze_file
from tests.paths import SAMPLES


def facts_of(knowledge, name: str, run: int = 0, **kw) -> dict:
    report = analyze_file(knowledge, SAMPLES / name, **kw)
    return report.runs[run].facts


def test_seed_lv4_log(knowledge) -> None:
    f = facts_of(knowledge, "seed-b11503-lv4.log")
    expected = {
        "build": 11503,
        "commit": "d41c07e2b",
        "backends": ["Vulkan"],
        "arch": "glm5next",
        "model_shards": 4,
        "mtp_layers": 1,
        "mtp_unused": False,
        "has_mmproj": True,
        "mmproj": "mmproj-F16.gguf",
        "spec_type": "draft-mtp",
        "spec_n_max": 3,
        "n_ctx": 131072,
        "n_batch": 4096,
        "n_ubatch": 1024,
        "n_slots": 4,
        "flash_attn": "enabled",
        "listen_host": "0.0.0.0",
        "listen_port": 8080,
        "verbosity": 4,
        "os": "linux",
    }
    assert {k: f.get(k) for k in expected} == expected
    assert "Radeon 8060S Graphics (RADV GFX1151)" in f["devices"]


def test_seed_default_log_hides_the_build_but_not_the_era(knowledge) -> None:
    f = facts_of(knowledge, "seed-b11503-default.log")
    assert "build" not in f and f["build_min"] >= 9829 and "build_max" not in f
    assert f["spec_type"] == "draft-mtp" and f["has_mmproj"] is True and f["verbosity"] == 3


def test_old_era_startup_is_one_run_with_raw_backend_lines(knowledge) -> None:
    report = analyze_file(knowledge, SAMPLES / "memory-cuda-oom-b4589-raw.log")
    assert len(report.runs) == 1
    f = report.runs[0].facts
    assert f["build"] == 4589 and f["compute_capability"] == ["8.6"] and f["cuda_archs"].startswith("520,")
    sources = report.runs[0].fact_sources
    assert sources["build"].line == 5 and sources["compute_capability"].line == 4


def test_router_child_gets_its_argv_as_command_line(knowledge) -> None:
    report = analyze_file(knowledge, SAMPLES / "speculative-dflash-mtmd-chunk-router.log")
    child = next(r for r in report.runs if r.instance == "49457")
    assert child.facts["flags"]["spec-type"] == "draft-dflash"
    assert child.facts["flags"]["model-draft"].endswith("DFlash2-Q8_0.gguf")
    assert child.fact_sources["flag.mmproj"].source == "cmdline"


def test_ticket_prefers_the_serving_command_line_over_version(knowledge) -> None:
    f = facts_of(knowledge, "seed-ticket.txt")
    assert f["flags"]["spec-draft-n-max"] == "3" and f["flags"]["spec-type"] == "draft-mtp"
    assert f["build"] == 11503


def test_windows_msvc_log(knowledge) -> None:
    f = facts_of(knowledge, "model-loading-split-second-shard-b8520-windows-msvc.log")
    assert f["os"] == "windows" and f["compiler"].startswith("MSVC")


def test_restart_opens_a_new_run_with_new_facts(knowledge) -> None:
    log = (
        "build: 9048 (5207d120e) with GNU 13.3.0 for Linux x86_64\n"
        "main: server is listening on http://127.0.0.1:8080\n"
        "srv  update_slots: all slots are idle\n"
        "build: 9150 (aaaabbbbc) with GNU 13.3.0 for Linux x86_64\n"
        "main: server is listening on http://127.0.0.1:8080\n"
    )
    from llamadiag.ruletools.selftest import analyze_text

    report = analyze_text(knowledge, log)
    assert [r.facts.get("build") for r in report.runs] == [9048, 9150]


def test_percentiles_stay_within_the_observed_values() -> None:
    from llamadiag.engine.stats import Series

    s = Series()
    for v in (12.5, 9800.0):  # two requests: the default method would give p10 < 0
        s.add(v)
    out = s.summary()
    assert 12.5 <= out["p10"] <= out["median"] <= out["p90"] <= 9800.0
