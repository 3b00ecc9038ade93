from __future__ import annotations

import pytest

from llamadiag.knowledge.loader import Knowledge, load_knowledge


@pytest.fixture(scope="session")
def knowledge() -> Knowledge:
    k = load_knowledge()
    assert not k.errors, [str(e) for e in k.errors]
    return k
