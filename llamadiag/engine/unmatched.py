"""Warning and error lines that no rule explains, grouped into masked templates.

Used by `llamadiag report` and reusable by `explain --unmatched`. API:

    mask(text) -> str                        # numbers, paths, hex ids, sizes, URLs -> <n> <path> <hex> <size> <url>
    level_of(line_level, text) -> "E" | "W" | None   # the level letter, or guessed from the words
    unmatched_templates(entries, explained_rules=set(), limit=30) -> list[LineTemplate]
        entries: (line number, level or None, text, rule ids whose signature literals the line holds)
    UnmatchedCollector: an `Analyzer.on_entry` hook (run the Analyzer with every_line=True);
        UnmatchedCollector([r.rule.id for r in knowledge.rules]); .templates(report) -> the
        templates not explained by report.findings
    looks_like(lines, findings=()) -> list[LooksLike]   # known unsettled reports the lines match

A line counts as explained when it holds a signature literal of a rule that produced a
finding (the finding's evidence and its echoes, e.g. "decode() failed: <the same error>").
Masks and the error/warning words live in rules/formats/templating.yaml.

Each template also carries `looks_like`: the known llama.cpp reports whose cause is not settled
(rules/formats/unsettled.yaml) that its example lines match, so the reader sees "looks like
#NNNN (open, no known fix)" and can add to that thread instead of filing a duplicate.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from llamadiag.engine.envelope import Line
from llamadiag.engine.findings import Report
from llamadiag.engine.literals import Target
from llamadiag.knowledge.formatcache import cached_format
from llamadiag.lines import strip_controls

if TYPE_CHECKING:
    import regex  # imported where a pattern is compiled: a small log may need none (start-up time)

MAX_EXAMPLES = 3
MAX_TEMPLATES = 2000  # bounded memory on a huge log: later new templates are only counted
MAX_LOOKS_LIKE = 3
ISSUE_URL = "https://github.com/ggml-org/llama.cpp/issues/{}"


@dataclass(slots=True, kw_only=True)
class LooksLike:
    """A known llama.cpp report whose cause is not settled, matched by a template's lines."""

    issue: int
    title: str
    state: str = field(
        metadata={"description": "open | closed-stale | closed-unresolved (rules/formats/unsettled.yaml)."}
    )
    note: str = field(metadata={"description": "What the thread establishes, and what it does not."})
    url: str
    state_words: str = field(metadata={"description": "The state in words, e.g. 'closed as stale'."})

    def label(self) -> str:
        """`#NNNN (open, no known fix)`."""
        return f"#{self.issue} ({self.state_words}, no known fix)"


TEMPLATING_FORMAT = "TemplatingSpec"  # rules/formats/templating.yaml
UNSETTLED_FORMAT = "Unsettled"  # rules/formats/unsettled.yaml
# the format files a diagnosis reads besides the knowledge (a fleet worker is handed them)
FORMATS_READ = (TEMPLATING_FORMAT, UNSETTLED_FORMAT)


@dataclass(slots=True, kw_only=True)
class LineTemplate:
    """A group of similar warning or error lines no rule explains."""

    template: str
    level: str = field(metadata={"description": "E or W (given by the log, or guessed from its words)."})
    count: int = 1
    first_line: int
    last_line: int
    examples: list[tuple[int, str]] = field(
        default_factory=list, metadata={"description": "(line, text) of the first occurrences."}
    )
    looks_like: list[LooksLike] = field(
        default_factory=list,
        metadata={"description": "Known reports with no settled cause whose lines the examples match."},
    )


@lru_cache(maxsize=1)
def _spec() -> tuple[regex.Pattern[str], regex.Pattern[str], list[tuple[regex.Pattern[str], str]], regex.Pattern[str]]:
    import regex

    spec = cached_format(TEMPLATING_FORMAT)  # validated once, then from the start-up cache
    return (
        regex.compile(spec.error_like),
        regex.compile(spec.warning_like),
        [(regex.compile(m.regex), m.token) for m in spec.masks],
        regex.compile(spec.benign or r"(?!x)x"),
    )


@lru_cache(maxsize=1)
def _unsettled() -> list[tuple[list[tuple[str, regex.Pattern[str]]], frozenset[str], LooksLike]]:
    import regex

    spec = cached_format(UNSETTLED_FORMAT)
    out = []
    # open reports first (the thread to add to), then the newest
    for r in sorted(spec.reports, key=lambda r: (r.state != "open", -r.issue)):
        ll = LooksLike(
            issue=r.issue,
            title=r.title,
            state=r.state,
            note=" ".join(r.known.split()),
            url=ISSUE_URL.format(r.issue),
            state_words=spec.states[r.state],
        )
        out.append(([(p.literal, regex.compile(p.regex)) for p in r.lines], frozenset(r.explained_by), ll))
    return out


@lru_cache(maxsize=1)
def _unsettled_literals() -> regex.Pattern[str]:
    import regex

    literals = {lit for patterns, _, _ in _unsettled() for lit, _ in patterns}
    return regex.compile("|".join(regex.escape(x) for x in sorted(literals)) or r"(?!x)x")


