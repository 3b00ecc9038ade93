"""The rules' single-line signatures as Sigma rules (`llamadiag rules export --format sigma`).

One Sigma rule per llamadiag rule: each signature of one entry becomes a keyword regex selection
(`'|re': ...`) on the `llama.cpp`/`llama-server` log source, any of which fires it. Title, level
(from severity), description, references to the llama.cpp issues and PRs and to the rule's page
in docs/rules/ come from the rule. Multi-line signatures, conditions and version windows stay in
llamadiag: the alert says which instance to run `llamadiag explain` on.

A signature is left out, with its reason, when it spans several lines or when its regex uses what
RE2 (Loki's regex engine) lacks: lookarounds, backreferences, atomic groups, possessive
quantifiers, repeat counts over 1000. A rule with no signature left is listed as not exported.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import regex
import yaml

from llamadiag.knowledge.loader import Knowledge
from llamadiag.knowledge.rulemodel import Rule

LOGSOURCE = {"product": "llama.cpp", "service": "llama-server"}
LEVELS = {"info": "informational", "warning": "medium", "error": "high", "critical": "critical"}
# fixed namespace: a rule's Sigma id is the same on every export (uuid5 of its id)
_NAMESPACE = uuid.UUID("4f0d8c56-3b0e-5a8e-9a57-6c1f0d1a2b3c")
_RE2_REPEAT_MAX = 1000
# what RE2 does not have, found in the pattern's text outside character classes
_UNSUPPORTED = (
    (regex.compile(r"\(\?<?[=!]"), "a lookaround"),
    (regex.compile(r"\(\?>"), "an atomic group"),
    (regex.compile(r"\\[1-9]|\\g<|\(\?P="), "a backreference"),
    (regex.compile(r"(?:[*+?}])\+"), "a possessive quantifier"),
    (regex.compile(r"\\[ZGK]"), "an anchor RE2 lacks (\\Z, \\G, \\K)"),
    (regex.compile(r"\(\?[a-zA-Z]*x"), "verbose mode"),
)
# Python's escapes for a code point or a name; RE2 writes \x{2014} (odd run of backslashes only)
_PY_ESCAPE = regex.compile(r"(?<!\\)(?:\\\\)*\\[uUN]")
_GLOBAL_FLAGS = regex.compile(r"^\(\?([a-zA-Z]+)\)")
_CLASS = regex.compile(r"\[(?:\\.|[^\]\\])*\]")
_REPEAT = regex.compile(r"\{(\d+)(?:,(\d*))?\}")


@dataclass
class SigmaExport:
    """The Sigma rules of the exportable rules, and why the others (or some signatures) are left out."""

    rules: list[dict[str, Any]] = field(default_factory=list)
    rule_ids: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    partial: list[tuple[str, str]] = field(default_factory=list)

    def yaml(self) -> str:
        """All rules as one YAML stream, one document each."""
        return yaml.safe_dump_all(self.rules, sort_keys=False, allow_unicode=True, width=1000)


def re2_problem(pattern: str) -> str | None:
    """What keeps a Python regex from RE2, or None when RE2 takes it with the same meaning."""
    if _PY_ESCAPE.search(pattern):  # in a character class too
        return "uses a \\u, \\U or \\N escape, which RE2 (Loki) lacks (write the character itself)"
    outside = _CLASS.sub("[]", pattern)
    for finder, what in _UNSUPPORTED:
        if finder.search(outside):
            return f"uses {what}, which RE2 (Loki) lacks"
    for m in _REPEAT.finditer(outside):
        if any(int(g) > _RE2_REPEAT_MAX for g in m.groups() if g):
            return f"repeats more than {_RE2_REPEAT_MAX} times ({m.group(0)}), more than RE2 allows"
    return None


def scoped_flags(pattern: str) -> str:
    """A leading `(?i)` as a group `(?i:...)`: the backend ORs a rule's signatures into one regex,
    where a global flag would reach the other signatures too."""
    m = _GLOBAL_FLAGS.match(pattern)
    return f"(?{m.group(1)}:{pattern[m.end() :]})" if m else pattern


_NAMED_GROUP = regex.compile(r"(?<!\\)\(\?P<\w+>")


def unnamed_groups(pattern: str) -> str:
    """Named groups as plain groups: a filter captures nothing, and the backend ORs a rule's
    signatures into one regex, where two signatures naming the same value would clash."""
    return _NAMED_GROUP.sub("(?:", pattern)


def doc_url(rule: Rule, docs_url: str) -> str:
    """The rule's page under docs/rules/ (where its runbook is), below `docs_url`."""
    return f"{docs_url.rstrip('/')}/{rule.id}.md"


