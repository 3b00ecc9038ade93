"""Literal prefilters derived from rule patterns."""

from __future__ import annotations

from llamadiag.knowledge.patterns import required_literals


def test_derived_literals_join_alternations() -> None:
    assert required_literals(r"^\s*- (?P<value>CUDA|ROCm)\d+ +: ") == ["- CUDA", "- ROCm"]
    assert required_literals(r"for (?:x64|Windows \w+)\b|MSVC \d") == ["for x64", "for Windows ", "MSVC "]
    assert required_literals(r"^(?:INFO|WARN) \[ *\w+\]") == ["INFO [", "WARN ["]
    assert required_literals(r"(?:x|y)z") is None  # too weak: the author must give `literal:`
