"""Rule patterns: the literal prefilters derived from them and the backtracking check."""

from __future__ import annotations

import threading

import pytest

from llamadiag.knowledge.patterns import PatternError, check_backtracking, required_literals


def test_derived_literals_join_alternations() -> None:
    assert required_literals(r"^\s*- (?P<value>CUDA|ROCm)\d+ +: ") == ["- CUDA", "- ROCm"]
    assert required_literals(r"for (?:x64|Windows \w+)\b|MSVC \d") == ["for x64", "for Windows ", "MSVC "]
    assert required_literals(r"^(?:INFO|WARN) \[ *\w+\]") == ["INFO [", "WARN ["]
    assert required_literals(r"(?:x|y)z") is None  # too weak: the author must give `literal:`


def test_timed_check_refuses_a_cubic_pattern_the_static_check_cannot_see() -> None:
    # three unbounded repeats in a row nest nothing, yet backtrack cubically on a long line
    with pytest.raises(PatternError, match="time budget"):
        check_backtracking(r"a.*a.*a.*z")


def test_timed_check_passes_a_linear_pattern_while_another_thread_keeps_a_core_busy() -> None:
    # CPU time of the searching thread, best of tries: load elsewhere must not refuse it
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(10_000))

    busy = threading.Thread(target=spin)
    busy.start()
    try:
        for _ in range(5):
            check_backtracking(r"error: (.*) failed to load model '([^']+)'")
    finally:
        stop.set()
        busy.join()