def _references(rule: Rule, docs_url: str) -> list[str]:
    urls = []
    for r in rule.references:
        if r.kind in ("issue", "pr"):
            urls.append(f"https://github.com/{r.repo}/{'pull' if r.kind == 'pr' else 'issues'}/{r.id}")
    urls.append(doc_url(rule, docs_url))
    return list(dict.fromkeys(urls))


def sigma_rule(rule: Rule, docs_url: str) -> tuple[dict[str, Any] | None, list[str]]:
    """(the Sigma rule or None, the reasons signatures were left out)."""
    selections: dict[str, Any] = {}
    left_out = []
    for sig in rule.signatures:
        if len(sig.entries) > 1:
            left_out.append(f"signature {sig.name!r} spans {len(sig.entries)} lines")
            continue
        pattern = sig.entries[0].regex
        problem = re2_problem(pattern)
        if problem:
            left_out.append(f"signature {sig.name!r} {problem}")
            continue
        selections[f"sig_{len(selections)}"] = {"|re": scoped_flags(unnamed_groups(pattern))}
    if not selections:
        return None, left_out
    description = " ".join(rule.summary.split())
    if left_out:
        description += " (Exported in part; llamadiag also knows: " + "; ".join(left_out) + ".)"
    description += f" Confirm with `llamadiag explain` on the instance's log ({rule.id})."
    return {
        "title": rule.title,
        "id": str(uuid.uuid5(_NAMESPACE, rule.id)),
        "status": "experimental",
        "description": description,
        "references": _references(rule, docs_url),
        "author": "llamadiag",
        "logsource": dict(LOGSOURCE),
        "detection": {**selections, "condition": "1 of sig_*" if len(selections) > 1 else "sig_0"},
        "falsepositives": ["A line alone is a first stage: llamadiag weighs the run's facts and build"],
        "level": LEVELS.get(rule.severity, "medium"),
    }, left_out


def sigma_export(k: Knowledge, docs_url: str = "docs/rules") -> SigmaExport:
    """Every loaded rule that has a single-line, RE2-compatible signature, as a Sigma rule."""
    out = SigmaExport()
    for loaded in k.rules:
        rule = loaded.rule
        doc, left_out = sigma_rule(rule, docs_url)
        if doc is None:
            out.skipped.append((rule.id, "; ".join(left_out)))
            continue
        out.rules.append(doc)
        out.rule_ids.append(rule.id)
        if left_out:
            out.partial.append((rule.id, "; ".join(left_out)))
    return out


def validate(text: str) -> list[str]:
    """pySigma's parse and its core validators over the exported YAML: the problems found."""
    from sigma.collection import SigmaCollection
    from sigma.validators.core import validators

    collection = SigmaCollection.from_yaml(text, collect_errors=True)
    problems = [f"{r.title}: {e}" for r in collection.rules for e in r.errors]
    for name, cls in validators.items():
        if name in ("filename_length", "duplicate_filename"):
            continue  # about rule files on disk, which a stream does not have
        validator = cls()
        for r in collection.rules:
            problems.extend(f"{r.title}: {name}: {issue}" for issue in validator.validate(r))
        problems.extend(f"{name}: {issue}" for issue in validator.finalize())
    return problems
