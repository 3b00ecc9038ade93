"""From physical lines to llama-server entries.

Peels the wrappers declared in rules/formats/envelope.yaml (stacked, any order they
nest in), strips ANSI and control characters, parses llama's own `M.SS.mmm.uuu L `
prefix and the module tag column, and joins continuation lines to their entry.
Nothing here knows a specific format: all shapes come from the YAML.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from llamadiag.engine.regex_rewrite import ungrouped
from llamadiag.knowledge.patterns import compile_format_pattern
from llamadiag.lines import CONTROL, strip_controls

if TYPE_CHECKING:  # the model classes are not built on a start-up cache hit
    import regex  # imported by knowledge.patterns when a pattern needs it

    from llamadiag.knowledge.formatmodel import Envelope, Wrapper

# CSI, OSC and two-character escape sequences, then any other C0/C1 control character.
MAX_PEEL = 8


@dataclass(slots=True)
class Line:
    """One log entry: the first physical line number and the message with continuations."""

    number: int
    text: str
    end: int = 0
    level: str | None = None
    time: float | None = None
    tag: str | None = None
    func: str | None = None
    slot_id: int | None = None
    task_id: int | None = None
    instance: str | None = None
    wrappers: tuple[str, ...] = ()
    meta: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.end:
            self.end = self.number



class EnvelopeParser:
    """Peels wrappers (journald, docker ...) off physical lines and parses llama's own prefix."""

    def __init__(self, spec: Envelope) -> None:
        self.spec = spec
        # lines of a program embedding llama.cpp: they do not end the entry before them
        self.transparent = frozenset(w.name for w in spec.wrappers if w.transparent)

    # Each pattern is compiled when a line first needs it: a small log's lines need the combined
    # tests and llama's prefix, rarely the ~40 single wrapper, elision and continuation patterns
    # (~6 ms of every start-up). A cached_property is an attribute after its first use.
    @cached_property
    def wrappers(self) -> list[tuple[Wrapper, re.Pattern[str] | regex.Pattern[str]]]:
        """Each wrapper with its compiled pattern, in the envelope's order."""
        return [(w, compile_format_pattern(w.regex)) for w in self.spec.wrappers]

    @cached_property
    def suffixes(self) -> dict[str, re.Pattern[str] | regex.Pattern[str]]:
        """The compiled suffix of each wrapper that has one, by wrapper name."""
        return {w.name: compile_format_pattern(w.suffix) for w in self.spec.wrappers if w.suffix}

    @cached_property
    def elisions(self) -> list[re.Pattern[str] | regex.Pattern[str]]:
        """The elision patterns (a poster's "... N lines cut ...")."""
        return [compile_format_pattern(e.regex) for e in self.spec.elisions]

    @cached_property
    def any_elision(self) -> re.Pattern[str] | regex.Pattern[str]:
        """Matches where any elision pattern does."""
        return _any_of([e.regex for e in self.spec.elisions])

    @cached_property
    def drop(self) -> list[re.Pattern[str] | regex.Pattern[str]]:
        """The patterns of lines that are not llama-server's (dropped)."""
        return [compile_format_pattern(d) for d in self.spec.drop]

    @cached_property
    def prefixes(self) -> list[re.Pattern[str] | regex.Pattern[str]]:
        """llama's own `M.SS.mmm.uuu L ` prefixes."""
        return [compile_format_pattern(p) for p in self.spec.llama_prefix]

    @cached_property
    def tag_column(self) -> re.Pattern[str] | regex.Pattern[str]:
        """The module tag column after the prefix."""
        return compile_format_pattern(self.spec.tag_column)

    @cached_property
    def slot_fields(self) -> re.Pattern[str] | regex.Pattern[str]:
        """`id_slot` and `id_task` after the tag column."""
        return compile_format_pattern(self.spec.slot_fields)

    @cached_property
    def continuations(self) -> list[re.Pattern[str] | regex.Pattern[str]]:
        """The patterns of lines that continue the entry before them."""
        return [compile_format_pattern(c.regex) for c in self.spec.continuations]

    @cached_property
    def level_words(self) -> list[tuple[re.Pattern[str] | regex.Pattern[str], str]]:
        """Words that give a line without a level its level."""
        return [(compile_format_pattern(r), lvl) for r, lvl in self.spec.level_words.items()]

    # one combined test each, so the common line (no wrapper, not dropped, not a continuation)
    # costs three regex calls instead of one per pattern
    @cached_property
    def any_wrapper(self) -> re.Pattern[str] | regex.Pattern[str]:
        """Matches (at the start) where any wrapper does."""
        return _any_of([w.regex for w in self.spec.wrappers])

    @cached_property
    def any_drop(self) -> re.Pattern[str] | regex.Pattern[str]:
        """Matches where any drop pattern does."""
        return _any_of(list(self.spec.drop))

    @cached_property
    def any_continuation(self) -> re.Pattern[str] | regex.Pattern[str]:
        """Matches where any continuation pattern does."""
        return _any_of([c.regex for c in self.spec.continuations])

    @cached_property
    def quick(self) -> re.Pattern[str] | regex.Pattern[str]:
        """The scanner's first look at a raw line: which of wrapper/drop/continuation starts it."""
        parts = (
            ("wrapper", [w.regex for w in self.spec.wrappers]),
            ("drop", list(self.spec.drop)),
            ("cont", [c.regex for c in self.spec.continuations]),
        )
        return _stdlib_or_regex("|".join(f"(?P<{name}>{_union(sources)})" for name, sources in parts))

    @cached_property
    def quick_prefixes(self) -> list[re.Pattern[str] | regex.Pattern[str]]:
        """llama's prefixes compiled for speed (the standard library where it can)."""
        return [_stdlib_or_regex(p) for p in self.spec.llama_prefix]

    def wrapped(self, text: str) -> bool:
        """Whether a wrapper starts `text` (as `any_wrapper` says: `quick`'s first alternative is
        the same union, and a line starting with a wrapper takes it; one pattern compiled, not two)."""
        m = self.quick.match(text)
        return m is not None and m.group("wrapper") is not None

    def unwrap(self, text: str) -> tuple[str, list[str], dict[str, str], str | None, str | None, bool]:
        """Peel the wrappers off a line whose controls are stripped: (message, wrapper
        names, their named groups, level, tag, terminal)."""
        wrappers: list[str] = []
        meta: dict[str, str] = {}
        level = tag = None
        terminal = False
        for _ in range(MAX_PEEL):
            if not self.wrapped(text):
                break
            for wrapper, pattern in self.wrappers:
                m = pattern.match(text)
                if not m:
                    continue
                if wrapper.kind == "json":
                    inner = _json_field(text, wrapper.field or "")
                    if inner is None:
                        continue
                    text = strip_controls(inner.rstrip("\n"))
                elif wrapper.kind == "quoted":
                    text = _unquote(text[m.end() :])
                elif wrapper.kind == "pyliteral":
                    inner = _pyliteral_json(text[m.end() :])
                    if inner is None:
                        continue
                    text = inner
                else:
                    text = text[m.end() :]
                    suffix = self.suffixes.get(wrapper.name)
                    if suffix is not None:
                        s = suffix.search(text)
                        if s is not None:
                            text = text[: s.start()]
                if wrapper.kind != "json":
                    for key, value in m.groupdict().items():
                        if value is not None:
                            meta[key] = value
                    if wrapper.level_map and m.groupdict().get("level"):
                        level = wrapper.level_map.get(m.group("level"))
                wrappers.append(wrapper.name)
                tag = wrapper.tag or tag
                terminal = wrapper.terminal
                break
            else:
                break
            if terminal:
                break
        return text, wrappers, meta, level, tag, terminal

    def peel(self, number: int, physical: str) -> tuple[Line | None, bool]:
        """Parse one physical line. Returns (line, is_continuation); None for dropped lines."""
        text, wrappers, meta, level, tag, terminal = self.unwrap(strip_controls(physical))
        if self.any_drop.match(text) is not None:
            return None, False
        instance = meta.get("instance")
        line = Line(number, text, level=level, tag=tag, instance=instance, wrappers=tuple(wrappers), meta=meta)
        if terminal:
            return line, False
        if self.any_continuation.match(text) is not None:
            return line, True
        self.parse_llama(line)
        return line, False

    def elision(self, text: str) -> tuple[bool, int | None]:
        """Whether a peeled line is an elision (the poster cut lines there), and how many
        lines were cut when it says so (its `lines` group)."""
        if not self.spec.elisions or self.any_elision.match(text) is None:
            return False, None
        for pattern in self.elisions:
            m = pattern.match(text)
            if m is not None:
                count = m.groupdict().get("lines")
                return True, int(count) if count else None
        return False, None

    def parse_llama(self, line: Line) -> None:
        """Read llama's own prefix (level, time), tag column and slot fields into the line; drop the prefix."""
        text = line.text
        for prefix in self.prefixes:
            m = prefix.match(text)
            if m:
                line.level = m.group("level")
                stamp = m.groupdict().get("time")
                if stamp:
                    minutes, seconds, ms, us = stamp.split(".")
                    line.time = int(minutes) * 60 + int(seconds) + int(ms) / 1e3 + int(us) / 1e6
                text = text[m.end() :]
                break
        line.text = text
        m = self.tag_column.match(text)
        if m:
            line.tag, line.func = m.group("tag"), m.group("func")
            s = self.slot_fields.match(text[m.end() :])
            if s:
                line.slot_id, line.task_id = int(s.group("slot_id")), int(s.group("task_id"))
        if line.level is None:
            for pattern, level in self.level_words:
                if pattern.search(text):
                    line.level = level
                    break


