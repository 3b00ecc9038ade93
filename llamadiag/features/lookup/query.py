"""Reading a support query: what the person pasted and what it names.

`parse_query(text, flag_table)` returns a `Query`: the lines (a paste is a log), issue/PR
numbers and commit prefixes it names, words that may be rule ids, a build (b11502, build
11502), the llama-server flags it holds (as a command line), the bounded text for the word
search, notes for the reader, and `error` for input that cannot be a query (empty, only
punctuation, binary). Nothing here knows a rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from llamadiag.engine.cmdline import FlagTable
from llamadiag.lines import strip_controls

MAX_CHARS = 64 * 1024 * 1024  # beyond this a paste is cut (the desk has its own, lower limit)
SEARCH_CHARS = 4000  # the word search reads at most this much of a long paste
SHORT_QUERY_WORDS = 6  # a bare number in a query this short is an issue/PR number

REF_PATTERNS = [
    re.compile(r"github\.com/[\w.-]+/[\w.-]+/(?:issues|pull|discussions)/(\d+)"),
    re.compile(r"(?<![\w#&])#(\d{2,6})\b"),
    re.compile(r"(?i)\b(?:issue|issues|pr|prs|pull request|pull|bug|ticket)\s*#?\s*(\d{2,6})\b"),
]
BARE_NUMBER = re.compile(r"(?<![\w.#/-])(\d{4,6})(?![\w.])")
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")
BUILD_PATTERNS = [
    re.compile(r"(?<![\w-])[bB](\d{3,5})(?![\w])"),
    re.compile(r"(?i)\bbuild[ :=#]+(\d{3,5})\b"),
]
RULE_WORD = re.compile(r"\b[a-z0-9]+(?:-[a-z0-9]+)+\b")
LONG_FLAG = re.compile(r"(?<!\S)--[a-z][\w-]*")
ERRORISH = re.compile(
    r"(?i)\b(?:error|failed|fail|abort|assert|exception|fatal|cannot|unable|invalid|denied)\b|^\S*\s*[EW] "
)


@dataclass
class Query:
    """A lookup query as read: log lines, references, rule ids, build and flags found in it."""

    text: str
    lines: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    bare_numbers: list[str] = field(default_factory=list)
    rule_words: list[str] = field(default_factory=list)
    build: int | None = None
    build_text: str | None = None
    flag_text: str = ""
    search_text: str = ""
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def empty(self) -> bool:
        """Whether the query holds only whitespace."""
        return not self.text.strip()


def looks_binary(text: str) -> bool:
    """Mostly control characters or undecodable bytes: an image, a model file, an archive."""
    sample = text[:8192]
    if not sample:
        return False
    bad = sample.count("\ufffd") + sum(1 for ch in sample if ch < " " and ch not in "\t\n\r\x1b")
    return "\x00" in sample or bad / len(sample) > 0.1


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def parse_query(text: str, flag_table: FlagTable, allow_empty: bool = False) -> Query:
    """Read a lookup query: pasted lines, references, rule ids, build, flags and words."""
    q = Query(text=text)
    if looks_binary(text):
        size = len(text.encode("utf-8", "replace"))
        q.error = f"the query looks like binary data ({size} bytes), not text: paste the log or error text"
        return q
    if len(text) > MAX_CHARS:
        q.notes.append(
            f"the paste is {len(text) / 1e6:.1f} MB: only its first {MAX_CHARS // (1024 * 1024)} MiB were read"
        )
        text = q.text = text[:MAX_CHARS]
    if not re.search(r"\w", text):
        if not allow_empty:
            q.error = (
                "the query is empty" if not text.strip() else "the query holds no letters or digits"
            ) + ": give pasted error text, an issue or PR number (#30204), a rule id, or a few words"
        return q
    q.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    short = len(text.split()) <= SHORT_QUERY_WORDS and len(q.lines) <= 2
    refs: list[str] = []
    for pattern in REF_PATTERNS:
        refs += pattern.findall(text)
    if short:
        q.bare_numbers = [n for n in BARE_NUMBER.findall(text) if n not in refs]
    q.refs = _unique(refs + q.bare_numbers + COMMIT.findall(text[:SEARCH_CHARS]))
    q.rule_words = _unique(RULE_WORD.findall(text[:SEARCH_CHARS].lower()))
    for pattern in BUILD_PATTERNS:
        m = pattern.search(text)
        if m:
            q.build, q.build_text = int(m.group(1)), m.group(0)
            break
    q.flag_text = _flag_lines(q.lines, flag_table)
    q.search_text = _search_text(text, q.lines, q.notes)
    return q


def _command_start(flags: FlagTable) -> re.Pattern[str]:
    """A line that starts a command line: a prompt, then one of the program names of
    rules/flags/llama-server.yaml, or a flag straight away."""
    names = sorted({name.rsplit("/", 1)[-1] for name in flags.spec.program}, key=len, reverse=True)
    programs = "|".join(re.escape(name) for name in names)
    return re.compile(rf"^\s*(?:[$#>]\s*)?(?:\S*(?:{programs})\S*\s+)?--?[a-z]")


def _flag_lines(lines: list[str], flags: FlagTable) -> str:
    """Lines holding known llama-server flags, joined as one command line."""
    found = []
    command_start = _command_start(flags)
    for line in lines[:2000]:
        known = [f for f in LONG_FLAG.findall(line) if f in flags.by_alias or f in flags.by_old]
        # a flag named in an error message is not a command line: need two, or a line that starts with one
        if len(known) >= 2 or (known and command_start.match(line)):
            found.append(line.strip())
    return " ".join(found)


def _search_text(text: str, lines: list[str], notes: list[str]) -> str:
    """The text the word search reads: all of a short query, the error-like lines of a long paste."""
    if len(text) <= SEARCH_CHARS:
        return strip_controls(text)
    picked: list[str] = []
    size = 0
    for line in lines:
        if ERRORISH.search(line):
            line = strip_controls(line)[:400]
            picked.append(line)
            size += len(line)
            if size >= SEARCH_CHARS:
                break
    notes.append(
        f"a long paste ({len(lines)} lines) is read as a log; the word search used {len(picked)} "
        "of its error-like lines"
    )
    return "\n".join(picked) or strip_controls(text[:SEARCH_CHARS])
