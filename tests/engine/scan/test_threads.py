"""One scanning engine serves every analyzer: concurrent scans (desk requests) must not collide."""

from __future__ import annotations

import threading

import pytest

from llamadiag.engine.scan.multimatch import hyperscan_available, make_engine
from tests.paths import SAMPLES


@pytest.mark.parametrize("name", ["stdlib", "hyperscan"])
def test_concurrent_scans_on_one_engine(name: str) -> None:
    if name == "hyperscan" and not hyperscan_available():
        pytest.skip("hyperscan is not installed")
    engine = make_engine(["failed to process", "update_slots", "sequence positions", "srv "], name)
    block = (SAMPLES / "seed-b11503-lv4.log").read_bytes() * 20
    want = engine.scan(block)
    results: list[object] = []

    def work() -> None:
        for _ in range(5):
            try:
                results.append(engine.scan(block) == want)
            except Exception as exc:  # ScratchInUseError when threads share one scratch space
                results.append(type(exc).__name__)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert results == [True] * 40
