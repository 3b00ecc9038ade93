"""Rule checks beyond the schema, as small validator classes (pySigma style).

Each validator looks at one loaded rule and returns issues with a severity. `rules lint`
runs them all; the loader runs the `error` ones so that a broken rule never loads.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import ClassVar

from llamadiag.engine.literals import literals_for
from llamadiag.engine.templates import PLACEHOLDER, TemplateError, check_expression, names_in_expression
from llamadiag.knowledge.conditions import FACT_TESTS
from llamadiag.knowledge.loader import Knowledge, LoadedRule
from llamadiag.knowledge.patterns import PatternError, check_backtracking, compile_pattern


@dataclass
class Issue:
    """A lint problem of a rule file, with its line when known."""

    rule_id: str
    path: str
    line: int | None
    severity: str  # error | warning
    check: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: [{self.check}] {self.message}"


class Validator:
    """A lint check of one rule; subclasses name the check and implement `check`."""

    name: ClassVar[str] = ""
    severity: ClassVar[str] = "error"

    def __init__(self, k: Knowledge) -> None:
        self.k = k

    def issue(self, loaded: LoadedRule, loc: tuple, message: str) -> Issue:
        """An issue of this check at a location in the rule file."""
        from llamadiag.knowledge.yamlio import line_of

        return Issue(
            loaded.rule.id, str(loaded.path), line_of(loaded.positions, loc), self.severity, self.name, message
        )

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule."""
        raise NotImplementedError


def _patterns(loaded: LoadedRule) -> list[tuple[tuple, str, str | None]]:
    rule = loaded.rule
    out: list[tuple[tuple, str, str | None]] = []
    for si, sig in enumerate(rule.signatures):
        for ei, entry in enumerate(sig.entries):
            out.append((("signatures", si, "entries", ei, "regex"), entry.regex, entry.literal))
    for xi, excl in enumerate(rule.exclude_lines):
        out.append((("exclude_lines", xi, "regex"), excl.regex, excl.literal))
    return out


class Unfinished(Validator):
    """No TODO of the `rules new` skeleton may be left."""

    name = "unfinished"

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule: one per text that still holds a TODO."""
        from llamadiag.knowledge.rulemodel import DERIVED
        from llamadiag.ruletools.skeleton import MARK

        data = loaded.rule.model_dump(mode="json", by_alias=True)
        data["signatures"] = [s for s in data["signatures"] if DERIVED not in s["name"]]
        issues = []
        for loc, text in _texts(data, ()):
            if MARK in text:
                where = ".".join(str(p) for p in loc)
                issues.append(self.issue(loaded, loc, f"TODO left in {where}: {text.strip()[:100]}"))
        return issues


def _texts(value: object, loc: tuple) -> list[tuple[tuple, str]]:
    """Every string in a rule's data, with its location (keys and list indexes)."""
    if isinstance(value, str):
        return [(loc, value)]
    if isinstance(value, dict):
        return [t for key, item in value.items() for t in _texts(item, (*loc, key))]
    if isinstance(value, list):
        return [t for i, item in enumerate(value) for t in _texts(item, (*loc, i))]
    return []


class PatternSafety(Validator):
    """Patterns must compile, not backtrack catastrophically, and require a literal."""

    name = "pattern-safety"

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule."""
        issues = []
        for loc, source, literal in _patterns(loaded):
            try:
                compile_pattern(source)
                check_backtracking(source)
                lits = literals_for(source, literal)
                if (
                    literal
                    and not re.search(re.escape(literal), source.replace("\\", ""))
                    and not compile_pattern(source).search(literal)
                ):
                    pass  # literal may be a fragment the regex requires; checked by examples
                if any(len(x) < 4 for x in lits):
                    issues.append(self.issue(loaded, loc, f"literal {lits} is too short for the prefilter"))
            except PatternError as exc:
                issues.append(self.issue(loaded, loc, str(exc)))
        return issues


class LiteralStrength(Validator):
    """A prefilter literal should hold a letter: digits and punctuation alone (` 501`, `...: `)
    occur on most log lines, so every one of them stops the fast path (one such literal once cost
    the scan about a fifth of its speed). Long digit runs (Windows status codes) are rare enough."""

    name = "literal-strength"
    severity = "warning"
    MIN_LETTERLESS = 6  # significant characters a literal without letters needs

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule: one per pattern whose literal is letterless and short."""
        issues = []
        for loc, source, literal in _patterns(loaded):
            with contextlib.suppress(PatternError):
                for lit in literals_for(source, literal):
                    if not re.search("[A-Za-z]", lit) and len(lit.strip()) < self.MIN_LETTERLESS:
                        issues.append(
                            self.issue(
                                loaded, loc, f"literal {lit!r} has no letter: it occurs on most lines; "
                                "give a `literal:` with a word of the line"
                            )
                        )
        return issues


