"""From a signature match and a run's facts to a verdict.

Three-valued conditions: a fact known false rules the rule out; an unknown fact keeps
the finding below `confirmed` and becomes a question. Version windows apply regression
semantics: at or past `fixed_in`, the finding is a possible regression, not old advice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llamadiag.engine.facts import FactValue
from llamadiag.engine.findings import (
    ConditionOut,
    Evidence,
    FactUse,
    Finding,
    ReferenceOut,
    RuledOut,
    StepOut,
    WorkaroundOut,
)
from llamadiag.engine.matcher import Match
from llamadiag.engine.templates import derive_all, render, render_with_fallback
from llamadiag.knowledge.conditions import CONDITION_TESTS, FACT_TESTS
from llamadiag.knowledge.levels import Confidence
from llamadiag.knowledge.patterns import compile_pattern

if TYPE_CHECKING:  # the model classes are not built on a start-up cache hit
    from llamadiag.knowledge.rulemodel import Condition, Reference, Rule


@dataclass
class RuleHits:
    """The matches of one rule in one run: the best one, and how often it recurred."""

    best: Match
    count: int
    last_line: int


def expected_text(cond: Condition, facts: dict[str, FactValue] | None = None) -> str:
    """What a condition needs, in words as the rule file writes them: 'in [draft-mtp, mtp]',
    'equals true' (not Python's ['draft-mtp', 'mtp'] and True); a fact-to-fact test names the
    other fact and, when `facts` know it, its value: 'equals_fact n_ctx_train (131072)'."""
    words = []
    for name in CONDITION_TESTS:
        value = getattr(cond, name)
        if value is None:
            continue
        text = f"{name.rstrip('_')} {_yaml_words(value)}"
        other = facts.get(value) if facts is not None and name in FACT_TESTS else None
        if other is not None and other.value is not None:
            text += f" ({_yaml_words(other.value)})"
        words.append(text)
    return " and ".join(words) or "?"


def _yaml_words(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_yaml_words(v) for v in value) + "]"
    return str(value)


def check(cond: Condition, facts: dict[str, FactValue], used: dict[str, FactValue]) -> bool | None:
    """True, False, or None when the fact is unknown."""
    if cond.any_of is not None:
        results = [check(c, facts, used) for c in cond.any_of]
        if any(r is True for r in results):
            return True
        return False if all(r is False for r in results) else None
    assert cond.fact is not None
    fact = facts.get(cond.fact)
    if cond.given is not None:
        if not any(name.startswith("flag.") for name in facts):
            return None  # no command line: whether the option was given is not known
        if fact is not None:
            used[cond.fact] = fact
        return (fact is not None) == cond.given
    other_name = next((getattr(cond, n) for n in FACT_TESTS if getattr(cond, n) is not None), None)
    if other_name is not None:
        return _check_facts(cond, cond.fact, other_name, facts, used)
    if cond.exists is not None:
        if fact is not None:
            used[cond.fact] = fact
        return (fact is not None) == cond.exists
    if fact is None or fact.value is None:
        return None
    used[cond.fact] = fact
    value = fact.value
    values = value if isinstance(value, list) else [value]
    norm = _words(value)
    if cond.equals is not None:
        return str(cond.equals).lower() in norm
    if cond.in_ is not None:
        return any(str(x).lower() in norm for x in cond.in_)
    if cond.not_in is not None:
        return not any(str(x).lower() in norm for x in cond.not_in)
    if cond.matches is not None:
        return any(compile_pattern(cond.matches).search(str(v)) for v in values)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if cond.at_least is not None and number < cond.at_least:
        return False
    return not (cond.at_most is not None and number > cond.at_most)


def _check_facts(
    cond: Condition, name: str, other_name: str, facts: dict[str, FactValue], used: dict[str, FactValue]
) -> bool | None:
    """A fact compared with another fact: None when either side is unknown (or not comparable)."""
    left, right = facts.get(name), facts.get(other_name)
    if left is None or right is None or left.value is None or right.value is None:
        return None
    used[name], used[other_name] = left, right
    a, b = _number(left.value), _number(right.value)
    if cond.at_least_fact is not None or cond.at_most_fact is not None:
        if a is None or b is None:
            return None
        return a >= b if cond.at_least_fact is not None else a <= b
    # numbers compare as numbers (4096 == 4096.0), anything else as words, case-blind
    same = a == b if a is not None and b is not None else _words(left.value) == _words(right.value)
    return same if cond.equals_fact is not None else not same


def _number(value: Any) -> float | None:
    if isinstance(value, bool | list):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _words(value: Any) -> frozenset[str]:
    values = value if isinstance(value, list) else [value]
    return frozenset(str(v).lower() for v in values)


def _condition_name(cond: Condition) -> str:
    if cond.fact:
        return cond.fact
    return " or ".join(_condition_name(c) for c in cond.any_of or [])


def assess(
    version_question: str,
    rule: Rule,
    run_index: int,
    hits: RuleHits,
    facts: dict[str, FactValue],
    excluded_by: tuple[int, str] | None,
    snippet_question: str | None = None,
    elision_question: str | None = None,
) -> Finding | RuledOut:
    """Judge a rule's hits in a run against the facts: a finding, or the reason it is ruled out."""
    match = hits.best
    used: dict[str, FactValue] = {}
    cond_out: list[ConditionOut] = []
    questions: list[str] = []
    n_true = n_unknown = 0

    def ruled_out(reason: str) -> RuledOut:
        return RuledOut(rule_id=rule.id, run=run_index, reason=reason, evidence_line=match.first)

    if excluded_by is not None:
        return ruled_out(f"line {excluded_by[0]}: {excluded_by[1]}")
    for cond in rule.conditions:
        state = check(cond, facts, used)
        name = _condition_name(cond)
        shown = facts[cond.fact].value if cond.fact and cond.fact in facts else None
        cond_out.append(
            ConditionOut(
                fact=name,
                expected=expected_text(cond, facts),
                value=shown,
                status={True: "true", False: "false", None: "unknown"}[state],
            )
        )
        if state is False:
            return ruled_out(
                f"{name} is {shown!r}, but this rule needs {expected_text(cond, facts)}"
                + (f" ({cond.because})" if cond.because else "")
            )
        if state is None:
            n_unknown += 1
            questions.append(cond.question or f"What is {name} on this server?")
        else:
            n_true += 1
    if rule.needs_a_known_fact and rule.conditions and n_true == 0:
        # evidence lines other causes print too: with none of the facts known it is only a guess
        return ruled_out("none of the facts that tell this cause from the others is known")
    for cond in rule.exclusions:
        if check(cond, facts, used) is True:
            name = _condition_name(cond)
            shown = facts[cond.fact].value if cond.fact and cond.fact in facts else None
            return ruled_out(f"{name} is {shown!r}: {cond.because or 'excluded by the rule'}")

    lo = facts.get("build_min")
    hi = facts.get("build_max")
    lo_v = lo.value if lo else None
    hi_v = hi.value if hi else None
    versions = rule.versions
    if versions.introduced_in is not None and hi_v is not None and hi_v < versions.introduced_in:
        return ruled_out(f"the build (at most b{hi_v}) predates b{versions.introduced_in}, where this failure appeared")

    if not rule.conditions or n_unknown == 0:
        confidence = Confidence.confirmed
    elif n_true:
        confidence = Confidence.likely
    else:
        confidence = Confidence.possible
    if match.signature.partial and confidence is Confidence.confirmed:
        confidence = Confidence.likely
    if snippet_question is not None and confidence is Confidence.confirmed:
        # a snippet is never confirmed: what came before the excerpt could change the verdict
        confidence = Confidence.likely
        questions.append(snippet_question)
    if match.elided:
        # the evidence spans a cut in the paste: the lines cut out could change the match
        if confidence is Confidence.confirmed:
            confidence = Confidence.likely
        if elision_question:
            questions.append(elision_question)

    fix_ref = next((r for r in rule.references if r.role == "fix"), None)
    report_ref = next((r for r in rule.references if r.role == "report"), None)
    status, regression = _version_status(rule, facts, lo_v, hi_v, fix_ref, report_ref)
    if regression:
        confidence = Confidence.regression
    if versions.fixed_in is not None:
        known_past = lo_v is not None and lo_v >= versions.fixed_in
        known_before = hi_v is not None and hi_v < versions.fixed_in
        if not (known_past or known_before):
            # whether the user's build has the fix is itself an open condition
            questions.append(version_question.format(fixed=versions.fixed_in))
            if confidence is Confidence.confirmed:
                confidence = Confidence.likely

    if match.signature.shared is not None and confidence is not Confidence.possible:
        # a wording several causes print names this one only as a candidate, whatever the facts say
        confidence = Confidence.possible
        questions.append(match.signature.shared)

    scope: dict[str, Any] = {k: v.value for k, v in facts.items()}
    scope.update(match.values)
    scope.update(derive_all(rule.derive, scope))
    diagnosis = render_with_fallback(match.signature.diagnosis or rule.diagnosis, rule.diagnosis_fallback, scope)
    for name in ("build", "build_min", "build_max", "version_usable", "version_problem", "era"):
        if name in facts and versions.fixed_in is not None:
            used.setdefault(name, facts[name])

    return Finding(
        rule_id=rule.id,
        title=rule.title,
        category=rule.category,
        severity=rule.severity.value,
        confidence=confidence.value,
        run=run_index,
        summary=rule.summary.strip(),
        evidence=[Evidence(line=ln.number, text=ln.text, time=ln.time) for ln in match.lines],
        values={k: v for k, v in match.values.items()} | {k: scope[k] for k in rule.derive if k in scope},
        facts_used={k: FactUse.of(v) for k, v in used.items()},
        conditions=cond_out,
        count=hits.count,
        first_line=match.first,
        last_line=hits.last_line,
        references=[reference_out(r) for r in rule.references],
        fixed_in=versions.fixed_in,
        introduced_in=versions.introduced_in,
        version_status=status,
        diagnosis=diagnosis.strip(),
        root_cause=rule.root_cause.strip(),
        remediation=steps_out(rule, scope),
        workarounds=workarounds_out(rule),
        not_to_do=[t.strip() for t in rule.not_to_do],
        verification=[s.strip() for s in rule.verification.steps],
        questions=questions,
    )


def reference_out(r: Reference) -> ReferenceOut:
    """A rule reference as output, with its URL."""
    return ReferenceOut(**r.model_dump(), url=r.url)


def steps_out(rule: Rule, scope: dict[str, Any]) -> list[StepOut]:
    """The rule's remediation with captured values and facts filled in."""
    return [
        StepOut(
            text=render_with_fallback(s.text, s.fallback, scope).strip(),
            command=render(s.command, scope)[0] if s.command else None,
        )
        for s in rule.remediation
    ]


def workarounds_out(rule: Rule) -> list[WorkaroundOut]:
    """The rule's workarounds as output."""
    return [WorkaroundOut(text=w.text.strip(), caveat=w.caveat.strip(), command=w.command) for w in rule.workarounds]


def _version_status(
    rule: Rule, facts: dict[str, FactValue], lo: int | None, hi: int | None, fix_ref: Any, report_ref: Any
) -> tuple[str, bool]:
    v = rule.versions
    fix = f" by PR #{fix_ref.id}" if fix_ref is not None and fix_ref.kind == "pr" else ""
    problem = facts.get("version_problem")
    caveat = f" Note: {problem.value}." if problem else ""
    if v.fixed_in is None:
        return (v.fix_note or "No fixing build is known.").strip() + caveat, False
    if lo is not None and lo >= v.fixed_in:
        which = f"b{lo}" if lo == hi else f"at least b{lo}"
        report = f" of #{report_ref.id}" if report_ref is not None else ""
        return (
            f"Your build ({which}) already contains the fix{fix} (first in b{v.fixed_in}), yet the failure "
            f"shows: this is a possible regression{report}. Report it upstream with this log.{caveat}"
        ), True
    if hi is not None and hi < v.fixed_in:
        which = f"b{hi}" if lo == hi else f"at most b{hi} (from the log's shape)"
        return f"Fixed in b{v.fixed_in}{fix}; you run {which}: upgrade.{caveat}", False
    known = f" Your build is between b{lo} and b{hi}." if lo is not None and hi is not None else ""
    if lo is not None and hi is None:
        known = f" The log's shape says at least b{lo}, which does not settle it."
    return f"Fixed in b{v.fixed_in}{fix}; your build is not known.{known}{caveat}", False
