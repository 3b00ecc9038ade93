"""Compiling rule patterns safely, and finding the literal each one requires.

Log text is untrusted, so a pattern that can backtrack catastrophically is refused at
load time: statically (a repeat nested in an unbounded repeat) and by a timed run on
adversarial lines. Each pattern also yields a required literal for the one-pass prefilter.
"""

from __future__ import annotations

import re
import re._constants as sre_c  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
import time
from functools import lru_cache

import regex

TIME_BUDGET_S = 0.05  # per adversarial line of ADVERSARIAL_LEN chars
ADVERSARIAL_LEN = 20_000
MIN_LITERAL = 4


class PatternError(ValueError):
    """A pattern that must not be used; the message says why."""


@lru_cache(maxsize=4096)
def compile_pattern(source: str) -> regex.Pattern[str]:
    try:
        return regex.compile(source)
    except regex.error as exc:
        raise PatternError(f"invalid regex {source!r}: {exc}") from exc


def _unbounded(op: object, av: object) -> bool:
    return op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT) and (
        av[1] == sre_c.MAXREPEAT  # type: ignore[index]
    )


def _contains_unbounded(items: list) -> bool:
    for op, av in items:
        if _unbounded(op, av):
            return True
        for sub in _children(op, av):
            if _contains_unbounded(sub):
                return True
    return False


def _children(op: object, av: object) -> list[list]:
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        return [list(av[2])]  # type: ignore[index]
    if op is sre_c.SUBPATTERN:
        return [list(av[3])]  # type: ignore[index]
    if op is sre_c.BRANCH:
        return [list(b) for b in av[1]]  # type: ignore[index]
    if op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        return [list(av[1])]  # type: ignore[index]
    if op is sre_c.ATOMIC_GROUP:
        return [list(av)]  # type: ignore[arg-type]
    return []


def _nested_repeat(items: list) -> bool:
    for op, av in items:
        if _unbounded(op, av) and _contains_unbounded(list(av[2])):
            return True
        for sub in _children(op, av):
            if _nested_repeat(sub):
                return True
    return False


def _parse(source: str) -> list | None:
    try:
        return list(sre_parse.parse(source))
    except (re.error, Exception):  # regex-module-only syntax: fall back to the timed check
        return None


def check_backtracking(source: str) -> None:
    """Raise PatternError if the pattern can backtrack catastrophically."""
    tree = _parse(source)
    if tree is not None and _nested_repeat(tree):
        raise PatternError(
            f"pattern {source!r} nests an unbounded repeat inside another; "
            "it can backtrack catastrophically on a long line"
        )
    pattern = compile_pattern(source)
    lit = required_literals(source) or ["x"]
    probes = [
        "a" * ADVERSARIAL_LEN,
        " " * ADVERSARIAL_LEN,
        "9" * ADVERSARIAL_LEN,
        (lit[0] + " ") * (ADVERSARIAL_LEN // (len(lit[0]) + 1)),
        "=" * ADVERSARIAL_LEN + "!",
    ]
    for probe in probes:
        start = time.perf_counter()
        try:
            pattern.search(probe, timeout=TIME_BUDGET_S * 4)
        except TimeoutError as exc:
            raise PatternError(f"pattern {source!r} exceeds its time budget on a long line") from exc
        if time.perf_counter() - start > TIME_BUDGET_S:
            raise PatternError(
                f"pattern {source!r} took {time.perf_counter() - start:.3f}s on a "
                f"{ADVERSARIAL_LEN}-char line (budget {TIME_BUDGET_S}s)"
            )


def _literal_runs(items: list) -> list[list[str]]:
    """Alternatives of required literal runs in a parsed sequence.

    Returns a list of alternatives; each alternative is the list of literal runs that any
    match of that alternative contains.
    """
    runs: list[str] = []
    current: list[str] = []
    alternatives_out: list[list[str]] | None = None

    def flush() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    for op, av in items:
        if op is sre_c.LITERAL:
            current.append(chr(av))  # type: ignore[arg-type]
            continue
        if op is sre_c.SUBPATTERN and av[1] == 0 and av[2] == 0:  # type: ignore[index]
            inner = _literal_runs(list(av[3]))  # type: ignore[index]
            if len(inner) == 1 and len(inner[0]) == 1 and inner[0][0] == _whole(list(av[3])):  # type: ignore[index]
                current.append(inner[0][0])
                continue
            flush()
            if len(inner) == 1:
                runs.extend(inner[0])
            elif alternatives_out is None and not runs:
                alternatives_out = inner
            continue
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT) and av[0] >= 1:  # type: ignore[index]
            flush()
            inner = _literal_runs(list(av[2]))  # type: ignore[index]
            if len(inner) == 1:
                runs.extend(inner[0])
            continue
        if op is sre_c.BRANCH:
            flush()
            branches = [_literal_runs(list(b)) for b in av[1]]  # type: ignore[index]
            if all(len(b) == 1 for b in branches) and alternatives_out is None and not runs:
                alternatives_out = [b[0] for b in branches]
            continue
        if op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
            continue  # zero-width: does not break a literal run's requirement, but ends it
        flush()
    flush()
    if alternatives_out is not None and not runs:
        return alternatives_out
    return [runs]


def _whole(items: list) -> str | None:
    if all(op is sre_c.LITERAL for op, _ in items):
        return "".join(chr(av) for _, av in items)
    return None


@lru_cache(maxsize=4096)
def required_literals(source: str) -> list[str] | None:
    """Literals such that every match contains at least one of them, or None.

    Case-insensitive patterns and patterns too loose to name a literal of MIN_LITERAL
    characters give None: the author must then state `literal:` explicitly.
    """
    if source.startswith("(?i") or "(?i)" in source:
        return None
    tree = _parse(source)
    if tree is None:
        return None
    best: list[str] = []
    for alternative in _literal_runs(tree):
        longest = max(alternative, key=len, default="")
        if len(longest) < MIN_LITERAL:
            return None
        best.append(longest)
    return best or None
