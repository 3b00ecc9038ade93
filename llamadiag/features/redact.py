"""Redaction of shareable output: secrets, prompt/response text, network identities, user names.

What is sensitive and how it is replaced lives in rules/formats/redaction.yaml; this module
only applies it. API (used by the CLI commands and the desk):

    redactor = Redactor()                  # one per output, so stand-ins stay consistent in it
    redactor.learn(obj)                    # optional first pass: secrets seen anywhere are masked everywhere
    redactor.learn_input(texts)            # the user's own input (a paste, a command line): what it holds is
                                           # replaced wherever rule text quotes it (nothing counted yet)
    redactor.text(s) -> str                # one string of user input (a log line, a captured value)
    redactor.known_only(s) -> str          # one string of rule text: only values already replaced elsewhere
    redactor.value(obj) -> obj             # dicts, lists, tuples, strings (other values kept)
    redactor.model(m) -> m                 # a pydantic model (re-validated) or a report dataclass
    redactor.summary() -> RedactionSummary # counts per category; .line() is the closing line
    redact_report(report) -> (Report, RedactionSummary)

Only what came from the user's input is searched with the patterns: log lines, values captured
from them, facts, pasted command lines and version text. Rule text (titles, diagnosis,
remediation, references: the KNOWLEDGE fields below) is never searched; a user value it quotes
(a captured host name in a diagnosis) is replaced by the same stand-in, as a literal.

Redaction is best-effort (regular expressions); the closing line says so.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, is_dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import regex

from llamadiag.engine.findings import Report
from llamadiag.engine.reportdata import dump, rebuild
from llamadiag.knowledge.formatcache import cached_format

if TYPE_CHECKING:  # the validated spec comes from the start-up cache as a light copy
    from llamadiag.knowledge.formatmodel import RedactionSpec

M = TypeVar("M")  # a pydantic model or a report dataclass
FLAGS = regex.MULTILINE
CONTENT = "prompt/response text"
BASE64 = "base64 payload"
USER = "user name in paths"
LABELS = {"ip": "IP address", "host": "host name", "pod": "pod name"}
DISTINCT = {*LABELS.values(), USER}  # categories whose closing-line count says how many were distinct
# The stand-in for a user name in a home path. Plain letters: `<user>` would open an HTML tag
# in markdown (C:\Users\<user> rendered as a raw tag).
USER_STAND_IN = "USER"

# Fields written in rules/ (or by the engine around them), never log text, per kind of object:
# an object holding the first key (a finding, a lookup result, a ruled-out rule, a watch cause;
# a known report; a rule condition) keeps these fields out of the patterns.
KNOWLEDGE: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "rule_id",
        frozenset(
            [
                "rule_id",
                "title",
                "category",
                "severity",
                "confidence",
                "summary",
                "diagnosis",
                "root_cause",
                "remediation",
                "workarounds",
                "not_to_do",
                "verification",
                "questions",
                "references",
                "version_status",
                "build_status",
                "why",
                "reason",
            ]
        ),
    ),
    ("issue", frozenset({"title", "state", "note", "url", "state_words"})),
    ("expected", frozenset({"fact", "expected", "status"})),
    ("known_findings", frozenset({"known_findings", "questions", "first_bad_commit"})),  # a bug-report draft
)


def knowledge_fields(obj: dict[str, Any]) -> frozenset[str]:
    """The keys of a dumped object whose text is knowledge (rule text), not user input."""
    for marker, fields in KNOWLEDGE:
        if marker in obj:
            return fields
    return frozenset()


@dataclass(slots=True, kw_only=True)
class RedactionSummary:
    """What was replaced, for the closing line of a shareable output (and the JSON beside it)."""

    enabled: bool = True
    counts: dict[str, int] = field(default_factory=dict)
    distinct: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        """The closing line of a shareable output: what was redacted, or that nothing was."""
        if not self.enabled:
            return "Not redacted (--no-redact): this output may hold keys, prompts, addresses and user names."
        if not self.counts:
            return "Redaction on: nothing sensitive was recognised (best-effort: review before sharing)."
        parts = []
        for category, n in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])):
            text = f"{n} {_plural(category, n)}"
            distinct = self.distinct.get(category)
            if distinct is not None and distinct != n:
                text += f" ({distinct} distinct)"
            parts.append(text)
        return "Redacted: " + ", ".join(parts) + ". Best-effort: review before sharing."


def _plural(category: str, n: int) -> str:
    label = category.replace("-", " ").replace("api ", "API ").replace("url ", "URL ")
    if n == 1:
        return label
    head, sep, tail = label.partition(" in ")
    head += "es" if head.endswith("ss") else "" if head.endswith("s") else "s"
    return head + sep + tail


def _compile(source: str) -> regex.Pattern[str]:
    return regex.compile(source, FLAGS)


class _Compiled:
    """The spec's patterns compiled once per process."""

    def __init__(self, spec: RedactionSpec) -> None:
        keys = "|".join(regex.escape(k) for k in spec.content.keys)
        string = r'"(?:[^"\\]|\\.)*"'
        self.json_value = _compile(rf'"(?:{keys})"\s*:\s*"(?P<content>(?:[^"\\]|\\.)*)(?:"|$)')
        self.json_array = _compile(rf'"(?:{keys})"\s*:\s*\[(?P<content>\s*{string}(?:\s*,\s*{string})*)')
        self.string = _compile(string)
        self.base64 = _compile(spec.content.base64)
        self.content_lines = [_compile(p) for p in spec.content.lines]
        self.secrets = [(p.category, _compile(p.regex)) for p in spec.secrets]
        self.keep_secret = [_compile(p) for p in spec.keep_secret]
        self.paths = [_compile(p) for p in spec.paths]
        self.pseudonyms = [(p.kind, _compile(p.regex)) for p in spec.pseudonyms]
        self.keep_values = {v.lower() for v in spec.keep_values}
        self.keep_user = set(spec.keep_user)
        self.secret_keys = {k.lower() for k in spec.secret_keys}


