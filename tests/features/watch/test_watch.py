"""The Watcher in-process: once per cause, repeats, runs with their own facts, settling, memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.reportdata import dump
from llamadiag.features.redact import Redactor
from llamadiag.features.watch.watcher import CONTINUATION_IDLE, KEPT_RUNS, PREAMBLE_IDLE, RELEASE_IDLE, Watcher
from llamadiag.knowledge.loader import Knowledge
from llamadiag.render.watch import StreamRedactor
from llamadiag.ruletools.selftest import analyze_text
from tests.paths import ROOT, SAMPLES

SEED_LV4 = (SAMPLES / "seed-b11503-lv4.log").read_text()


def lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def watch(
    k: Knowledge, lines: list[str], block: int = 0, cmdline: str | None = None, repeat_interval: float = 1e9
) -> tuple[list[dict[str, Any]], Watcher]:
    events: list[dict[str, Any]] = []
    watcher = Watcher(Analyzer(k, cmdline), events.append, repeat_interval)
    step = block or len(lines) or 1
    for i in range(0, len(lines), step):
        watcher.feed(lines[i : i + step])
    watcher.finish("end of input", {})
    return events, watcher


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_restart_after_upgrade_gets_its_own_build(knowledge: Knowledge) -> None:
    upgraded = SEED_LV4.replace("build 11503 (d41c07e2b)", "build 11721 (0abc1234d)")
    events, _ = watch(knowledge, lines_of(SEED_LV4 + upgraded), block=37)
    starts = of_type(events, "run_start")
    assert [(s["run"]["index"], s["run"]["facts"].get("build")) for s in starts] == [(0, 11503), (1, 11721)]
    first, second = (e["finding"] for e in of_type(events, "finding"))
    assert (first.run, first.confidence, first.facts_used["build"].value) == (0, "confirmed", 11503)
    assert "upgrade" in first.version_status
    assert (second.run, second.confidence, second.facts_used["build"].value) == (1, "regression", 11721)
    assert events.index(starts[1]) < events.index(of_type(events, "finding")[1])


def test_once_per_cause_and_repeats_are_counted(knowledge: Knowledge) -> None:
    events, _ = watch(knowledge, lines_of(SEED_LV4), block=1, repeat_interval=0)
    findings = of_type(events, "finding")
    assert [f["finding"].rule_id for f in findings] == ["spec-vision-draft-position-gap"]
    repeats = of_type(events, "repeat")
    assert [(r["count"], r["new"]) for r in repeats] == [(2, 1)]
    first_line = findings[0]["finding"].first_line
    assert repeats[0]["first_seen"]["line"] == first_line < repeats[0]["last_seen"]["line"]
    (cause,) = of_type(events, "summary")[0]["causes"]
    assert (cause["rule_id"], cause["count"], cause["confidence"]) == ("spec-vision-draft-position-gap", 2, "confirmed")


def test_a_finding_waits_for_its_settle_window_or_for_quiet(knowledge: Knowledge) -> None:
    lines = lines_of(SEED_LV4)
    completing = next(i for i, line in enumerate(lines) if "failed to process speculative batch" in line)
    events: list[dict[str, Any]] = []
    watcher = Watcher(Analyzer(knowledge), events.append)
    watcher.feed(lines[: completing + 1])
    watcher.idle(RELEASE_IDLE / 2)
    assert not of_type(events, "finding")  # a line that rules it out could still follow
    watcher.idle(RELEASE_IDLE)
    assert [e["finding"].rule_id for e in of_type(events, "finding")] == ["spec-vision-draft-position-gap"]


def test_a_server_that_dies_before_its_build_line_is_still_reported(knowledge: Knowledge) -> None:
    events: list[dict[str, Any]] = []
    watcher = Watcher(Analyzer(knowledge), events.append)
    watcher.feed(
        [
            "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",
            "warning: no usable GPU found, --gpu-layers option will be ignored",
        ]
    )
    watcher.idle(RELEASE_IDLE)
    assert not of_type(events, "finding")  # lines before a build line wait for the run they open
    watcher.idle(PREAMBLE_IDLE)  # ... until the server has said nothing for a while
    assert [e["finding"].rule_id for e in of_type(events, "finding")] == ["cuda-init-failed-driver"]


def test_a_line_right_after_the_evidence_can_still_rule_it_out(knowledge: Knowledge) -> None:
    # CPU_Mapped buffer first, the CUDA0 buffer on the next line: the GPU is in use after all
    text = (SAMPLES / "speculative-draft-type-none-b10460-journald.log").read_text()
    events, _ = watch(knowledge, lines_of(text), block=1)
    reported = {e["finding"].rule_id for e in of_type(events, "finding")}
    assert "layers-not-offloaded-cpu-only" not in reported
    assert "journald-messages-suppressed" in reported


def _expectations() -> list[dict[str, Any]]:
    out = []
    for path in sorted((ROOT / "tests" / "expectations").glob("*.yaml")):
        out.extend(yaml.safe_load(path.read_text()) or [])
    return out


def _runs_of(f: Any) -> list[int]:
    """The runs a grouped finding was seen in (the samples have few: all are examples)."""
    if f.seen is None:
        return [f.run]
    assert f.seen.runs == len(f.seen.examples)
    return [e.run for e in f.seen.examples]


@pytest.mark.parametrize("entry", _expectations(), ids=lambda e: e["log"])
def test_watch_reports_what_explain_finds(knowledge: Knowledge, entry: dict[str, Any]) -> None:
    text = (SAMPLES / entry["log"]).read_text(errors="replace")
    report = analyze_text(knowledge, text, entry.get("cmdline"))
    # explain shows a cause seen in several runs once (`seen`); watch tells each run's finding
    explained = {(run, f.rule_id): f.confidence for f in report.findings for run in _runs_of(f)}
    events, _ = watch(knowledge, lines_of(text), block=7, cmdline=entry.get("cmdline"))
    reported = {(e["finding"].run, e["finding"].rule_id) for e in of_type(events, "finding")}
    assert reported == set(explained)
    final = {(c["run"], c["rule_id"]): c["confidence"] for c in of_type(events, "summary")[0]["causes"]}
    assert final == explained


def test_memory_stays_flat_over_many_restarts(knowledge: Knowledge) -> None:
    cycle = lines_of((SAMPLES / "seed-b11503-default.log").read_text())
    events: list[dict[str, Any]] = []
    watcher = Watcher(Analyzer(knowledge), events.append)
    tracemalloc.start()
    try:
        sizes = []
        for n in range(1, 401):
            watcher.feed(cycle)
            assert len(watcher.a.runs) <= 2 and len(watcher.causes) <= 2
            if n in (150, 400):
                events.clear()
                sizes.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert len(watcher.ended_runs) == KEPT_RUNS
    assert sizes[1] - sizes[0] < 512 * 1024, sizes  # 250 more runs, 24,500 more lines
    assert watcher.runs_seen == 400 and watcher.findings == 400


def test_the_stream_redactor_redacts_as_the_shared_one() -> None:
    texts = [
        "loading model '/home/alice/models/q.gguf' from 10.1.2.3",
        "token abcdefgh12345678 refused",  # not a secret yet ...
        "llama-server --api-key abcdefgh12345678 -m q.gguf",  # ... until this line shows it is one
        "token abcdefgh12345678 refused",
        "loading model '/home/alice/models/q.gguf' from 10.1.2.3",
    ]
    plain, stream = Redactor(), StreamRedactor()
    for text in texts:
        for r in (plain, stream):
            r.learn({"text": text})
        assert stream.value({"text": text}) == plain.value({"text": text})
    assert "abcdefgh12345678" not in str(stream.value({"text": texts[3]}))


def _comparable(events: list[dict[str, Any]]) -> list[Any]:
    """Events without wall-clock stamps (repeat timing depends on the clock, not the input)."""
    out: list[Any] = []
    for e in events:
        if e["type"] == "finding":
            out.append(("finding", json.dumps(dump(e["finding"], json=True))))
        elif e["type"] == "run_start":
            out.append(("run_start", e["run"]["index"], e["run"]["facts"]))
        elif e["type"] == "summary":
            out.append(("summary", [(c["rule_id"], c["run"], c["count"], c["confidence"]) for c in e["causes"]]))
    return out


@pytest.mark.parametrize("block", [97, 5000])
def test_watch_events_are_the_same_with_the_bulk_path(knowledge: Knowledge, tmp_path: Path, block: int) -> None:
    """watch takes the scanner's shortcuts and bulk path too: every event as without them."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_gen", ROOT / "bench" / "gen.py")
    gen = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(gen)  # type: ignore[union-attr]
    path = tmp_path / "bench.log"
    gen.generate(1 << 20, path, seed=11, inject_every=30)
    lines = lines_of(path.read_text())
    results = []
    for shortcuts in (True, False):
        events: list[dict[str, Any]] = []
        analyzer = Analyzer(knowledge)
        analyzer.scanner.shortcuts = shortcuts
        analyzer.scanner.bulk_from = 0
        watcher = Watcher(analyzer, events.append, 1e9)
        for i in range(0, len(lines), block):
            watcher.feed(lines[i : i + block])
        watcher.finish("end of input", {})
        results.append(_comparable(events))
    assert results[0] == results[1]
    assert sum(kind == "finding" for kind, *_ in results[0]) >= 5


