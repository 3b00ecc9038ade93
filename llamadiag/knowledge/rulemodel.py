"""Pydantic models of a rule file: the contract between knowledge (YAML) and engine.

One rule per file. Detection fields (signatures, conditions, exclusions, versions)
are kept apart from content fields (diagnosis, remediation, references ...).
The JSON Schema shipped to editors is generated from these classes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from llamadiag.knowledge.conditions import CONDITION_TESTS, FACT_TESTS
from llamadiag.knowledge.levels import Confidence, ReferenceUrl, Severity

__all__ = ["Confidence", "Severity"]  # re-exported: the scales live in levels.py (no pydantic)


class Strict(BaseModel):
    """Base: unknown keys are errors, so a typo in a rule file is caught."""

    # defer_build: validators are built on first validation, not at import; a cached,
    # already validated rule set (session.py) then never pays for them
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Entry(Strict):
    """One log entry a signature needs. `regex` is searched in the entry's text
    (continuation lines joined with newlines). Named groups become captured values."""

    regex: str
    literal: str | None = Field(
        None, description="Required substring used by the prefilter; derived from regex when absent."
    )
    level: Literal["I", "W", "E", "D"] | None = Field(
        None, description="Only entries printed at this level (when the log shows levels)."
    )
    distinctive: bool = Field(
        False,
        description=(
            "Only this failure prints this line: seen alone (a snippet, a log cut before the other "
            "entries) it still names the failure, at most 'likely' (the loader derives a partial "
            "signature from it)."
        ),
    )


# the name suffix of a signature the loader derived from a distinctive entry
DERIVED = "/alone"


class Signature(Strict):
    """Entries that must all occur in one run, in order, within `within` lines.
    A rule's signatures are alternatives (eras, wordings, partial pastes)."""

    name: str
    entries: list[Entry] = Field(min_length=1)
    within: int = Field(50, ge=1, description="Max physical lines from first to last entry.")
    same: list[str] = Field(
        default_factory=list,
        description="Captured names that must be equal across entries (keyed correlation, e.g. task_id).",
    )
    partial: bool = Field(False, description="A fragment of the full evidence: caps confidence at 'likely'.")
    shared: str | None = Field(
        None,
        description=(
            "Other causes print these lines too: a match by this signature alone is at most 'possible', "
            "and this question (what would tell the causes apart) is asked."
        ),
    )
    diagnosis: str | None = Field(
        None, description="Diagnosis for this signature, replacing the rule's (a distinct sub-case)."
    )


class Condition(Strict):
    """A test on a fact. Unknown facts make a question instead of a verdict."""

    fact: str | None = None
    any_of: list[Condition] | None = None
    equals: Any = None
    in_: list[Any] | None = Field(None, alias="in")
    not_in: list[Any] | None = None
    at_least: float | None = None
    at_most: float | None = None
    matches: str | None = None
    exists: bool | None = None
    # fact-to-fact comparisons: the other side is a fact's name, not a constant; either side
    # unknown makes the condition unknown (a question), never false
    equals_fact: str | None = Field(None, description="Another fact this fact must equal (n_ctx vs n_ctx_train).")
    not_equals_fact: str | None = Field(None, description="Another fact this fact must differ from.")
    at_least_fact: str | None = Field(None, description="Another fact this number must reach (>=).")
    at_most_fact: str | None = Field(None, description="Another fact this number must not pass (<=).")
    given: bool | None = Field(
        None,
        description=(
            "Only with a `flag.<name>` fact: whether the option was on the command line. Unknown "
            "(a question) when the run has no command line, unlike `exists`."
        ),
    )
    question: str | None = Field(None, description="Asked when the fact is unknown.")
    because: str | None = Field(None, description="Why this condition matters (shown with --why).")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _one_subject(self) -> Condition:
        if (self.fact is None) == (self.any_of is None):
            raise ValueError("a condition needs exactly one of 'fact' or 'any_of'")
        tests = [name for name in CONDITION_TESTS if getattr(self, name) is not None]
        if len(tests) > 1 and not set(tests) <= {"at_least", "at_most"}:
            shown = ", ".join(t.rstrip("_") for t in tests)
            raise ValueError(f"a condition makes one test, this one makes several: {shown}")
        if self.any_of is not None and tests:
            raise ValueError("an any_of condition tests nothing itself: put the tests in its sub-conditions")
        if self.given is not None and not (self.fact or "").startswith("flag."):
            raise ValueError("'given' applies to a command-line option: write the fact as flag.<name>")
        for name in FACT_TESTS:
            other = getattr(self, name)
            if other is not None and other == self.fact:
                raise ValueError(f"{name} compares {other!r} with itself")
        return self


class LineExclusion(Strict):
    """A line that, present in the run, means this rule is not the cause."""

    regex: str
    literal: str | None = None
    because: str


