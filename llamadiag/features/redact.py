"""Redaction of shareable output: secrets, prompt/response text, network identities, user names.

What is sensitive and how it is replaced lives in rules/formats/redaction.yaml; this module
only applies it. API (used by the CLI commands and the desk):

    redactor = Redactor()                  # one per output, so stand-ins stay consistent in it
    redactor.learn(obj)                    # optional first pass: secrets seen anywhere are masked everywhere
    redactor.text(s) -> str                # one string
    redactor.value(obj) -> obj             # dicts, lists, tuples, strings (other values kept)
    redactor.model(m) -> m                 # a pydantic model, re-validated
    redactor.summary() -> RedactionSummary # counts per category; .line() is the closing line
    redact_report(report) -> (Report, RedactionSummary)

Redaction is best-effort (regular expressions); the closing line says so.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, TypeVar

import regex
from pydantic import BaseModel, Field

from llamadiag.engine.findings import Report
from llamadiag.knowledge.formatmodel import RedactionSpec
from llamadiag.knowledge.formats import builtin_format

M = TypeVar("M", bound=BaseModel)
FLAGS = regex.MULTILINE
CONTENT = "prompt/response text"
BASE64 = "base64 payload"
USER = "user name in paths"
LABELS = {"ip": "IP address", "host": "host name", "pod": "pod name"}




class RedactionSummary(BaseModel):
    """What was replaced, for the closing line of a shareable output (and the JSON beside it)."""

    enabled: bool = True
    counts: dict[str, int] = Field(default_factory=dict)
    distinct: dict[str, int] = Field(default_factory=dict)

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


def _replace_group(pattern: regex.Pattern[str], group: str, text: str, fn: Callable[[str], str | None]) -> str:
    """Replace the named group of each match with fn(value); None keeps the match as it was."""

    def sub(m: regex.Match[str]) -> str:
        value = m.group(group)
        if value is None:
            return m.group(0)
        new = fn(value)
        if new is None:
            return m.group(0)
        whole, base = m.group(0), m.start()
        return whole[: m.start(group) - base] + new + whole[m.end(group) - base :]

    return pattern.sub(sub, text)


class Redactor:
    """Replaces keys, prompts, paths, user names and addresses with stand-ins."""

    def __init__(self, spec: RedactionSpec | None = None, enabled: bool = True) -> None:
        self.spec = spec or builtin_format(RedactionSpec)
        self.enabled = enabled
        self.c = _compiled(self.spec)
        self.counts: dict[str, int] = {}
        self.tokens: dict[tuple[str, str], str] = {}  # (kind, value) -> stand-in
        self.users: set[str] = set()
        self.known: set[str] = set()  # secret values to mask wherever they occur
        self._known_re: regex.Pattern[str] | None = None

    # -- public API -------------------------------------------------------------------
    def text(self, s: str) -> str:
        """The string with content (prompts), secrets, paths and pseudonymised names replaced."""
        if not self.enabled or not s:
            return s
        s = self._content(s)
        s = self._secrets(s)
        s = self._paths(s)
        return self._pseudonyms(s)

    def value(self, obj: Any) -> Any:
        """A copy of a JSON-like value with every string redacted (keys decide for some values)."""
        if not self.enabled:
            return obj
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {k: self._keyed(k, v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return type(obj)(self.value(v) for v in obj)
        return obj

    def value_in_place(self, obj: dict[str, Any] | list[Any]) -> None:
        """As `value`, changing the containers of a dumped report instead of copying them."""
        items: Iterable[tuple[Any, Any]] = obj.items() if isinstance(obj, dict) else enumerate(obj)
        for key, item in list(items):
            if isinstance(item, dict | list):
                self.value_in_place(item)
            elif isinstance(obj, dict):
                obj[key] = self._keyed(key, item)
            else:
                obj[key] = self.value(item)

    def _keyed(self, key: Any, value: Any) -> Any:
        if isinstance(value, str) and str(key).lower() in self.c.secret_keys and not self._keep_secret(value):
            self._count("api-key")
            return "[REDACTED:api-key]"
        return self.value(value)

    def model(self, m: M) -> M:
        """A copy of a pydantic model with every string redacted."""
        if not self.enabled:
            return m
        return type(m).model_validate(self.value(m.model_dump()))

    def learn(self, obj: Any) -> None:
        """Collect secret values from obj, so a key seen once is masked in every place."""
        if isinstance(obj, str):
            for _, pattern in self.c.secrets:
                for m in pattern.finditer(obj):
                    value = m.group("secret")
                    if value and len(value) >= 8 and not self._keep_secret(value):
                        self.add_secret(value)
        elif isinstance(obj, dict):
            for key, v in obj.items():
                if isinstance(v, str) and str(key).lower() in self.c.secret_keys and not self._keep_secret(v):
                    self.add_secret(v)
                self.learn(v)
        elif isinstance(obj, list | tuple):
            for v in obj:
                self.learn(v)

    def add_secret(self, value: str) -> None:
        """Remember a secret value, so it is masked wherever it occurs."""
        value = value.strip("\"'")
        if value and value not in self.known:
            self.known.add(value)
            self._known_re = None

    def summary(self) -> RedactionSummary:
        """What was replaced so far, by category."""
        distinct: dict[str, int] = {}
        for kind, _ in self.tokens:
            label = LABELS[kind]
            distinct[label] = distinct.get(label, 0) + 1
        if self.users:
            distinct[USER] = len(self.users)
        return RedactionSummary(enabled=self.enabled, counts=dict(self.counts), distinct=distinct)

    # -- stages ------------------------------------------------------------------------
    def _count(self, category: str) -> None:
        self.counts[category] = self.counts.get(category, 0) + 1

    def _content(self, s: str) -> str:
        if '"' in s:
            s = _replace_group(self.c.json_value, "content", s, self._mask_content)
            s = _replace_group(self.c.json_array, "content", s, self._mask_array)
        for pattern in self.c.content_lines:
            s = _replace_group(pattern, "content", s, self._mask_content)
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

    def _secrets(self, s: str) -> str:
        for category, pattern in self.c.secrets:

            def mask(value: str, category: str = category) -> str | None:
                if self._keep_secret(value):
                    return None
                self._count(category)
                return f"[REDACTED:{category}]"

            s = _replace_group(pattern, "secret", s, mask)
        if self.known:
            if self._known_re is None:
                alternatives = "|".join(regex.escape(v) for v in sorted(self.known, key=len, reverse=True))
                self._known_re = regex.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")
            s = self._known_re.sub(self._mask_known, s)
        return s

    def _mask_known(self, m: regex.Match[str]) -> str:
        self._count("api-key")
        return "[REDACTED:api-key]"

    def _paths(self, s: str) -> str:
        for pattern in self.c.paths:
            s = _replace_group(pattern, "user", s, self._mask_user)
        return s

    def _mask_user(self, user: str) -> str | None:
        if user in self.c.keep_user:
            return None
        self.users.add(user)
        self._count(USER)
        return "<user>"

    def _pseudonyms(self, s: str) -> str:
        for kind, pattern in self.c.pseudonyms:
            s = _replace_group(pattern, "value", s, partial(self._stand_in, kind))
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
        self._count(LABELS[kind])
        return token


def redact_report(report: Report, redactor: Redactor | None = None) -> tuple[Report, RedactionSummary]:
    """The report with every log-derived string redacted (two passes: learn secrets, then mask)."""
    r = redactor or Redactor()
    if not r.enabled:
        return report, r.summary()
    data, summary = redact_data(report.model_dump(), r)
    return Report.model_validate(data), summary


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
    r.learn(data)
    r.value_in_place(data)
    return data, r.summary()
