"""The reduce: per-log summaries of real logs, merged in every grouping and order, give one result."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from llamadiag.features.fleet.perlog import summarize
from llamadiag.features.fleet.sources import expand
from llamadiag.features.fleet.summary import EMPTY, Hit, Instance, Summary, combine, combine_all


@pytest.fixture(scope="module")
def summaries(fleet_dir: Path) -> list[Summary]:
    tasks, _ = expand([str(fleet_dir)])
    return [summarize(t) for t in tasks]


def test_combine_is_associative_on_real_summaries(summaries: list[Summary]) -> None:
    for a, b, c in itertools.permutations(summaries[:6], 3):
        assert combine(combine(a, b), c) == combine(a, combine(b, c))


def test_combine_is_commutative_and_empty_is_neutral(summaries: list[Summary]) -> None:
    for a, b in itertools.combinations(summaries, 2):
        assert combine(a, b) == combine(b, a)
    for a in summaries:
        assert combine(a, EMPTY) == a == combine(EMPTY, a)
    assert combine_all(summaries) == combine_all(reversed(summaries))


def test_one_instance_in_two_summaries_merges_counts_builds_and_times() -> None:
    """The same instance from two logs (a rotated pair): counts add, the best confidence wins,
    builds unite, the earliest first and the latest last seen are kept."""

    def inst(log: str, conf: str, build: int, seen: float) -> Summary:
        hit = Hit("r", 2, 1, conf, (build,), seen, seen)
        return Summary((Instance("pod-1", (log,), build, build, build, 1, 10, 100, seen, (hit,)),), (), 1)

    merged = combine(inst("a.log", "likely", 11503, 5.0), inst("a.log.1", "confirmed", 11400, 3.0))
    (one,) = merged.instances
    assert one.logs == ("a.log", "a.log.1")
    assert one.hits == (Hit("r", 4, 2, "confirmed", (11400, 11503), 3.0, 5.0),)
    assert (one.build, one.build_min, one.runs, one.lines, merged.logs) == (11503, 11400, 2, 20, 2)