def _union(sources: list[str]) -> str:
    """One pattern source matching (at the start) wherever any of `sources` does, its named
    groups made plain: it only tests, and two wrappers may name the same group (which `re` refuses)."""
    return "|".join(f"(?:{ungrouped(s)})" for s in sources) if sources else r"(?!x)x"


def _any_of(sources: list[str]) -> re.Pattern[str] | regex.Pattern[str]:
    """A pattern matching (at the start) wherever any of `sources` matches."""
    return compile_format_pattern(_union(sources))


def _stdlib_or_regex(source: str) -> re.Pattern[str] | regex.Pattern[str]:
    """The standard library compiles the simple patterns used per line to faster code."""
    try:
        return re.compile(source)
    except re.error:
        return compile_format_pattern(source)


def plain(raw: str) -> bool:
    """No control character or escape sequence (strip_controls would leave it unchanged)
    and not a JSON object (whose message is escaped)."""
    if raw.isascii() and raw.isprintable():
        return raw[:1] != "{"
    return CONTROL.search(raw) is None and raw[:1] != "{"


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(.)")


def _unquote(rest: str) -> str:
    """A logfmt value at the start of `rest`, quoted (Go's %q: `\\"`, `\\n` ... undone) or bare,
    followed by the rest of the line unchanged."""
    m = _QUOTED.match(rest)
    if m is None:
        return rest
    value = _ESCAPE.sub(lambda e: _ESCAPES.get(e.group(1), e.group(0)), m.group(1))
    return value.rstrip("\n") + rest[m.end() :]


def _pyliteral_json(rest: str) -> str | None:
    """A Python literal (the repr of a dict an exception printed) as compact JSON, or None."""
    rest = rest.strip()
    if not rest.startswith(("{", "[")):
        return None
    try:
        value = ast.literal_eval(rest)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def _json_field(text: str, name: str) -> str | None:
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    value = obj.get(name) if isinstance(obj, dict) else None
    if isinstance(value, list):  # journald stores non-text MESSAGE as a byte array
        try:
            return bytes(value).decode("utf-8", "replace")
        except (TypeError, ValueError):
            return None
    return value if isinstance(value, str) else None

