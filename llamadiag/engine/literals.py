"""The literal index: one pass over the text finds which patterns can possibly match.

Every pattern used on log lines (signature entries, facts, versions, eras, run
boundaries, statistics, exclusions, continuations) registers the literal it requires.
A block of lines is searched once for all literals (`multimatch`, driven by `scan`); only
lines holding one become entries, and each entry is offered only to the patterns whose
literals it holds. `targets()` finds them in one entry's own text (a joined multi-line
entry, a JSON-wrapped message).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from llamadiag.knowledge.patterns import PatternError, compile_rule_pattern, required_literals

if TYPE_CHECKING:
    import regex  # imported when a rule pattern is compiled (knowledge.patterns)

    from llamadiag.knowledge.loader import Knowledge


class Target:
    """A pattern to run on entries that hold `literal`; `kind` and `ref` say whose it is.

    The pattern is compiled on first use: a log touches a fraction of the rule set, and
    compiling all ~400 patterns up front would be most of a small log's start-up time.
    """

    __slots__ = ("kind", "literal", "pattern", "ref", "serial", "source")

    def __init__(self, kind: str, ref: Any, source: str, literal: str, serial: int = 0) -> None:
        self.kind, self.ref, self.source, self.literal, self.serial = kind, ref, source, literal, serial

    def __getattr__(self, name: str) -> Any:
        # only reached while the `pattern` slot is unset: compile once, then it is a plain slot
        if name != "pattern":
            raise AttributeError(name)
        self.pattern: re.Pattern[str] | regex.Pattern[str] = compile_rule_pattern(self.source)
        return self.pattern

    def is_compiled(self) -> bool:
        """Whether the pattern was compiled (and is kept) by this target."""
        try:
            _PATTERN_SLOT.__get__(self)  # the slot itself: never compiles
        except AttributeError:
            return False
        return True

    def forget(self) -> None:
        """Let go of the compiled pattern: the next use compiles it again."""
        if self.is_compiled():
            del self.pattern

    def __reduce__(self) -> tuple[type[Target], tuple[str, Any, str, str, int]]:
        # the source, never the compiled pattern: pickling reads every slot, and `pattern` would
        # compile all ~400 (the start-up cache then held them, and each start rebuilt them)
        return (Target, (self.kind, self.ref, self.source, self.literal, self.serial))


_PATTERN_SLOT: Any = Target.__dict__["pattern"]


def literals_for(source: str, explicit: str | None) -> list[str]:
    """The literals a pattern requires: `explicit` when given, else those found in it."""
    if explicit:
        return [explicit]
    found = required_literals(source)
    if not found:
        raise PatternError(f"pattern {source!r} has no literal of 4+ characters: add `literal:`")
    return found


def trie_regex(literals: list[str]) -> str:
    """One regex for many literals, shaped as a trie so the engine never retries
    hundreds of alternatives at a position; at each position it matches the longest."""
    trie: dict = {}
    for lit in literals:
        node = trie
        for ch in lit:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        ends = "" in node
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:
            return f"(?:{body})?"
        return body

    return build(trie)


class LiteralIndex:
    """Targets by the literal that lines must hold for their pattern to be tried."""

    def __init__(self) -> None:
        self.by_literal: dict[str, list[Target]] = {}
        self._block_re: re.Pattern[str] | None = None
        self._implied: dict[str, list[str]] = {}
        self.serials = 0

    def add(self, kind: str, ref: Any, source: str, literal: str | None = None) -> None:
        """Index a pattern under each literal it requires."""
        self.serials += 1
        for lit in literals_for(source, literal):
            self.by_literal.setdefault(lit, []).append(Target(kind, ref, source, lit, self.serials))
        self._block_re = None

    def targets_of(self) -> list[Target]:
        """Every target of the index (a pattern with several literals once per literal)."""
        return [t for targets in self.by_literal.values() for t in targets]

    def compiled(self) -> int:
        """How many of the index's patterns its targets keep compiled now."""
        return len({t.serial for t in self.targets_of() if t.is_compiled()})

    def forget_compiled(self) -> None:
        """Let go of every compiled pattern the targets keep (a fleet worker, after each log:
        otherwise it keeps each pattern any of its logs touched, for the rest of its life)."""
        for t in self.targets_of():
            t.forget()

    def literals(self) -> list[str]:
        """Every indexed literal, longest first."""
        return sorted(self.by_literal, key=len, reverse=True)

    def _compile(self) -> None:
        alternation = trie_regex(self.literals()) or r"(?!x)x"
        self._block_re = re.compile(alternation)
        lits = self.literals()
        self._implied = {a: [b for b in lits if b != a and b in a] for a in lits}

    def targets(self, text: str) -> list[Target]:
        """Targets whose literal occurs in text (overlapping occurrences included), each
        once, in registration order (the first fact pattern listed wins)."""
        if self._block_re is None:
            self._compile()
        assert self._block_re is not None
        found: set[str] = set()
        search = self._block_re.search
        m = search(text)
        while m is not None:  # overlapping: resume one character after each match start
            lit = m.group()
            if lit not in found:
                found.add(lit)
                found.update(self._implied[lit])
            m = search(text, m.start() + 1)
        unique = {t.serial: t for lit in found for t in self.by_literal[lit]}
        return [unique[s] for s in sorted(unique)]


