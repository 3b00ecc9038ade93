"""Re-emitting a rule pattern from its parse tree, in two dialects.

- `to_ere`: a POSIX extended regex for `LC_ALL=C grep -E -f` (the benchmark's
  yardstick, and for people who pre-filter logs with standard tools).
- `relaxed`: a Python regex that matches a superset of what the pattern matches in
  any *suffix* of a line: anchors, word boundaries and lookarounds are dropped. The
  scanner runs it on a raw physical line (before wrappers and llama's prefix are
  peeled, which only remove a head) to skip lines that cannot match.

Both drop lookarounds, so both match a superset of the original's lines. `(?i)` becomes
bracket pairs in ERE; `\\d \\s \\w` become POSIX classes.
"""

from __future__ import annotations

import re
import re._constants as c  # type: ignore[import-not-found]
import re._parser as p  # type: ignore[import-not-found]

_ERE_SPECIAL = set(".[]()*+?{}|^$\\")
_CATEGORY = {  # (ERE outside a bracket, ERE inside one, Python)
    c.CATEGORY_DIGIT: ("[0-9]", "0-9", r"\d"),
    c.CATEGORY_NOT_DIGIT: ("[^0-9]", None, r"\D"),
    c.CATEGORY_SPACE: ("[[:space:]]", "[:space:]", r"\s"),
    c.CATEGORY_NOT_SPACE: ("[^[:space:]]", None, r"\S"),
    c.CATEGORY_WORD: ("[[:alnum:]_]", "[:alnum:]_", r"\w"),
    c.CATEGORY_NOT_WORD: ("[^[:alnum:]_]", None, r"\W"),
}
# single atoms a repeat may follow without a group (sub-patterns are emitted in one)
_ATOMS = {c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.CATEGORY, c.SUBPATTERN, c.BRANCH}


class Untranslatable(ValueError):
    """A construct the target dialect cannot express (a back-reference ...)."""


class _Emitter:
    def __init__(self, ere: bool) -> None:
        self.ere = ere

    def char(self, code: int, icase: bool) -> str:
        ch = chr(code)
        if not self.ere:
            return re.escape(ch)
        if ch == "\n":
            raise Untranslatable("a newline cannot occur in a grep line")
        if icase and ch.isalpha() and ch.lower() != ch.upper():
            return f"[{ch.lower()}{ch.upper()}]"
        return "\\" + ch if ch in _ERE_SPECIAL else ch

    def bracket(self, items: list, icase: bool) -> str:
        if not self.ere:
            return "[" + "".join(self._py_item(op, av) for op, av in items) + "]"
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
                parts.append(_CATEGORY[av][1])  # type: ignore[arg-type]
            else:
                raise Untranslatable(f"bracket item {op} {av}")
        if not chars and not parts:
            return "." if negate else "[^\\x00-\\xff]"
        head = "]" if "]" in chars else ""
        tail = "-" if "-" in chars else ""
        middle = "".join(ch for ch in dict.fromkeys(chars) if ch not in "]-")
        return "[" + ("^" if negate else "") + head + "".join(parts) + middle + tail + "]"

    @staticmethod
    def _py_item(op: object, av: object) -> str:
        if op is c.NEGATE:
            return "^"
        if op is c.LITERAL:
            return re.escape(chr(av))  # type: ignore[arg-type]
        if op is c.RANGE:
            return f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}"  # type: ignore[index]
        if op is c.CATEGORY:
            return _CATEGORY[av][2]  # type: ignore[index]
        raise Untranslatable(f"bracket item {op}")

    def seq(self, items: list, icase: bool) -> str:
        return "".join(self.node(op, av, icase) for op, av in items)

    def group(self, text: str) -> str:
        return f"({text})" if self.ere else f"(?:{text})"

    def node(self, op: object, av: object, icase: bool) -> str:
        if op is c.LITERAL:
            return self.char(av, icase)  # type: ignore[arg-type]
        if op is c.NOT_LITERAL:
            if self.ere and chr(av) == "\n":  # type: ignore[arg-type]
                return "."
            return self.bracket([(c.NEGATE, None), (c.LITERAL, av)], icase)
        if op is c.ANY:
            return "."
        if op is c.IN:
            if len(av) == 1 and av[0][0] is c.CATEGORY:  # type: ignore[arg-type,index]
                return _CATEGORY[av[0][1]][2 if not self.ere else 0]  # type: ignore[index]
            return self.bracket(list(av), icase)  # type: ignore[arg-type]
        if op is c.CATEGORY:
            return _CATEGORY[av][2 if not self.ere else 0]  # type: ignore[index]
        if op is c.AT or op in (c.ASSERT, c.ASSERT_NOT):
            return ""  # dropped: anchors, boundaries and lookarounds only restrict a match
        if op is c.SUBPATTERN:
            _, add, _, body = av  # type: ignore[misc]
            scoped = bool(add & p.SRE_FLAG_IGNORECASE)
            inner = self.seq(list(body), icase or scoped)
            return f"(?i:{inner})" if scoped and not self.ere and not icase else self.group(inner)
        if op is c.BRANCH:
            return self.group("|".join(self.seq(list(b), icase) for b in av[1]))  # type: ignore[index]
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            lo, hi, body = av  # type: ignore[misc]
            inner = self.seq(list(body), icase)
            if len(body) != 1 or body[0][0] not in _ATOMS:
                inner = self.group(inner)
            return inner + _quantifier(lo, hi)
        if op is c.ATOMIC_GROUP:
            return self.group(self.seq(list(av), icase))  # type: ignore[arg-type]
        raise Untranslatable(f"{op} has no equivalent")


def _quantifier(lo: int, hi: int) -> str:
    if (lo, hi) == (0, c.MAXREPEAT):
        return "*"
    if (lo, hi) == (1, c.MAXREPEAT):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    upper = "" if hi == c.MAXREPEAT else str(hi)
    return f"{{{lo}}}" if hi == lo else f"{{{lo},{upper}}}"


def _tree(source: str) -> tuple[list, bool]:
    try:
        tree = p.parse(source)
    except Exception as exc:  # regex-module-only syntax
        raise Untranslatable(f"cannot parse with the standard library: {exc}") from exc
    return list(tree), bool(tree.state.flags & p.SRE_FLAG_IGNORECASE)


def to_ere(source: str) -> str:
    """The pattern as a POSIX ERE for `LC_ALL=C grep -E`; raises Untranslatable."""
    items, icase = _tree(source)
    out = _Emitter(ere=True).seq(items, icase)
    if not out:
        raise Untranslatable("empty pattern")
    return out


def relaxed(source: str) -> str:
    """A Python pattern matching a superset of `source`'s matches, found in any line
    of which the real text is a suffix; raises Untranslatable."""
    items, icase = _tree(source)
    out = _Emitter(ere=False).seq(items, False)
    return ("(?i)" if icase else "") + out