def looks_like(lines: Iterable[str], findings: Collection[str] = (), limit: int = MAX_LOOKS_LIKE) -> list[LooksLike]:
    """The known unsettled reports (open ones first) that any of `lines` matches, at most `limit`.

    A report whose `explained_by` rule is among `findings` (rule ids) is left out: that rule
    already names the cause of such lines in this log."""
    texts = list(lines)
    found = []
    for patterns, settled_by, ll in _unsettled():
        if settled_by.intersection(findings):
            continue
        if any(lit in t and pat.search(t) for t in texts for lit, pat in patterns):
            found.append(ll)
            if len(found) >= limit:
                break
    return found


def mask(text: str) -> str:
    """The text with variable parts (numbers, paths ...) replaced by tokens."""
    for pattern, token in _spec()[2]:
        text = pattern.sub(token, text)
    return text.strip()


def level_of(level: str | None, text: str) -> str | None:
    """E or W for a line worth grouping (by the log's level, else by its words), None otherwise."""
    error_like, warning_like, _, benign = _spec()
    if benign.search(text):
        return None  # a banner every healthy server prints
    if level in ("E", "W"):
        return level
    if level is not None:
        return None  # an I or D line the log itself marked as such
    if error_like.search(text):
        return "E"
    if warning_like.search(text):
        return "W"
    # a line with no level and no error word that a known unsettled report posted as its failure
    # ("vk::Device::createComputePipeline: ErrorUnknown", "Output buffer size mismatch")
    # (the literal only pre-filters: "penalty_last_n" is in every -lv 4 sampler-params line too)
    return "E" if _unsettled_literals().search(text) and looks_like([text]) else None


class _Group:
    __slots__ = ("count", "examples", "first", "last", "level", "rules")

    def __init__(self, number: int, level: str) -> None:
        self.count, self.first, self.last, self.level = 0, number, number, level
        self.examples: list[tuple[int, str]] = []
        self.rules: set[str] = set()


def unmatched_templates(
    entries: Iterable[tuple[int, str | None, str, set[str]]], explained_rules: set[str] | None = None, limit: int = 30
) -> list[LineTemplate]:
    """Group warning/error entries into templates, leaving out those a finding explains.

    Errors first, then by count; at most `limit` templates."""
    groups: dict[str, _Group] = {}
    for number, level, text, rules in entries:
        lvl = level_of(level, text)
        if lvl is None:
            continue
        _add(groups, number, lvl, text, rules)
    return _finish(groups, explained_rules or set(), limit)


def _add(groups: dict[str, _Group], number: int, level: str, text: str, rules: set[str]) -> None:
    text = strip_controls(text.split("\n", 1)[0])[:500]
    key = f"{level} {mask(text)}"
    group = groups.get(key)
    if group is None:
        if len(groups) >= MAX_TEMPLATES:
            return
        group = groups[key] = _Group(number, level)
    group.count += 1
    group.last = number
    group.rules |= rules
    if len(group.examples) < MAX_EXAMPLES:
        group.examples.append((number, text))


def _finish(groups: dict[str, _Group], explained: set[str], limit: int) -> list[LineTemplate]:
    out = [
        LineTemplate(
            template=key[2:],
            level=g.level,
            count=g.count,
            first_line=g.first,
            last_line=g.last,
            examples=list(g.examples),
        )
        for key, g in groups.items()
        if not (g.rules & explained)
    ]
    out.sort(key=lambda t: (t.level != "E", -t.count, t.first_line))
    out = out[:limit]
    for t in out:
        t.looks_like = looks_like((text for _, text in t.examples), explained)
    return out


def _copy(g: _Group) -> _Group:
    c = _Group(g.first, g.level)
    c.count, c.last, c.examples, c.rules = g.count, g.last, list(g.examples), set(g.rules)
    return c


class UnmatchedCollector:
    """Collects warning/error entries as the Analyzer sees them (set as `analyzer.on_entry`).

    `rule_ids` are the knowledge's rule ids in order (`[r.rule.id for r in k.rules]`): literal
    targets name rules by that index."""

    def __init__(self, rule_ids: list[str]) -> None:
        self.groups: dict[str, _Group] = {}
        self.rule_ids = rule_ids

    def observe(self, line: Line, targets: list[Target]) -> None:
        """Group a warning or error entry, noting the rules whose literals it holds."""
        lvl = level_of(line.level, line.text)
        if lvl is None:
            return
        rules = {self.rule_ids[t.ref[0]] for t in targets if t.kind == "sig"}
        _add(self.groups, line.number, lvl, line.text, rules)

    def join(self, later: UnmatchedCollector) -> bool:
        """Take in the groups of the input right after this one (a byte range), as one collector
        reading both would have; False, and nothing changed, when that is not sure (`later` hit
        MAX_TEMPLATES, so it may have dropped lines of a group this one has)."""
        if len(later.groups) >= MAX_TEMPLATES:
            return False
        for key, g in later.groups.items():
            mine = self.groups.get(key)
            if mine is None:
                if len(self.groups) < MAX_TEMPLATES:
                    self.groups[key] = _copy(g)
                continue
            mine.count += g.count
            mine.last = g.last
            mine.rules = mine.rules | g.rules
            mine.examples = (mine.examples + g.examples)[:MAX_EXAMPLES]
        return True

    def templates(self, report: Report, limit: int = 30) -> list[LineTemplate]:
        """Templates not explained by the report's findings."""
        return _finish(self.groups, {f.rule_id for f in report.findings}, limit)
