"""Each rule's inline examples are real tests: run through the whole engine."""

from __future__ import annotations

import pytest

from llamadiag.knowledge.loader import load_knowledge
from llamadiag.ruletools.selftest import run_examples

RULES = load_knowledge().rules


@pytest.mark.parametrize("loaded", RULES, ids=[r.rule.id for r in RULES])
def test_rule_examples(knowledge, loaded) -> None:
    failures = [f"{r.name}: {r.detail}" for r in run_examples(knowledge, loaded) if not r.ok]
    assert failures == []
