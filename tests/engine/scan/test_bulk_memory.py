"""The bulk path holds one block at a time, however many stop finders it built.

Each stop finder (one per set of wrappers and live literals, up to 64) reads the block it is
begun on; a finder not used again kept its last block and that block's hits, so a long log
pinned one old 1 MiB block per finder: `explain` on 200 MB with the standard-library engine
peaked at 69 MiB instead of 47 (docs/performance.md, "Memory"). Reports are unchanged (the
whole-report comparisons of test_scan.py run the same path).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.scan.bulk import SAMPLE
from llamadiag.engine.scan.multimatch import hyperscan_available
from llamadiag.source.blocks import read_byte_blocks
from llamadiag.source.reader import ReadReport
from tests.engine.scan.test_scan import _gen

ENGINES = ["stdlib", *(["hyperscan"] if hyperscan_available() else [])]


@pytest.fixture(scope="module")
def long_log(tmp_path_factory) -> Path:
    """~3.5 MB of bench/gen.py's runs, plain and under journald in turn: runs that see other
    sets of wrappers, so that each engine builds several finders whatever the rules."""
    import random

    gen = _gen()
    pool, turn, r = gen.failures(), iter(range(10**6)), random.Random(3)
    lines: list[str] = []
    for style in ("default", "journald", "default", "journald"):
        lines += gen.session(style, r, 6000, lambda: pool[next(turn) % len(pool)], 40)
    out = tmp_path_factory.mktemp("bulkmem") / "bench.log"
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_finders_let_go_of_earlier_blocks(knowledge, long_log: Path, engine: str) -> None:
    analyzer = Analyzer(knowledge, engine=engine)
    analyzer.scanner.bulk_from = 0  # the bulk path from the first block
    read = ReadReport(str(long_log))
    most_finders = 0
    for block in read_byte_blocks(str(long_log), read, 1 << 16):
        analyzer.feed_bytes(block)
        bulk = analyzer.scanner.bulk
        assert bulk is not None
        finders = list(bulk._finders.values())
        most_finders = max(most_finders, len(finders))
        pinned = [f for f in finders if f.block and f.block is not bulk.block]
        assert not pinned, f"{len(pinned)} finders still hold an earlier block"
        assert len(bulk._sample) <= SAMPLE  # the rare-byte sample, not the whole first block
    assert most_finders > 1  # several finders were built: the case that pinned blocks


def test_a_dropped_literal_search_is_freed(knowledge, long_log: Path) -> None:
    """The standard library's literal searches (one per state of a run, ~240 KiB compiled
    each, 16 kept) are freed when the bulk path drops them: `re`'s own cache of 512 patterns
    kept every one ever built alive."""
    import gc
    import weakref
    from collections import Counter

    from llamadiag.engine.scan.stops import rare_byte_regex

    sample = long_log.read_bytes()[:SAMPLE]
    literals = [b"slot update_slots", b"prompt eval time", b"llama_model_loader"]
    search = rare_byte_regex(literals, Counter({b: sample.count(bytes([b])) for b in range(256)}))
    assert search.search(b"x prompt eval time =") is not None
    held = weakref.ref(search)
    del search
    gc.collect()
    assert held() is None, "a literal search outlives the bulk path's reference to it"
