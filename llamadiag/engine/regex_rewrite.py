"""Rewrites of rule patterns for the bulk path, which runs them over a whole stretch of
lines instead of one message at a time.

- `loosened`: anchors and lookarounds removed. Whatever the original matches in a
  message, the loosened pattern matches in the stretch that holds the message's line,
  so "no match in the stretch" proves "no match in any of its messages".
- `line_bounded`: whitespace classes exclude the newline and the pattern swallows the rest
  of its line, so `findall` over a stretch yields at most one match per line: the first,
  the one `search` finds on that line alone.
"""

from __future__ import annotations

_ANCHOR_ESCAPES = set("AZzbBG")
_LOOKAROUNDS = ("(?=", "(?!", "(?<=", "(?<!")


def _class_end(source: str, i: int) -> int:
    """Index just past the character class opening at source[i] == '['."""
    j = i + 1
    if j < len(source) and source[j] == "^":
        j += 1
    if j < len(source) and source[j] == "]":
        j += 1
    while j < len(source) and source[j] != "]":
        j += 2 if source[j] == "\\" else 1
    return j + 1


def _group_end(source: str, i: int) -> int:
    """Index just past the group opening at source[i] == '('."""
    depth, j = 0, i
    while j < len(source):
        ch = source[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            j = _class_end(source, j)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return j


def _rewrite(source: str, loosen: bool, bound: bool) -> str:
    out: list[str] = []
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            if loosen and nxt in _ANCHOR_ESCAPES:
                pass
            elif bound and nxt == "s":
                out.append(r"[^\S\n]")
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        if ch == "[":
            end = _class_end(source, i)
            cls = source[i:end]
            out.append(cls.replace(r"\s", r" \t\x0b\x0c\r") if bound else cls)
            i = end
            continue
        if loosen and ch in "^$":
            i += 1
            continue
        if loosen and source.startswith(_LOOKAROUNDS, i):
            i = _group_end(source, i)
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def loosened(source: str) -> str:
    """The pattern without anchors and lookarounds, for a search over a stretch of lines."""
    return _rewrite(source, loosen=True, bound=False)


def line_bounded(source: str) -> str:
    """The pattern kept to one line and extended to its end: `findall` gives one match per line."""
    return _rewrite(source, loosen=False, bound=True) + r"[^\n]*"


def ungrouped(source: str, keep: frozenset[str] = frozenset()) -> str:
    """Named groups made plain (but those in `keep`), so several patterns can be joined
    into one, or `findall` builds only the values it is asked for."""
    out: list[str] = []
    i = 0
    while i < len(source):
        if source[i] == "\\":
            out.append(source[i : i + 2])
            i += 2
            continue
        if source[i] == "[":
            end = _class_end(source, i)
            out.append(source[i:end])
            i = end
            continue
        if source.startswith("(?P<", i) or (source.startswith("(?<", i) and source[i + 3 : i + 4] not in ("=", "!")):
            close = source.index(">", i)
            name = source[source.index("<", i) + 1 : close]
            out.append(source[i : close + 1] if name in keep else "(?:")
            i = close + 1
            continue
        out.append(source[i])
        i += 1
    return "".join(out)
