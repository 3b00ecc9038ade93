"""The bulk path's check of unvouched line shapes (stops.PeeledShape) against peeling itself.

A line whose peeling meets a wrapper the run has not vouched for, or leaves a dropped line or
JSON, must stop the bulk path; a line peeling reads as vouched-for wrappers only must not (the
b9700 short-iso shape: journald's prefix also matches docker's timestamp pattern, and the old
backtracking check cost most of that log's scan).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from llamadiag.engine.envelope import EnvelopeParser
from llamadiag.engine.scan.bulk import _vouched, peeled_shape

SAMPLES = Path(__file__).resolve().parents[3] / "sample_logs"


def _physical_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(SAMPLES.rglob("*.log")) + sorted(SAMPLES.rglob("*.txt")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [line for line in lines if line and "\x1b" not in line]  # coloured lines never take this path


def _peeling_says_unvouched(parser: EnvelopeParser, line: str, allowed: frozenset[str]) -> bool:
    """What peeling makes of the line: a wrapper outside the vouched set, else a drop or JSON."""
    text, wrappers, _meta, _level, _tag, _terminal = parser.unwrap(line)
    by_name = {w.name: w for w, _ in parser.wrappers}
    if any(not _vouched(by_name[name], allowed) for name in wrappers):
        return True
    return parser.any_drop.match(text) is not None or text.startswith("{")


@pytest.mark.parametrize("vouched", ["none", "journald", "rfc3339", "compose", "all"])
def test_the_check_agrees_with_peeling_on_every_sample_line(knowledge, vouched: str) -> None:
    env = knowledge.envelope
    names = {w.name for w in env.wrappers}
    allowed = frozenset() if vouched == "none" else frozenset(names if vouched == "all" else {vouched})
    parser, check = EnvelopeParser(env), peeled_shape(env, allowed)
    lines = _physical_lines()
    assert len(lines) > 5000
    disagree = []
    for line in lines:
        expected = _peeling_says_unvouched(parser, line, allowed)
        if check.match(line.encode(), 0) != expected:
            disagree.append(line)
    # JSON wrappers are never vouched for: a JSON line peeling reads through is still a stop
    assert [line for line in disagree if not line.lstrip().startswith("{")] == []


def test_journald_short_iso_is_not_docker_timestamp(knowledge) -> None:
    env = knowledge.envelope
    line = b"2026-08-28T08:00:30+08:00 ai llama-server[55646]: 0.00.000.405 I log_info: verbosity = 3\n"
    assert not peeled_shape(env, frozenset({"journald"})).match(line, 0)
    assert peeled_shape(env, frozenset()).match(line, 0)  # journald not vouched for: a stop
    docker = b"2026-08-28T00:00:30.123456789Z 0.00.000.405 I log_info: verbosity = 3\n"
    assert peeled_shape(env, frozenset({"journald"})).match(docker, 0)