def _fed_up_to_context_overflow(knowledge: Knowledge) -> tuple[Watcher, list[dict[str, Any]], list[str], int]:
    """A watcher fed a journald log up to the line that completes its context-overflow evidence
    (a cause nothing can change: judged at once); its events, the log's lines and that line's index."""
    lines = lines_of((SAMPLES / "context-exceeded-b98xx-journald.log").read_text())
    completing = next(i for i, line in enumerate(lines) if "exceeds the available context size" in line)
    events: list[dict[str, Any]] = []
    watcher = Watcher(Analyzer(knowledge), events.append)
    watcher.feed(lines[: completing + 1])
    return watcher, events, lines, completing


def test_a_cause_nothing_can_change_is_judged_at_once(knowledge: Knowledge) -> None:
    # after the startup, with every fact its conditions test known, and nothing that could rule
    # it out or hide it: reported on the line that completes the evidence, not 20 lines later
    watcher, events, lines, completing = _fed_up_to_context_overflow(knowledge)
    assert not of_type(events, "finding")  # the error entry itself may still be continued
    watcher.feed(lines[completing + 1 : completing + 2])
    assert [e["finding"].rule_id for e in of_type(events, "finding")] == ["context-size-exceeded"]


def test_a_cause_judged_at_once_is_reported_when_the_input_goes_quiet(knowledge: Knowledge) -> None:
    # the completing line is the last one in: it is held for continuation lines only briefly,
    # then judged at once, without the 0.2 s that an unsettled cause waits for
    watcher, events, _, _ = _fed_up_to_context_overflow(knowledge)
    assert watcher.wake_within(0.05) == CONTINUATION_IDLE  # the input loop wakes for the held entry
    watcher.idle(CONTINUATION_IDLE / 2)
    assert not of_type(events, "finding")
    watcher.idle(CONTINUATION_IDLE)
    assert [e["finding"].rule_id for e in of_type(events, "finding")] == ["context-size-exceeded"]
    assert CONTINUATION_IDLE < RELEASE_IDLE
