"""Compiling rule patterns safely, and finding the literal each one requires.

Log text is untrusted, so a pattern that can backtrack catastrophically is refused at
load time: statically (a repeat nested in an unbounded repeat) and by a timed run on
adversarial lines. Each pattern also yields a required literal for the one-pass prefilter.
"""

from __future__ import annotations

import re
import re._constants as sre_c  # type: ignore[import-not-found]  # private stdlib module, not in typeshed
import re._parser as sre_parse  # type: ignore[import-not-found]  # private stdlib module, not in typeshed
import time
import warnings
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import regex

TIME_BUDGET_S = 0.05  # per adversarial line of ADVERSARIAL_LEN chars
ADVERSARIAL_LEN = 20_000
TRIES = 3  # a slow search is tried again before the pattern is refused
MIN_LITERAL = 4

# an sre parse-tree argument: an int, a tuple or a SubPattern depending on the opcode
_Arg = Any


class PatternError(ValueError):
    """A pattern that must not be used; the message says why."""


@lru_cache(maxsize=4096)
def compile_pattern(source: str) -> regex.Pattern[str]:
    """Compile a pattern with `regex` (cached); PatternError when it is not valid."""
    import regex  # here, not at the top: a small log that compiles no rule pattern never imports it (~8 ms)

    try:
        return regex.compile(source)
    except regex.error as exc:
        raise PatternError(f"invalid regex {source!r}: {exc}") from exc


# what `re` and `regex` (VERSION0) may read differently although both compile it: inline flags
# (case folding and verbose mode differ in details; POSIX and VERSION1 are regex's own) and
# POSIX-class brackets ([[:alpha:]] is a class for regex, a set plus "]" for re; regex reads
# only `[:` so, `[.` and `[=` are plain sets in both, as in `\d{1,3}[.)]`), and a brace that is
# not a counted repeat (`a{e<=1}` is fuzzy matching for regex, the literal text for re)
_REGEX_READING = re.compile(r"\(\?[a-zA-OQ-Z^-]|\[:")
_COUNTED = re.compile(r"\{\d+(?:,\d*)?\}")


def _loose_brace(source: str) -> bool:
    """Whether a brace outside a set and not escaped is not a counted repeat (`{2}`, `{1,3}`)."""
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            i += 2
        elif c == "[":  # a set: its braces are characters
            i += 2 if source.startswith("[^", i) else 1
            i += 1 if source.startswith("]", i) else 0
            while i < n and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
            i += 1
        elif c == "{" and _COUNTED.match(source, i) is None:
            return True
        else:
            i += 1
    return False


@lru_cache(maxsize=4096)
def compile_format_pattern(source: str) -> re.Pattern[str] | regex.Pattern[str]:
    """Compile a pattern of the format files (envelope, facts, flags) with the standard library
    when it means the same there, else with `regex` as `compile_pattern` does.

    `re` compiles these ~50 patterns at every start about 3x faster than `regex`, and they run on
    every line. It is used only for a pattern that `re` accepts without a warning (regex-only
    syntax: \\p{..}, variable-width lookbehind, (?|..), duplicate group names ... fails there) and
    that holds no inline flag and no POSIX-class bracket, the constructs both accept but may
    read differently. tests/knowledge/test_patterns_stdlib.py compares both on every sample line."""
    return _stdlib_first(source, _REGEX_READING)


# A rule pattern is matched on any log's text, whose non-ASCII letters, digits and spaces `re` and
# `regex` class differently (\w: ~30,000 code points such as "²" and combining accents; \d: digits
# of newer Unicode; \s: \x1c-\x1f). So only a *plain* rule pattern goes to `re`: no escape but of
# punctuation, no inline flag, no POSIX bracket, no brace but a counted repeat (`{e<=1}` is fuzzy
# matching for regex, literal text for re). Its literals, `.`, sets of literal characters,
# anchors, groups and repeats mean the same in both.
_NOT_PLAIN = re.compile(r"\\[0-9A-Za-z]|\(\?[a-zA-OQ-Z^-]|\[:")


