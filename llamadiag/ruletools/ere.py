"""Re-emitting a rule pattern from its parse tree as a POSIX extended regex.

`to_ere` serves `LC_ALL=C grep -E -f` (the benchmark's yardstick, and people who
pre-filter logs with standard tools). ERE has no lookarounds, and rule patterns are
anchored on the message inside wrappers (journald, docker ...), not on the physical
line: lookarounds, anchors and word boundaries are dropped, so each ERE matches every
physical line its pattern can match, and a few more. `(?i)` becomes bracket pairs and
`\\d \\s \\w` become POSIX classes.
"""

from __future__ import annotations

import re._constants as c  # type: ignore[import-not-found]  # private stdlib module, not in typeshed
import re._parser as p  # type: ignore[import-not-found]  # private stdlib module, not in typeshed
from typing import Any

# an sre parse-tree argument: an int, a tuple or a SubPattern depending on the opcode
_Arg = Any

_SPECIAL = set(".[]()*+?{}|^$\\")
_CATEGORY = {  # (outside a bracket, inside one or None when it cannot be put in one)
    c.CATEGORY_DIGIT: ("[0-9]", "0-9"),
    c.CATEGORY_NOT_DIGIT: ("[^0-9]", None),
    c.CATEGORY_SPACE: ("[[:space:]]", "[:space:]"),
    c.CATEGORY_NOT_SPACE: ("[^[:space:]]", None),
    c.CATEGORY_WORD: ("[[:alnum:]_]", "[:alnum:]_"),
    c.CATEGORY_NOT_WORD: ("[^[:alnum:]_]", None),
}
# single atoms a repeat may follow without a group (sub-patterns are emitted in one)
_ATOMS = {c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.CATEGORY, c.SUBPATTERN, c.BRANCH}


class Untranslatable(ValueError):
    """A construct ERE cannot express (a back-reference, a negated class in a set ...)."""


def _char(code: int, icase: bool) -> str:
    ch = chr(code)
    if ch == "\n":
        raise Untranslatable("a newline cannot occur in a grep line")
    if icase and ch.isalpha() and ch.lower() != ch.upper():
        return f"[{ch.lower()}{ch.upper()}]"
    return "\\" + ch if ch in _SPECIAL else ch


def _bracket(items: list, icase: bool) -> str:
    negate = False
    chars: list[str] = []
    parts: list[str] = []
    for op, av in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            if chr(av) == "\n":
                continue  # a grep line never holds a newline: [^\n] is "any character"
            chars.append(chr(av))
            if icase and chr(av).isalpha():
                chars.append(chr(av).swapcase())
        elif op is c.RANGE:
            lo, hi = chr(av[0]), chr(av[1])
            parts.append(f"{lo}-{hi}")
            if icase and lo.isalpha() and hi.isalpha():
                parts.append(f"{lo.swapcase()}-{hi.swapcase()}")
        elif op is c.CATEGORY and _CATEGORY[av][1] is not None:
            parts.append(_CATEGORY[av][1])  # type: ignore[arg-type]  # checked not None on the line above
        else:
            raise Untranslatable(f"bracket item {op} {av}")
    if not chars and not parts:
        return "." if negate else "[^\\x00-\\xff]"
    head = "]" if "]" in chars else ""  # ']' must come first in a bracket, '-' last
    tail = "-" if "-" in chars else ""
    middle = "".join(ch for ch in dict.fromkeys(chars) if ch not in "]-")
    return "[" + ("^" if negate else "") + head + "".join(parts) + middle + tail + "]"


def _seq(items: list, icase: bool) -> str:
    return "".join(_node(op, av, icase) for op, av in items)


def _node(op: object, av: _Arg, icase: bool) -> str:
    if op is c.LITERAL:
        return _char(av, icase)
    if op is c.NOT_LITERAL:
        return "." if chr(av) == "\n" else _bracket([(c.NEGATE, None), (c.LITERAL, av)], icase)
    if op is c.ANY:
        return "."
    if op is c.IN:
        if len(av) == 1 and av[0][0] is c.CATEGORY:
            return _CATEGORY[av[0][1]][0]
        return _bracket(list(av), icase)
    if op is c.CATEGORY:
        return _CATEGORY[av][0]
    if op is c.AT or op in (c.ASSERT, c.ASSERT_NOT):
        # anchors, boundaries and lookarounds only restrict a match: dropped. Anchors too,
        # since rule patterns are anchored on the message, not on a wrapped physical line
        return ""
    if op is c.SUBPATTERN:
        _, add, _, body = av
        return "(" + _seq(list(body), icase or bool(add & p.SRE_FLAG_IGNORECASE)) + ")"
    if op is c.BRANCH:
        return "(" + "|".join(_seq(list(b), icase) for b in av[1]) + ")"
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        lo, hi, body = av
        inner = _seq(list(body), icase)
        if len(body) != 1 or body[0][0] not in _ATOMS:
            inner = f"({inner})"
        return inner + _quantifier(lo, hi)
    if op is c.ATOMIC_GROUP:
        return "(" + _seq(list(av), icase) + ")"
    raise Untranslatable(f"{op} has no equivalent in ERE")


def _quantifier(lo: int, hi: int) -> str:
    if (lo, hi) == (0, c.MAXREPEAT):
        return "*"
    if (lo, hi) == (1, c.MAXREPEAT):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    upper = "" if hi == c.MAXREPEAT else str(hi)
    return f"{{{lo}}}" if hi == lo else f"{{{lo},{upper}}}"


def to_ere(source: str) -> str:
    """The pattern as a POSIX ERE for `LC_ALL=C grep -E`; raises Untranslatable."""
    try:
        tree = p.parse(source)
    except Exception as exc:  # regex-module-only syntax
        raise Untranslatable(f"cannot parse with the standard library: {exc}") from exc
    out = _seq(list(tree), bool(tree.state.flags & p.SRE_FLAG_IGNORECASE))
    if not out:
        raise Untranslatable("empty pattern")
    return out
