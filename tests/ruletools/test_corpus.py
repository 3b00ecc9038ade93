"""Every shipped sample log gets exactly the findings its expectation entry lists."""

from __future__ import annotations

import pytest

from llamadiag.ruletools.corpus import find_root, load_cases, run_cases, unlisted_logs

ROOT = find_root()
CASES = load_cases(ROOT) if ROOT else []


@pytest.mark.parametrize("case", CASES, ids=[c.entry["log"] for c in CASES])
def test_sample_log_verdict(knowledge, case) -> None:
    assert run_cases(knowledge, ROOT, [case])[0].problems == []


def test_every_sample_log_has_an_expectation() -> None:
    assert ROOT is not None
    assert unlisted_logs(ROOT, CASES) == [], "sample logs without an expected verdict"