class Versions(Strict):
    """The builds a failure affects: introduced in, fixed in, or a note on the fix."""

    introduced_in: int | None = Field(None, description="First build that can show the failure.")
    fixed_in: int | None = Field(None, description="First build that contains the fix.")
    fix_note: str | None = Field(None, description="Required when fixed_in is null: what is known about the fix.")

    @model_validator(mode="after")
    def _fix_explained(self) -> Versions:
        if self.fixed_in is None and not self.fix_note:
            raise ValueError("fixed_in is null: say what is known in fix_note")
        return self


class Reference(Strict, ReferenceUrl):
    """An issue, PR, commit, discussion or doc about the failure."""

    kind: Literal["issue", "pr", "commit", "discussion", "doc"]
    id: str
    role: Literal["report", "fix", "related", "cause", "workaround"]
    title: str | None = None
    build: int | None = Field(None, description="For a fix: the first build that contains it.")
    confirmed: bool = Field(True, description="False when the fact could not be checked in the sources.")
    note: str | None = None
    repo: str = "ggml-org/llama.cpp"


class Step(Strict):
    """A remediation step, with an optional command and fallback text."""

    text: str
    command: str | None = None
    fallback: str | None = Field(None, description="Shown instead of text when a value the text uses is unknown.")


class Workaround(Strict):
    """A workaround until the fix, with its caveat."""

    text: str
    caveat: str
    command: str | None = None


class Check(Strict):
    """A machine check of a fix, evaluated by `llamadiag compare BEFORE AFTER`."""

    kind: Literal["signature_absent", "line_present", "throughput_within", "no_errors"]
    regex: str | None = None
    tolerance: float | None = Field(None, description="For throughput_within: allowed relative drop.")
    text: str


class Verification(Strict):
    """How to verify a fix: steps for the user and machine checks."""

    steps: list[str] = Field(min_length=1)
    checks: list[Check] = Field(default_factory=list)


class Example(Strict):
    """An inline log snippet and the verdict the rule must give on it."""

    name: str
    expect: Literal["confirmed", "regression", "likely", "possible", "none"]
    log: str
    cmdline: str | None = None
    version_text: str | None = None
    values: dict[str, Any] = Field(default_factory=dict)


class Rule(Strict):
    """A rule: the failure's signatures, conditions, diagnosis, remediation and references."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    category: str
    severity: Severity
    summary: str = Field(description="One sentence: what the user sees.")
    signatures: list[Signature] = Field(min_length=1)
    conditions: list[Condition] = Field(default_factory=list)
    exclusions: list[Condition] = Field(default_factory=list, description="A fact known true here rules the rule out.")
    needs_a_known_fact: bool = Field(
        False,
        description=(
            "The rule stays silent (listed as ruled out) unless at least one of its conditions is known "
            "true: for a cause whose evidence lines other causes print too, so that with every fact "
            "unknown it would only be a guess next to theirs."
        ),
    )
    exclude_lines: list[LineExclusion] = Field(default_factory=list)
    supersedes: list[str] = Field(
        default_factory=list, description="Rule ids hidden when this rule fits the same evidence."
    )
    supersedes_scope: Literal["evidence", "run"] = Field(
        "evidence",
        description="evidence: hide the other finding only where its lines fall inside this one's; "
        "run: anywhere in the same run (a cause printed at startup, its symptom later).",
    )
    versions: Versions
    derive: dict[str, str] = Field(default_factory=dict, description="Named arithmetic over captured values and facts.")
    diagnosis: str
    diagnosis_fallback: str | None = Field(
        None, description="Diagnosis used when a value the diagnosis names is unknown (a partial paste)."
    )
    root_cause: str
    references: list[Reference] = Field(default_factory=list)
    remediation: list[Step] = Field(min_length=1)
    workarounds: list[Workaround] = Field(default_factory=list)
    verification: Verification
    not_to_do: list[str] = Field(default_factory=list, description="Advice that looks right but does not work.")
    examples: list[Example] = Field(min_length=2)

    @model_validator(mode="after")
    def _examples_both_ways(self) -> Rule:
        kinds = {e.expect == "none" for e in self.examples}
        if kinds != {True, False}:
            raise ValueError("examples need at least one positive and one negative (expect: none)")
        return self

    @model_validator(mode="after")
    def _partial_evidence(self) -> Rule:
        """Each distinctive entry of a multi-entry signature also stands alone, as a partial
        signature listed after the rule's own (so a complete match always ranks first)."""
        own = {(s.entries[0].regex,) for s in self.signatures if len(s.entries) == 1}
        derived = []
        for sig in self.signatures:
            if len(sig.entries) < 2 or sig.name.endswith(DERIVED):
                continue
            for i, entry in enumerate(sig.entries):
                if entry.distinctive and (entry.regex,) not in own:
                    own.add((entry.regex,))
                    name = f"{sig.name}{DERIVED}-{i + 1}"
                    alone = Signature(name=name, entries=[entry], within=1, partial=True, diagnosis=sig.diagnosis)
                    derived.append(alone)
        self.signatures.extend(derived)
        return self


# Condition refers to itself (any_of); with defer_build pydantic resolves it on first use
