"""What a fleet worker holds: the command's knowledge, pickled once per worker, without what a
worker can make itself when (and if) a log needs it nor the report text it never uses; a log read
in small blocks; the memory of each log given back after it."""

from __future__ import annotations

import pickle
import platform
import sys
from pathlib import Path

import pytest

from llamadiag import api
from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.literals import Target, index_for
from llamadiag.features.fleet import memtrim, perlog
from llamadiag.features.fleet.perlog import summarize
from llamadiag.features.fleet.sources import LogTask
from llamadiag.features.fleet.workerknowledge import for_workers
from tests.paths import SAMPLES


def _compiled(target: Target) -> bool:
    try:
        object.__getattribute__(target, "pattern")  # the slot itself, not the compiling fallback
    except AttributeError:
        return False
    return True


def test_the_handed_knowledge_carries_pattern_sources_not_compiled_patterns() -> None:
    k = api.load_knowledge()
    index = index_for(k)
    for targets in index.by_literal.values():
        for t in targets:
            assert t.pattern.search is not None  # compiled here, as a command that read a log has them
    shipped = pickle.loads(pickle.dumps(k, protocol=pickle.HIGHEST_PROTOCOL))
    targets = [t for ts in index_for(shipped).by_literal.values() for t in ts]
    assert len(targets) > 500 and not any(_compiled(t) for t in targets)
    # and a worker compiles what its log needs, with the same outcome
    log = LogTask(str(SAMPLES / "memory-cuda-oom-b4589-raw.log"), "oom")
    perlog.remember_knowledge(("shipped",), shipped)
    assert summarize(log, ("shipped",)) == summarize(log)
    assert any(_compiled(t) for t in targets)


def _summaries(k: api.Knowledge, tag: str) -> list[object]:
    perlog.remember_knowledge((tag,), k)
    logs = sorted(SAMPLES.glob("*.log")) + sorted((SAMPLES / "real").glob("*.log"))
    return [summarize(LogTask(str(p), p.stem), (tag,)) for p in logs]


def test_workers_knowledge_without_report_text_gives_the_same_summaries() -> None:
    k = api.load_knowledge()
    slim = for_workers(k)
    assert all(not r.rule.examples and not r.rule.remediation for r in slim.rules)
    assert all(r.rule.examples and r.rule.remediation for r in k.rules)  # the command's own is untouched
    # nor the references' titles and notes, nor the verification checks: the report's text
    assert not any(ref.title or ref.note for r in slim.rules for ref in r.rule.references)
    assert not any(r.rule.verification.checks for r in slim.rules)
    assert [[(f.kind, f.id, f.role, f.build) for f in r.rule.references] for r in slim.rules] == [
        [(f.kind, f.id, f.role, f.build) for f in r.rule.references] for r in k.rules
    ]
    assert any(ref.title for r in k.rules for ref in r.rule.references)
    assert any(r.rule.verification.checks for r in k.rules)
    assert len(pickle.dumps(slim)) < 0.6 * len(pickle.dumps(k))
    full = _summaries(k, "full")
    assert sum(len(i.hits) for s in full for i in s.instances) > 40  # logs that do find things
    assert _summaries(slim, "slim") == full


def test_a_worker_reads_in_small_blocks_with_the_same_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker analyses a log in blocks of `WORKER_BLOCK` (its peak memory), and a log of
    several such blocks (every real sample log, one after the other) gives the summary that a
    read in explain's 1 MiB blocks gives."""
    big = tmp_path / "many-runs.log"
    big.write_bytes(b"".join(p.read_bytes() for p in sorted((SAMPLES / "real").glob("*.log"))))
    assert big.stat().st_size > 3 * perlog.WORKER_BLOCK
    task = LogTask(str(big), "many-runs")
    k = api.load_knowledge()
    whole_blocks = perlog.from_report(task, api.diagnose(big, knowledge=k, unmatched=True).report)
    assert sum(len(i.hits) for i in whole_blocks.instances) > 10
    fed: list[int] = []
    feed = Analyzer.feed_bytes
    monkeypatch.setattr(Analyzer, "feed_bytes", lambda self, block: fed.append(len(block)) or feed(self, block))
    assert summarize(task) == whole_blocks
    assert len(fed) > 3 and max(fed) < 2 * perlog.WORKER_BLOCK  # whole lines: about a block each


def test_a_worker_gives_the_memory_of_each_log_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """After each log (its diagnosis freed), the allocator's free pages go back to the kernel."""
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert memtrim._malloc_trim() is not None
    memtrim.release_freed_memory()  # a no-op where there is no malloc_trim
    calls: list[int] = []
    monkeypatch.setattr(perlog, "release_freed_memory", lambda: calls.append(1))
    summary = summarize(LogTask(str(SAMPLES / "memory-cuda-oom-b4589-raw.log"), "oom"))
    assert calls == [1] and [h.rule_id for h in summary.instances[0].hits] == ["cuda-oom-model-load"]
    assert summarize(LogTask(str(SAMPLES / "no-such.log"), "missing")).errors and calls == [1, 1]