_COMPILED: dict[int, tuple[RedactionSpec, _Compiled]] = {}


def _compiled(spec: RedactionSpec) -> _Compiled:
    hit = _COMPILED.get(id(spec))
    if hit is None or hit[0] is not spec:
        hit = _COMPILED[id(spec)] = (spec, _Compiled(spec))
    return hit[1]


class Redactor:
    """Replaces keys, prompts, paths, user names and addresses with stand-ins."""

    def __init__(self, spec: RedactionSpec | None = None, enabled: bool = True) -> None:
        self.spec = spec or cached_format("RedactionSpec")  # validated, from the start-up cache
        self.enabled = enabled
        self.c = _compiled(self.spec)
        self.counts: dict[str, int] = {}
        self.tokens: dict[tuple[str, str], str] = {}  # (kind, value) -> stand-in
        self.seen: dict[str, set[str]] = {}  # category -> the distinct values replaced in the output
        self.known: set[str] = set()  # secret values to mask wherever they occur
        self._known_re: regex.Pattern[str] | None = None
        # user values replaced so far (a host, an IP, a home path, a key) -> (stand-in, category,
        # what it counts as distinct): rule text that quotes one gets the same stand-in (known_only)
        self.replaced: dict[str, tuple[str, str, str]] = {}
        self._replaced_re: regex.Pattern[str] | None = None
        self._counting = True

    # -- public API -------------------------------------------------------------------
    def text(self, s: str) -> str:
        """A string of user input with content (prompts), secrets, paths and names replaced."""
        if not self.enabled or not s:
            return s
        s = self._content(s)
        s = self._secrets(s)
        s = self._paths(s)
        s = self._pseudonyms(s)
        return self._replaced(s)  # a bare value (a fact, a capture) seen in context elsewhere

    def known_only(self, s: str) -> str:
        """A string of rule text: no pattern runs on it (`hostname: H`, `--host is` stay); only
        user values already replaced elsewhere, and learnt secrets, are replaced where it quotes them."""
        if not self.enabled or not s:
            return s
        if self.known:
            s = self._known_pattern().sub(self._mask_known, s)
        return self._replaced(s)

    def value(self, obj: Any) -> Any:
        """A copy of a JSON-like value with every string of user input redacted (keys decide for
        some values; the knowledge fields of a rule-naming object only get `known_only`)."""
        if not self.enabled:
            return obj
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            rule_text = knowledge_fields(obj)
            out = {k: self._keyed(k, v) for k, v in obj.items() if k not in rule_text}
            out |= {k: self._known_value(v) for k, v in obj.items() if k in rule_text}
            return {k: out[k] for k in obj}
        if isinstance(obj, list | tuple):
            return type(obj)(self.value(v) for v in obj)
        return obj

    def value_in_place(self, obj: dict[str, Any] | list[Any]) -> None:
        """As `value`, changing the containers of a dumped report instead of copying them."""
        rule_text = knowledge_fields(obj) if isinstance(obj, dict) else frozenset()
        items: Iterable[tuple[Any, Any]] = obj.items() if isinstance(obj, dict) else enumerate(obj)
        later = []
        for key, item in list(items):
            if key in rule_text:
                later.append(key)  # after the user values beside it: a diagnosis quotes its captures
            elif isinstance(item, dict | list):
                self.value_in_place(item)
            elif isinstance(obj, dict):
                obj[key] = self._keyed(key, item)
            else:
                obj[key] = self.value(item)
        for key in later:
            assert isinstance(obj, dict)
            obj[key] = self._known_value(obj[key])

    def _keyed(self, key: Any, value: Any) -> Any:
        if isinstance(value, str) and str(key).lower() in self.c.secret_keys and not self._keep_secret(value):
            self._count("api-key")
            return "[REDACTED:api-key]"
        return self.value(value)

    def _known_value(self, obj: Any) -> Any:
        if isinstance(obj, str):
            return self.known_only(obj)
        if isinstance(obj, dict):
            return {k: self._known_value(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return type(obj)(self._known_value(v) for v in obj)
        return obj

    def model(self, m: M) -> M:
        """A copy of a pydantic model or a report dataclass with every string of user input redacted."""
        if not self.enabled:
            return m
        if is_dataclass(m):
            return rebuild(m, self.value(dump(m)))
        return type(m).model_validate(self.value(m.model_dump()))  # type: ignore[attr-defined]

    def learn(self, obj: Any) -> None:
        """Collect secret values from the user input in obj, so a key seen once is masked in every place."""
        if isinstance(obj, str):
            for _, pattern in self.c.secrets:
                for m in pattern.finditer(obj):
                    value = m.group("secret")
                    if value and len(value) >= 8 and not self._keep_secret(value):
                        self.add_secret(value)
        elif isinstance(obj, dict):
            rule_text = knowledge_fields(obj)
            for key, v in obj.items():
                if key in rule_text:
                    continue
                if isinstance(v, str) and str(key).lower() in self.c.secret_keys and not self._keep_secret(v):
                    self.add_secret(v)
                self.learn(v)
        elif isinstance(obj, list | tuple):
            for v in obj:
                self.learn(v)

    def learn_input(self, texts: Iterable[str]) -> None:
        """Read the user's own input (a pasted query, a command line) that the output does not
        quote itself, so rule text filled from it is redacted the same way. Nothing is counted
        here: only what the output then holds."""
        texts = [t for t in texts if t]
        self.learn(texts)
        self._read(texts)

    def learn_report(self, *data: Any) -> None:
        """Learn from dumped reports (and their templates) before redacting them or a text made
        from them: secrets anywhere in them, and stand-ins for the values their lines hold, so a
        host seen in a log line is replaced in a bare fact too. Nothing is counted."""
        self.learn(data)
        self._read(user_strings(data))

    def _read(self, texts: Iterable[str]) -> None:
        """Redact texts without counting, for the values they teach (`replaced`)."""
        self._counting = False
        try:
            for t in texts:
                self.text(t)
        finally:
            self._counting = True

    def add_secret(self, value: str) -> None:
        """Remember a secret value, so it is masked wherever it occurs."""
        value = value.strip("\"'")
        if value and value not in self.known:
            self.known.add(value)
            self._known_re = None

    def summary(self) -> RedactionSummary:
        """What was replaced so far, by category."""
        distinct = {category: len(values) for category, values in self.seen.items()}
        return RedactionSummary(enabled=self.enabled, counts=dict(self.counts), distinct=distinct)

    # -- stages ------------------------------------------------------------------------
    def _count(self, category: str, distinct: str | None = None) -> None:
        if self._counting:
            self.counts[category] = self.counts.get(category, 0) + 1
            if distinct is not None:
                self.seen.setdefault(category, set()).add(distinct)

    def _replaced(self, s: str) -> str:
        if not self.replaced:
            return s
        if self._replaced_re is None:
            alternatives = "|".join(regex.escape(v) for v in sorted(self.replaced, key=len, reverse=True))
            self._replaced_re = regex.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w-])")
        return self._replaced_re.sub(self._swap, s)

    def _swap(self, m: regex.Match[str]) -> str:
        new, category, distinct = self.replaced[m.group(0)]
        self._count(category, distinct if category in DISTINCT else None)
        return new

    def _replace_group(
        self,
        pattern: regex.Pattern[str],
        group: str,
        text: str,
        fn: Callable[[str], str | None],
        category: str | None = None,
        prefix: bool = False,
    ) -> str:
        """Replace the named group of each match with fn(value); None keeps the match as it was.
        With a category, the replaced value (with `prefix`, the match up to the group's end: the
        `/home/` of a user name) is remembered for rule text that quotes it."""

        def sub(m: regex.Match[str]) -> str:
            value = m.group(group)
            if value is None:
                return m.group(0)
            new = fn(value)
            if new is None:
                return m.group(0)
            whole, base = m.group(0), m.start()
            head, tail = whole[: m.start(group) - base], whole[m.end(group) - base :]
            if category is not None:
                key, stand_in = (head + value, head + new) if prefix else (value, new)
                if key not in self.replaced:
                    self.replaced[key] = (stand_in, category, value if prefix else new)
                    if "\\" in key:  # the same path quoted by repr or JSON: C:\\Users\\dana
                        doubled = (stand_in.replace("\\", "\\\\"), category, value if prefix else new)
                        self.replaced.setdefault(key.replace("\\", "\\\\"), doubled)
                    self._replaced_re = None
            return head + new + tail

        return pattern.sub(sub, text)

    def _content(self, s: str) -> str:
        if '"' in s:
            s = self._replace_group(self.c.json_value, "content", s, self._mask_content)
            s = self._replace_group(self.c.json_array, "content", s, self._mask_array)
        for pattern in self.c.content_lines:
            s = self._replace_group(pattern, "content", s, self._mask_content)
        if len(s) >= 16:
            s = self.c.base64.sub(self._mask_base64, s)
        return s

    def _mask_content(self, value: str) -> str | None:
        if not value or value.startswith("[REDACTED"):
            return None
        self._count(CONTENT)
        return f"[REDACTED {len(value)} chars]"

    def _mask_array(self, value: str) -> str:
        return self.c.string.sub(
            lambda m: '"' + (self._mask_content(m.group(0)[1:-1]) or m.group(0)[1:-1]) + '"', value
        )

    def _mask_base64(self, m: regex.Match[str]) -> str:
        self._count(BASE64)
        return f"[REDACTED base64, {len(m.group(0))} chars]"

    def _keep_secret(self, value: str) -> bool:
        bare = value.strip("\"'")
        return not bare or any(p.search(bare) for p in self.c.keep_secret)

    def _known_pattern(self) -> regex.Pattern[str]:
        if self._known_re is None:
            alternatives = "|".join(regex.escape(v) for v in sorted(self.known, key=len, reverse=True))
            self._known_re = regex.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")
        return self._known_re

    def _secrets(self, s: str) -> str:
        for category, pattern in self.c.secrets:

            def mask(value: str, category: str = category) -> str | None:
                if self._keep_secret(value):
                    return None
                self._count(category)
                return f"[REDACTED:{category}]"

            s = self._replace_group(pattern, "secret", s, mask, category)
        if self.known:
            s = self._known_pattern().sub(self._mask_known, s)
        return s

    def _mask_known(self, m: regex.Match[str]) -> str:
        self._count("api-key")
        return "[REDACTED:api-key]"

    def _paths(self, s: str) -> str:
        for pattern in self.c.paths:
            s = self._replace_group(pattern, "user", s, self._mask_user, USER, prefix=True)
        return s

    def _mask_user(self, user: str) -> str | None:
        if user in self.c.keep_user:
            return None
        self._count(USER, user)
        return USER_STAND_IN

    def _pseudonyms(self, s: str) -> str:
        for kind, pattern in self.c.pseudonyms:
            s = self._replace_group(pattern, "value", s, partial(self._stand_in, kind), LABELS[kind])
        return s

    def _kept(self, value: str) -> bool:
        low = value.lower()
        return low in self.c.keep_values or any(low.endswith("." + k) for k in self.c.keep_values)

    def _stand_in(self, kind: str, value: str) -> str | None:
        if self._kept(value) or regex.fullmatch(r"(?:ip-(?:priv|pub)|host|pod)-\d+", value):
            return None
        key = value.lower()
        if kind == "ip":
            try:
                ip = ipaddress.ip_address(value)
            except ValueError:
                return None  # a version number, a time of day, a MAC address
            if ip.is_loopback or ip.is_unspecified:
                return None
            key = str(ip)
        token = self.tokens.get((kind, key))
        if token is None:
            n = sum(1 for k, _ in self.tokens if k == kind) + 1
            token = f"ip-{'priv' if ip.is_private else 'pub'}-{n}" if kind == "ip" else f"{kind}-{n}"
            self.tokens[(kind, key)] = token
        self._count(LABELS[kind], token)
        return token


def redact_report(report: Report, redactor: Redactor | None = None) -> tuple[Report, RedactionSummary]:
    """The report with every log-derived string redacted (two passes: learn secrets, then mask)."""
    r = redactor or Redactor()
    if not r.enabled:
        return report, r.summary()
    data, summary = redact_data(dump(report), r)
    return rebuild(report, data), summary


def redact_data(data: dict[str, Any], redactor: Redactor | None = None) -> tuple[dict[str, Any], RedactionSummary]:
    """A dumped report, redacted in place (`explain -f json` writes it without building a
    second Report: a log of hundreds of runs would hold several copies at once)."""
    r = redactor or Redactor()
    if not r.enabled:
        return data, r.summary()
    for run in data.get("runs", []):
        for name in r.spec.secret_facts:
            value = run.get("facts", {}).get(name)
            if isinstance(value, str) and value:
                r.add_secret(value)
    r.learn_report(data)
    r.value_in_place(data)
    return data, r.summary()


def user_strings(obj: Any) -> Iterator[str]:
    """The strings of user input in a JSON-like value (what is not knowledge text)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        rule_text = knowledge_fields(obj)
        for key, v in obj.items():
            if key not in rule_text:
                yield from user_strings(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from user_strings(v)
