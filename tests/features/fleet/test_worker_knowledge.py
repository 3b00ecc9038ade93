"""What a fleet worker holds: the command's knowledge, pickled once per worker, without what a
worker can make itself when (and if) a log needs it nor the report text it never uses; a log read
in small blocks; the memory of each log given back after it."""

from __future__ import annotations

import os
import pickle
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from llamadiag import api
from llamadiag.engine import literals
from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.literals import Target, index_for
from llamadiag.features.fleet import memtrim, perlog
from llamadiag.features.fleet.perlog import summarize
from llamadiag.features.fleet.sources import LogTask
from llamadiag.features.fleet.workerknowledge import for_workers, worker_formats
from llamadiag.knowledge import patterns
from tests.paths import SAMPLES


def _compiled(target: Target) -> bool:
    try:
        object.__getattribute__(target, "pattern")  # the slot itself, not the compiling fallback
    except AttributeError:
        return False
    return True


def test_the_handed_knowledge_carries_pattern_sources_not_compiled_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    k = api.load_knowledge()
    index = index_for(k)
    for targets in index.by_literal.values():
        for t in targets:
            assert t.pattern.search is not None  # compiled here, as a command that read a log has them
    shipped = pickle.loads(pickle.dumps(k, protocol=pickle.HIGHEST_PROTOCOL))
    targets = [t for ts in index_for(shipped).by_literal.values() for t in ts]
    assert len(targets) > 500 and not any(_compiled(t) for t in targets)
    # and a worker compiles what its log needs (and lets go of it after), with the same outcome
    log = LogTask(str(SAMPLES / "memory-cuda-oom-b4589-raw.log"), "oom")
    perlog.remember_knowledge(("shipped",), shipped)
    compiled: list[str] = []
    compile_rule = literals.compile_rule_pattern
    monkeypatch.setattr(literals, "compile_rule_pattern", lambda s: compiled.append(s) or compile_rule(s))
    assert summarize(log, ("shipped",)) == summarize(log)
    assert compiled and not any(_compiled(t) for t in targets)


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


# a worker on a fresh host (an empty start-up cache): handed the command's knowledge and format
# files, it summarises a log with unexplained lines (what reads the format files)
WORKER = """
import pickle, sys
from llamadiag.features.fleet import perlog
from llamadiag.features.fleet.sources import LogTask
perlog.remember_knowledge(("handed",), *pickle.load(open(sys.argv[1], "rb")))
summary = perlog.summarize(LogTask(sys.argv[2], "log"), ("handed",))
assert summary.instances[0].unmatched and not summary.errors, summary
models = [m for m in sys.modules if m == "pydantic" or m.endswith(("rulemodel", "formatmodel"))]
print(" ".join(models) or "light")
"""


@pytest.mark.parametrize("checked", [True, False], ids=["start-up-cache-form", "validated-models"])
def test_a_worker_never_imports_pydantic_whatever_the_cache_holds(tmp_path: Path, checked: bool) -> None:
    """A worker handed the knowledge and the format files neither unpickles a pydantic model nor
    validates a format file, whether the command holds the start-up cache's light copies or the
    validated models (knowledge loaded unchecked, or cached as models where a part has no light
    class), and whatever the worker's own start-up cache holds (here: nothing, as on a fresh
    worker host or after the cache was pruned). Either cost every worker 7 to 9 MiB for good
    (docs/fleet.md, "Memory per worker")."""
    k = api.load_knowledge(checked=checked)
    assert any(type(r.rule).__module__.endswith("rulemodel") for r in k.rules) is not checked
    handed = tmp_path / "handed.pickle"
    handed.write_bytes(pickle.dumps((for_workers(k), worker_formats()), protocol=pickle.HIGHEST_PROTOCOL))
    log = SAMPLES / "real" / "cuda-no-device-visible.log"  # three kinds of unexplained lines
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "empty-cache"))
    worker = subprocess.run(
        [sys.executable, "-c", WORKER, str(handed), str(log)], capture_output=True, text=True, env=env
    )
    assert worker.returncode == 0, worker.stderr
    assert worker.stdout.split() == ["light"]
    # the same summary from what was handed over as from the command's own knowledge
    light, formats = pickle.loads(handed.read_bytes())
    perlog.remember_knowledge(("light",), light, formats)
    perlog.remember_knowledge(("own",), k)
    task = LogTask(str(log), "log")
    assert summarize(task, ("light",)) == summarize(task, ("own",))


def test_a_worker_keeps_no_compiled_pattern_between_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The literal index compiles a rule's pattern the first time a log hits it; a worker lets go
    of them (and of the compile caches) after each log, so that after any number of logs it holds
    none, instead of every pattern any of its logs touched. The summaries do not change."""
    k = for_workers(api.load_knowledge())
    perlog.remember_knowledge(("bounded",), k)
    index = index_for(k)
    compiled: set[str] = set()
    compile_rule = literals.compile_rule_pattern
    monkeypatch.setattr(literals, "compile_rule_pattern", lambda s: compiled.add(s) or compile_rule(s))
    logs = sorted(SAMPLES.glob("*.log"))[:40] + sorted((SAMPLES / "real").glob("*.log"))
    summaries = []
    for path in logs:
        summaries.append(summarize(LogTask(str(path), path.stem), ("bounded",)))
        assert index.compiled() == 0
        assert patterns.compile_rule_pattern.cache_info().currsize == 0
        assert patterns.compile_pattern.cache_info().currsize == 0
    assert len(compiled) > 100  # what a worker would otherwise hold after these logs
    # compiled again where a log needs them: the same summaries a second time, and as one process gives
    assert [summarize(LogTask(str(p), p.stem), ("bounded",)) for p in logs] == summaries
    perlog.remember_knowledge(("whole",), api.load_knowledge())
    assert [perlog._summarize(LogTask(str(p), p.stem), ("whole",)) for p in logs] == summaries