LITERAL_INDEX = "literal_index"  # its key in Knowledge.derived


def index_for(k: Knowledge) -> LiteralIndex:
    """Every pattern of the knowledge registered under its literal(s), with its kind and owner:
    built once per knowledge and kept with it (the start-up cache holds it, so a small log does
    not find the literals of ~850 patterns again; a fleet worker compiles each pattern once)."""
    index = k.derived.get(LITERAL_INDEX)
    if not isinstance(index, LiteralIndex):
        index = k.derived[LITERAL_INDEX] = _build_index(k)
    return index


def forget_compiled_patterns(k: Knowledge) -> None:
    """Let the knowledge's literal index (if it was built: never builds it) drop its compiled
    patterns; see `LiteralIndex.forget_compiled`."""
    index = k.derived.get(LITERAL_INDEX)
    if isinstance(index, LiteralIndex):
        index.forget_compiled()


def _build_index(k: Knowledge) -> LiteralIndex:
    index = LiteralIndex()
    for rule_i, loaded in enumerate(k.rules):
        rule = loaded.rule
        for sig_i, sig in enumerate(rule.signatures):
            for entry_i, entry in enumerate(sig.entries):
                index.add("sig", (rule_i, sig_i, entry_i), entry.regex, entry.literal)
        for excl in rule.exclude_lines:
            index.add("exclude", (rule_i, excl.because.strip()), excl.regex, excl.literal)
    for fact in k.facts:
        for p in fact.patterns:
            index.add("fact", (fact.name, p.value), p.regex, p.literal)
        for p in fact.absent_unless:
            index.add("absent_block", fact.name, p.regex, p.literal)
    for shape in k.versions.shapes:
        if shape.literal:
            index.add("version", shape.source, shape.regex, shape.literal)
    for fp in k.eras.fingerprints:
        index.add("era", (fp.name, fp.min_build, fp.max_build), fp.regex, fp.literal)
    for p in k.runs.start:
        index.add("start", None, p.regex, p.literal)
    for p in k.runs.preamble:
        index.add("preamble", None, p.regex, p.literal)
    for p in k.runs.startup_complete:
        index.add("startup", None, p.regex, p.literal)
    for p in k.runs.commandline:
        index.add("cmdline", None, p.regex, p.literal)
    if k.runs.child_argv is not None:
        argv = k.runs.child_argv
        for kind, p in (("argv_spawn", argv.spawn), ("argv_header", argv.header), ("argv_item", argv.item)):
            index.add(kind, None, p.regex, p.literal)
    for stat in k.stats.lines:
        index.add("stat", stat.name, stat.regex, stat.literal)
    for cont in k.envelope.continuations:
        index.add("cont", None, cont.regex, cont.literal)
    # lines the analyzer must see although no rule reads them: where the poster cut the log,
    # and lines of an embedding program that do not end the entry before them
    for elision in k.envelope.elisions:
        index.add("elision", None, elision.regex, elision.literal)
    for wrapper in k.envelope.wrappers:
        if wrapper.transparent and wrapper.literal:
            index.add("bridge", wrapper.name, wrapper.regex, wrapper.literal)
    return index
