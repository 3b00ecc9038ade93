"""What a fleet worker is handed: the command's knowledge, pickled once per worker, must not carry
what a worker can make itself when (and if) a log needs it."""

from __future__ import annotations

import pickle

from llamadiag import api
from llamadiag.engine.literals import Target, index_for
from llamadiag.features.fleet.perlog import summarize
from llamadiag.features.fleet.sources import LogTask
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
    from llamadiag.features.fleet import perlog

    perlog.remember_knowledge(("shipped",), shipped)
    assert summarize(log, ("shipped",)) == summarize(log)
    assert any(_compiled(t) for t in targets)