@lru_cache(maxsize=4096)
def compile_rule_pattern(source: str) -> re.Pattern[str] | regex.Pattern[str]:
    """A rule's pattern compiled as `compile_pattern` does, but by the standard library when it is
    plain (see `_NOT_PLAIN`): such a pattern means the same there, compiles faster, and a log
    whose lines touch only plain patterns never imports `regex` (~8 ms of a small log's start)."""
    return _stdlib_first(source, _NOT_PLAIN)


def forget_compiled() -> None:
    """Empty the caches of compiled rule patterns: ours (`compile_pattern`, `compile_rule_pattern`)
    and the modules' own (`re` keeps up to 512, `regex` up to 500). A fleet worker calls it after
    each log, so that it keeps only what the next log compiles again, not every pattern any of its
    logs touched. The format patterns (~50, used by every log) stay."""
    import sys

    compile_pattern.cache_clear()
    compile_rule_pattern.cache_clear()
    re.purge()
    regex_module = sys.modules.get("regex")  # never imported just to purge it
    if regex_module is not None:
        regex_module.purge()


def _stdlib_first(source: str, regex_only: re.Pattern[str]) -> re.Pattern[str] | regex.Pattern[str]:
    """`source` compiled by `re` unless `regex_only` finds a construct the two may read differently
    in it (or a brace that is not a counted repeat), or `re` refuses it or warns; else by `regex`."""
    if regex_only.search(source) is None and not _loose_brace(source):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. FutureWarning "possible nested set": regex reads it otherwise
            try:
                return re.compile(source)
            except (re.error, Warning, RecursionError, OverflowError):
                pass
    return compile_pattern(source)


def _unbounded(op: object, av: _Arg) -> bool:
    return op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT) and (
        av[1] == sre_c.MAXREPEAT
    )


def _contains_unbounded(items: list) -> bool:
    for op, av in items:
        if _unbounded(op, av):
            return True
        for sub in _children(op, av):
            if _contains_unbounded(sub):
                return True
    return False


def _children(op: object, av: _Arg) -> list[list]:
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        return [list(av[2])]
    if op is sre_c.SUBPATTERN:
        return [list(av[3])]
    if op is sre_c.BRANCH:
        return [list(b) for b in av[1]]
    if op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        return [list(av[1])]
    if op is sre_c.ATOMIC_GROUP:
        return [list(av)]
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
        spent = _cpu_seconds(pattern, probe)
        if spent is None:
            raise PatternError(f"pattern {source!r} exceeds its time budget on a long line")
        if spent > TIME_BUDGET_S:
            raise PatternError(
                f"pattern {source!r} took {spent:.3f}s on a "
                f"{ADVERSARIAL_LEN}-char line (budget {TIME_BUDGET_S}s)"
            )


def _cpu_seconds(pattern: regex.Pattern[str], probe: str) -> float | None:
    """The least CPU time one search of probe took in TRIES tries; None if every try timed out.

    CPU time of this thread, and the best of a few tries, so that a loaded machine (other
    processes, a busy CI runner) does not make a safe pattern look slow: a pattern that
    backtracks catastrophically is slow on every try.
    """
    best: float | None = None
    for _ in range(TRIES):
        start = time.thread_time()
        try:
            pattern.search(probe, timeout=TIME_BUDGET_S * 4)
        except TimeoutError:
            continue
        spent = time.thread_time() - start
        best = spent if best is None else min(best, spent)
        if best <= TIME_BUDGET_S:
            break
    return best


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
            current.append(chr(av))
            continue
        if op is sre_c.SUBPATTERN and av[1] == 0 and av[2] == 0:
            inner = _literal_runs(list(av[3]))
            if len(inner) == 1 and len(inner[0]) == 1 and inner[0][0] == _whole(list(av[3])):
                current.append(inner[0][0])
                continue
            flush()
            if len(inner) == 1:
                runs.extend(inner[0])
            elif alternatives_out is None and not runs:
                alternatives_out = inner
            continue
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT) and av[0] >= 1:
            flush()
            inner = _literal_runs(list(av[2]))
            if len(inner) == 1:
                runs.extend(inner[0])
            continue
        if op is sre_c.BRANCH:
            flush()
            branches = [_literal_runs(list(b)) for b in av[1]]
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


