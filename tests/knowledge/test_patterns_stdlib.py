"""The format files' patterns compiled by the standard library where that means the same as
`regex` (issue #11 point 4: start-up): same matches, spans and groups on every sample line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import regex

from llamadiag.knowledge.loader import load_knowledge
from llamadiag.knowledge.patterns import compile_format_pattern

ROOT = Path(__file__).resolve().parents[2]


def _format_patterns() -> list[str]:
    k = load_knowledge(builtin=True)
    env = k.envelope
    out = [w.regex for w in env.wrappers] + [w.suffix for w in env.wrappers if w.suffix]
    out += [e.regex for e in env.elisions] + list(env.drop) + list(env.llama_prefix)
    out += [env.tag_column, env.slot_fields] + [c.regex for c in env.continuations] + list(env.level_words)
    out += ["|".join(f"(?:{w.regex})" for w in env.wrappers)]  # the combined test of envelope.py
    out += [s.regex for s in k.versions.shapes] + [k.flags.shell_prompt]
    return sorted(set(out))


def _sample_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted((ROOT / "sample_logs").rglob("*")):
        if path.is_file():
            lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines


def test_most_format_patterns_use_the_standard_library() -> None:
    compiled = [compile_format_pattern(p) for p in _format_patterns()]
    stdlib = [p for p in compiled if isinstance(p, re.Pattern)]
    assert len(stdlib) >= len(compiled) - 3, [p.pattern for p in compiled if not isinstance(p, re.Pattern)]


def test_stdlib_patterns_match_as_regex_does_on_every_sample_line() -> None:
    lines = _sample_lines()
    assert len(lines) > 5000
    for source in _format_patterns():
        fast = compile_format_pattern(source)
        if not isinstance(fast, re.Pattern):
            continue
        slow = regex.compile(source)
        for line in lines:
            for a, b in ((fast.match(line), slow.match(line)), (fast.search(line), slow.search(line))):
                assert (a is None) == (b is None), (source, line)
                if a is not None and b is not None:
                    assert (a.span(), a.groupdict(), a.groups()) == (b.span(), b.groupdict(), b.groups()), (
                        source,
                        line,
                    )


@pytest.mark.parametrize(
    "source",
    [
        r"(?i)error",  # case folding: left to regex
        r"(?x) a b",  # verbose mode
        r"[[:alpha:]]+",  # a POSIX class for regex, a set and "]" for re
        r"\p{L}+",  # regex-only syntax
        r"(?<=a+)b",  # variable-width lookbehind
        r"(?P<x>a)|(?P<x>b)",  # a group name used twice
        r"[a&&b]",  # set intersection in regex VERSION1, a FutureWarning in re
    ],
)
def test_patterns_re_may_read_otherwise_stay_with_regex(source: str) -> None:
    assert not isinstance(compile_format_pattern(source), re.Pattern)


def test_named_groups_and_plain_patterns_use_the_standard_library() -> None:
    assert isinstance(compile_format_pattern(r"^(?P<host>\S+) (?:a|b)\d{2,}(?=x)"), re.Pattern)


def _rule_targets() -> list[tuple[str, str]]:
    """(pattern, literal) of every pattern the scanner runs on the lines holding its literal."""
    from llamadiag.engine.literals import index_for

    index = index_for(load_knowledge(builtin=True))
    return sorted({(t.source, t.literal) for targets in index.by_literal.values() for t in targets})


# text on which re and regex class characters differently: superscript digits and a combining
# accent (\w), a digit of newer Unicode (\d), the information separators (\s)
UNICODE_EDGES = ["n_ctx = 4²", "modèle cafe\u0301 failed", "port \U00010d40\U00010d41", "a\x1cb\x1fc", "x{e<=1}"]


def test_plain_rule_patterns_use_the_standard_library_and_match_as_regex_does() -> None:
    """Issue #11 point 4: a plain rule pattern compiles with `re` (faster, and `regex` is not
    imported for it); on every sample line holding its literal, and on text where the two
    libraries class characters differently, it finds what `regex` finds."""
    from llamadiag.knowledge.patterns import compile_rule_pattern

    lines = _sample_lines()
    targets = _rule_targets()
    plain = [(s, lit) for s, lit in targets if isinstance(compile_rule_pattern(s), re.Pattern)]
    assert len(plain) >= len(targets) // 4, f"{len(plain)} of {len(targets)}"
    for source, literal in plain:
        fast, slow = compile_rule_pattern(source), regex.compile(source)
        for line in [*(line for line in lines if literal in line), *(f"{literal} {e}" for e in UNICODE_EDGES)]:
            a, b = fast.search(line), slow.search(line)
            assert (a is None) == (b is None), (source, line)
            if a is not None and b is not None:
                assert (a.span(), a.groupdict(), a.groups()) == (b.span(), b.groupdict(), b.groups()), (source, line)


@pytest.mark.parametrize(
    "source",
    [r"\w+ failed", r"port \d+", r"a\sb", r"x{e<=1}", r"(?i)error", r"[[:alpha:]]+", r"(a)\1", r"[a&&b]"],
)
def test_rule_patterns_whose_reading_may_differ_stay_with_regex(source: str) -> None:
    from llamadiag.knowledge.patterns import compile_rule_pattern

    assert not isinstance(compile_rule_pattern(source), re.Pattern)


def test_a_fuzzy_brace_is_not_read_by_the_standard_library() -> None:
    assert not isinstance(compile_format_pattern(r"loading{e<=1} model"), re.Pattern)
    assert isinstance(compile_format_pattern(r'^\{"log":'), re.Pattern)  # an escaped brace is text