class CaptureNames(Validator):
    """Templates and `same` keys may only use names the rule can know."""

    name = "capture-names"

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule."""
        rule = loaded.rule
        issues = []
        fact_names = {f.name for f in self.k.facts} | {
            "build",
            "commit",
            "semver",
            "compiler",
            "target",
            "debug_build",
            "version_usable",
            "version_problem",
            "era",
            "build_min",
            "build_max",
            "wrappers",
        }
        for si, sig in enumerate(rule.signatures):
            groups: set[str] = {"slot_id", "task_id"}
            for entry in sig.entries:
                with contextlib.suppress(PatternError):
                    groups |= set(compile_pattern(entry.regex).groupindex)
            for key in sig.same:
                if key not in groups:
                    issues.append(
                        self.issue(
                            loaded,
                            ("signatures", si, "same"),
                            f"`same` names {key!r}, which no entry of this signature captures",
                        )
                    )
        all_groups: set[str] = {"slot_id", "task_id"}
        for sig in rule.signatures:
            for entry in sig.entries:
                with contextlib.suppress(PatternError):
                    all_groups |= set(compile_pattern(entry.regex).groupindex)
        derived = set(rule.derive)
        known = all_groups | derived | fact_names
        for name, expr in rule.derive.items():
            try:
                check_expression(expr)
            except TemplateError as exc:
                issues.append(self.issue(loaded, ("derive", name), str(exc)))
                continue
            for used in names_in_expression(expr) - known:
                issues.append(
                    self.issue(loaded, ("derive", name), f"derive {name!r} uses {used!r}, which nothing provides")
                )
        texts: list[tuple[tuple, str]] = [(("diagnosis",), rule.diagnosis)]
        texts += [(("remediation", i, "text"), s.text) for i, s in enumerate(rule.remediation)]
        texts += [(("remediation", i, "command"), s.command) for i, s in enumerate(rule.remediation) if s.command]
        for loc, text in texts:
            for name in PLACEHOLDER.findall(text):
                if name not in known and not name.startswith("flag."):
                    issues.append(
                        self.issue(loaded, loc, f"template uses {{{name}}}, which no capture, derive or fact provides")
                    )
        for i, cond in enumerate([*rule.conditions, *rule.exclusions]):
            group = "conditions" if i < len(rule.conditions) else "exclusions"
            idx = i if i < len(rule.conditions) else i - len(rule.conditions)
            for sub in [cond, *(cond.any_of or [])]:
                named = [("fact", sub.fact)] + [(t, getattr(sub, t)) for t in FACT_TESTS]
                for key, name in named:
                    if name and name not in fact_names and not name.startswith("flag."):
                        issues.append(self.issue(loaded, (group, idx, key), f"unknown fact {name!r}"))
        return issues


class References(Validator):
    """Well-formed references; fixed_in agrees with the fix reference's build."""

    name = "references"

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule."""
        rule = loaded.rule
        issues = []
        for i, ref in enumerate(rule.references):
            if ref.kind in ("issue", "pr", "discussion") and not re.fullmatch(r"\d{1,6}", ref.id):
                issues.append(self.issue(loaded, ("references", i, "id"), f"{ref.kind} id {ref.id!r} is not a number"))
            if ref.kind == "commit" and not re.fullmatch(r"[0-9a-f]{7,40}", ref.id):
                issues.append(self.issue(loaded, ("references", i, "id"), f"commit {ref.id!r} is not a hex hash"))
            if ref.build is not None and ref.role != "fix":
                issues.append(self.issue(loaded, ("references", i, "build"), "only a fix reference carries a build"))
            if not ref.confirmed and not ref.note:
                issues.append(
                    self.issue(
                        loaded, ("references", i), "an unconfirmed reference needs a note saying what is unknown"
                    )
                )
        fixes = [r for r in rule.references if r.role == "fix"]
        fixed_in = rule.versions.fixed_in
        if fixed_in is not None and fixed_in not in {r.build for r in fixes}:
            issues.append(
                self.issue(
                    loaded,
                    ("versions", "fixed_in"),
                    f"fixed_in b{fixed_in} is not the build of any role: fix reference",
                )
            )
        ids = [(r.kind, r.id) for r in rule.references]
        for dup in {x for x in ids if ids.count(x) > 1}:
            issues.append(self.issue(loaded, ("references",), f"reference {dup[0]} {dup[1]} is listed twice"))
        return issues


class Supersedes(Validator):
    """A rule may only supersede rules that exist."""

    name = "dangling-rule-reference"

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule."""
        known = {r.rule.id for r in self.k.rules}
        return [
            self.issue(loaded, ("supersedes", i), f"supersedes unknown rule {other!r}")
            for i, other in enumerate(loaded.rule.supersedes)
            if other not in known
        ]


class Verification(Validator):
    """A rule should carry machine checks, so `compare` can verify its fix."""

    name = "verification"
    severity = "warning"

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule."""
        rule = loaded.rule
        if not rule.verification.checks:
            return [
                self.issue(loaded, ("verification",), "no machine checks: `compare` cannot verify the fix from logs")
            ]
        return []


class Examples(Validator):
    """Each inline example must give the verdict it expects."""

    name = "examples"

    def check(self, loaded: LoadedRule) -> list[Issue]:
        """The issues of one rule."""
        from llamadiag.ruletools.selftest import run_examples

        issues = []
        for i, result in enumerate(run_examples(self.k, loaded)):
            if not result.ok:
                issues.append(self.issue(loaded, ("examples", i), f"example {result.name!r}: {result.detail}"))
        return issues


VALIDATORS: list[type[Validator]] = [
    Unfinished,
    PatternSafety,
    LiteralStrength,
    CaptureNames,
    References,
    Supersedes,
    Verification,
    Examples,
]


def lint(k: Knowledge, only: set[str] | None = None, skip: set[str] | None = None) -> list[Issue]:
    """Run the validators (those in `only`, without those in `skip`) on every rule."""
    issues: list[Issue] = []
    ids = [r.rule.id for r in k.rules]
    validators = [v(k) for v in VALIDATORS if (not only or v.name in only) and v.name not in (skip or set())]
    for loaded in k.rules:
        if ids.count(loaded.rule.id) > 1:
            issues.append(Issue(loaded.rule.id, str(loaded.path), None, "error", "duplicate-id", "duplicate rule id"))
        for v in validators:
            issues.extend(v.check(loaded))
    return issues