def _score(found: list[str]) -> tuple[int, int]:
    """A literal set is as strong as its shortest member; fewer members break ties."""
    return (min(map(len, found)), -len(found)) if found else (0, 0)


def _branch_heads(op: object, av: _Arg) -> list[tuple[str, bool]] | None:
    """For an alternation: each branch's leading literal and whether that is the whole branch."""
    if op is sre_c.SUBPATTERN and av[1] == 0 and av[2] == 0 and len(av[3]) == 1:
        op, av = av[3][0]
    if op is not sre_c.BRANCH:
        return None
    heads = []
    for branch in av[1]:
        items = list(branch)
        n = 0
        while n < len(items) and items[n][0] is sre_c.LITERAL:
            n += 1
        if n == 0:
            return None
        heads.append(("".join(chr(av) for _, av in items[:n]), n == len(items)))
    return heads


def _best_set(items: list) -> list[str]:
    """Literals one of which every match of the sequence contains, as strong as can be.

    Besides single literal runs, an alternation of plain literals is joined to the
    literal runs right before and after it: `- (?:CUDA|ROCm)\\d` gives `- CUDA`,
    `- ROCm` rather than the weak `- `.
    """
    atoms: list[tuple[str, Any]] = []  # lit: str, alt: [(head, whole)], set: [str], gap
    current: list[str] = []

    def flush() -> None:
        if current:
            atoms.append(("lit", "".join(current)))
            current.clear()

    for op, av in items:
        whole = _whole(list(av[3])) if op is sre_c.SUBPATTERN and av[1] == 0 and av[2] == 0 else None
        if op is sre_c.LITERAL or whole:
            current.append(chr(av) if op is sre_c.LITERAL else whole)  # type: ignore[arg-type]  # whole is set here
            continue
        if op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
            continue  # zero-width: literals on both sides stay adjacent in the text
        flush()
        heads = _branch_heads(op, av)
        if heads:
            branch = av[3][0][1] if op is sre_c.SUBPATTERN else av
            per_branch = [_best_set(list(b)) for b in branch[1]]
            atoms.append(("alt", (heads, [x for b in per_branch for x in b] if all(per_branch) else [])))
        elif op is sre_c.SUBPATTERN and av[1] == 0 and av[2] == 0:
            atoms.append(("set", _best_set(list(av[3]))))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT) and av[0] >= 1:
            atoms.append(("set", _best_set(list(av[2]))))
        elif op is sre_c.BRANCH:
            per_branch = [_best_set(list(b)) for b in av[1]]
            atoms.append(("set", [x for b in per_branch for x in b] if all(per_branch) else []))
        else:
            atoms.append(("gap", None))
    flush()
    best: list[str] = []
    for i, (kind, value) in enumerate(atoms):
        options: list[list[str]]
        if kind == "lit":
            options = [[value]]
        elif kind == "alt":
            heads, union = value
            left = atoms[i - 1][1] if i and atoms[i - 1][0] == "lit" else ""
            right = atoms[i + 1][1] if i + 1 < len(atoms) and atoms[i + 1][0] == "lit" else ""
            options = [[f"{left}{b}{right if whole else ''}" for b, whole in heads], union]
        else:
            options = [list(value or [])]
        for found in options:
            if found and _score(found) > _score(best):
                best = list(dict.fromkeys(found))
    return best


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
            best = []
            break
        best.append(longest)
    joined = _best_set(tree)
    if _score(joined) > _score(best):
        best = joined
    return best if best and _score(best)[0] >= MIN_LITERAL else None
