"""Scoring the rules for a lookup query; every score comes with the reasons behind it.

Bands (score 0-100), most reliable first:
  95-100 named: the query gives the rule id, or an issue/PR/commit the rule references
  85-95  signature: the engine found the rule's signature in the paste (by confidence)
  70-84  partial: some entries of a signature match pasted lines
  50-69  applies: the rule's conditions and version window hold for the known build/flags
  0-49   words: the word search (lookup_index.py), relative to the best word match
A rule that a known fact rules out (a flag, an exclusion, a build before the failure
appeared) keeps its reasons but has its score halved. Within a band the word score and the
number of conditions known true break ties.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llamadiag.engine.envelope import EnvelopeParser
from llamadiag.engine.facts import FactValue
from llamadiag.engine.findings import Finding, Report, reference_label
from llamadiag.engine.literals import LiteralIndex, index_for
from llamadiag.engine.reasoning import check, expected_text
from llamadiag.features.lookup.index import text_index
from llamadiag.features.lookup.query import Query
from llamadiag.knowledge.loader import Knowledge

if TYPE_CHECKING:  # the rules are light copies from the start-up cache
    from llamadiag.knowledge.rulemodel import Condition, Rule

ROLE_SCORE = {"report": 98.0, "fix": 98.0, "cause": 93.0, "workaround": 92.0, "related": 90.0}
CONFIDENCE_SCORE = {"confirmed": 95.0, "regression": 94.0, "likely": 92.0, "possible": 90.0}
ROLE_WORDS = {
    "report": "its report",
    "fix": "its fix",
    "cause": "its cause",
    "related": "related",
    "workaround": "a workaround",
}
MAX_LINES = 20000
TRUNCATED_LINES = 20  # the cut-paste check runs on short pastes only
TRUNCATED_MIN = 12
WORDS_TOP = 49.0  # the best word match; the words band ends below the applies band
WORD_MIN = 0.3  # word matches below this share of the best one are dropped


@dataclass
class Candidate:
    """A rule that may answer a lookup, its score and the reasons for it."""

    rule_id: str
    score: float = 0.0
    reasons: list[tuple[float, str]] = field(default_factory=list)
    named: list[str] = field(default_factory=list)
    finding: Finding | None = None
    values: dict[str, Any] = field(default_factory=dict)
    applies: bool | None = None
    affects_build: bool | None = None
    build_status: str = ""
    questions: list[str] = field(default_factory=list)
    words: float = 0.0
    known_true: float = 0.0
    warnings: list[str] = field(default_factory=list)  # shown first: ruled out, already fixed

    def add(self, score: float, why: str) -> None:
        """Add a reason; the score is the strongest reason's."""
        self.score = max(self.score, score)
        self.reasons.append((score, why))

    @property
    def why(self) -> list[str]:
        """Warnings first, then the reasons, strongest first."""
        return self.warnings + [w for _, w in sorted(self.reasons, key=lambda r: -r[0])]


def rank(k: Knowledge, q: Query, report: Report, facts: dict[str, FactValue]) -> list[Candidate]:
    """The rules that may answer the query, best first (those with a score above zero)."""
    cands: dict[str, Candidate] = {}

    def cand(rule_id: str) -> Candidate:
        return cands.setdefault(rule_id, Candidate(rule_id))

    _named(k, q, cand)
    _signatures(report, cand)
    _partial(k, q, cands, cand)
    _applicability(k, facts, cands, cand)
    _words(q, k, cands, cand)
    for c in cands.values():
        if c.score > c.words:  # tie-breaks inside a stronger band; a words-only match stays below 50
            c.score += min(4.0, c.words * 0.08) + min(2.0, c.known_true * 0.5)
        if c.applies is False:
            c.score *= 0.5
    ordered = sorted(cands.values(), key=lambda c: (-c.score, c.rule_id))
    return [c for c in ordered if c.score > 0]


def _named(k: Knowledge, q: Query, cand: Any) -> None:
    for word in q.rule_words:
        if k.rule(word) is not None:
            c = cand(word)
            c.add(100.0, f"the query names rule {word}")
            c.named.append(word)
    for loaded in k.rules:
        for ref in loaded.rule.references:
            for asked in q.refs:
                same = ref.id == asked or (
                    ref.kind == "commit" and len(asked) >= 7 and (ref.id.startswith(asked) or asked.startswith(ref.id))
                )
                if not same:
                    continue
                c = cand(loaded.rule.id)
                label = reference_label(ref.kind, ref.id, ref.repo, None)
                text = f"{'issue ' if ref.kind == 'issue' else ''}{label} is {ROLE_WORDS.get(ref.role, ref.role)}"
                if ref.role == "fix" and ref.build:
                    text += f" (first in b{ref.build})"
                if ref.title:
                    text += f": {ref.title}"
                c.add(ROLE_SCORE.get(ref.role, 90.0), text)
                c.named.append(asked)


def _signatures(report: Report, cand: Any) -> None:
    for i, f in enumerate(report.findings):
        c = cand(f.rule_id)
        if c.finding is None:
            c.finding, c.values = f, dict(f.values)
        lines = f"line {f.first_line}" if f.first_line == f.last_line else f"lines {f.first_line}-{f.last_line}"
        c.add(
            CONFIDENCE_SCORE.get(f.confidence, 90.0) - 0.01 * i,
            f"its signature matches the pasted {lines} ({f.confidence})",
        )
    for r in report.ruled_out:
        c = cand(r.rule_id)
        c.add(60.0, f"its signature matches pasted line {r.evidence_line}")
        c.warnings.append(f"ruled out for this setup: {r.reason}")
        c.applies = False


def _partial(k: Knowledge, q: Query, cands: dict[str, Candidate], cand: Any) -> None:
    """Entries of signatures found in the paste, for rules with no full match. An entry counts
    fully when its regex matches a line, half when only its literal occurs (an echo the regex
    excludes), and 0.4 when a line ends in the literal's first 12+ characters (a cut paste)."""
    credit: dict[tuple[int, int], dict[int, tuple[float, int, str]]] = {}

    def give(key: tuple[int, int], entry_i: int, value: float, number: int, text: str) -> None:
        entries = credit.setdefault(key, {})
        if value > entries.get(entry_i, (0.0, 0, ""))[0]:
            entries[entry_i] = (value, number, text)

    envelope, index = _reader_for(k)
    texts: list[tuple[int, str]] = []
    for number, raw in enumerate(q.lines[:MAX_LINES], 1):
        line, _ = envelope.peel(number, raw)
        if line is None:
            continue
        texts.append((number, line.text))
        for t in index.targets(line.text):
            if t.kind == "sig":
                rule_i, sig_i, entry_i = t.ref
                if t.pattern.search(line.text):
                    give((rule_i, sig_i), entry_i, 1.0, number, line.text)
                elif len(t.literal) >= TRUNCATED_MIN:  # a short literal ("failed") says nothing alone
                    give((rule_i, sig_i), entry_i, 0.5, number, line.text)
    if len(texts) <= TRUNCATED_LINES:
        for lit, targets in index.by_literal.items():
            if len(lit) <= TRUNCATED_MIN:
                continue
            for number, text in texts:
                if any(text.endswith(lit[:m]) for m in range(len(lit) - 1, TRUNCATED_MIN - 1, -1)):
                    for t in targets:
                        if t.kind == "sig":
                            give((t.ref[0], t.ref[1]), t.ref[2], 0.4, number, text)
    best: dict[int, tuple[float, int, dict[int, tuple[float, int, str]]]] = {}
    for (rule_i, sig_i), entries in credit.items():
        share = sum(v for v, _, _ in entries.values()) / len(k.rules[rule_i].rule.signatures[sig_i].entries)
        if share > best.get(rule_i, (0.0, 0, {}))[0]:
            best[rule_i] = (share, sig_i, entries)
    for rule_i, (share, sig_i, entries) in best.items():
        rule = k.rules[rule_i].rule
        if rule.id in cands and cands[rule.id].finding is not None:
            continue
        sig = rule.signatures[sig_i]
        _, number, text = min(entries.values(), key=lambda e: e[1])
        quoted = text if len(text) <= 100 else text[:97] + "..."
        how = "matches" if all(v == 1.0 for v, _, _ in entries.values()) else "partly matches"
        cand(rule.id).add(
            72.0 + 12.0 * share,
            f"pasted line {number} {how} {len(entries)} of {len(sig.entries)} entries of its signature "
            f'{sig.name}: "{quoted}"',
        )


def _applicability(k: Knowledge, facts: dict[str, FactValue], cands: dict[str, Candidate], cand: Any) -> None:
    if not facts:
        return
    absent = {f.name: f.flag for f in k.facts if f.flag}
    lo = facts["build_min"].value if "build_min" in facts else None
    hi = facts["build_max"].value if "build_max" in facts else None
    for loaded in k.rules:
        rule = loaded.rule
        used: dict[str, FactValue] = {}
        states = [check(c, facts, used) for c in rule.conditions]
        true_names = sorted(used)
        false_at = next((c for c, s in zip(rule.conditions, states, strict=True) if s is False), None)
        excl = next((c for c in rule.exclusions if check(c, facts, {}) is True), None)
        status, affects, before_intro = version_verdict(rule, lo, hi)
        known_true = sum(
            _specificity(c) * (0.25 if _from_absence(c, facts, absent) else 1.0)
            for c, s in zip(rule.conditions, states, strict=True)
            if s
        )
        windowed = affects is True and rule.versions.fixed_in is not None
        if rule.id not in cands and not known_true and not windowed:
            continue
        c = cand(rule.id)
        c.build_status, c.affects_build, c.known_true = status, affects, known_true
        c.questions = [
            cond.question for cond, s in zip(rule.conditions, states, strict=True) if s is None and cond.question
        ]
        reasons = []
        if false_at is not None:
            reasons.append(f"{_fact_text(false_at.fact, facts)}, but it needs {expected_text(false_at)}")
        if excl is not None:
            reasons.append(f"{_fact_text(excl.fact, facts)}: {(excl.because or 'excluded').strip()}")
        if before_intro:
            reasons.append(status)
        if reasons:
            if c.applies is not False:  # the engine's own ruled-out reason is already there
                c.warnings.append("ruled out for this setup: " + "; ".join(reasons))
            c.applies = False
            continue
            c.warnings.append("ruled out for this setup: " + "; ".join(reasons))
            continue
        if c.applies is None and states and all(states):
            c.applies = True
        if known_true:
            held = ", ".join(_fact_text(n, facts) for n in true_names)
            n_true = sum(1 for s in states if s)
            share = (
                "its condition holds"
                if len(states) == 1
                else f"all {len(states)} conditions hold"
                if all(states)
                else f"{n_true} of {len(states)} conditions hold"
            )
            c.add(55.0 + 3.0 * min(known_true, 4.0) + (2.0 if windowed else 0.0), f"{share}: {held}")
        if windowed:
            c.add(51.0, status)
        elif affects is False and rule.versions.fixed_in is not None:
            c.warnings.append(status)


def version_verdict(rule: Rule, lo: int | None, hi: int | None) -> tuple[str, bool | None, bool]:
    """(what the build means for this rule, whether the build is in its window, build predates it)."""
    v = rule.versions
    fix = next((r for r in rule.references if r.role == "fix"), None)
    by = f" by PR #{fix.id}" if fix is not None and fix.kind == "pr" else ""
    build = f"b{lo}" if lo is not None and lo == hi else None
    if lo is None and hi is None:
        if v.fixed_in is not None:
            return (
                f"Fixed in b{v.fixed_in}{by}; give the build (`llama-server --version`) to know if it has the fix.",
                None,
                False,
            )
        return (v.fix_note or "No fixing build is known.").strip(), None, False
    if v.introduced_in is not None and hi is not None and hi < v.introduced_in:
        return f"Appeared in b{v.introduced_in}; {build or f'at most b{hi}'} predates it.", False, True
    if v.fixed_in is None:
        affects = True if v.introduced_in is not None and lo is not None and lo >= v.introduced_in else None
        return (v.fix_note or "No fixing build is known.").strip(), affects, False
    if lo is not None and lo >= v.fixed_in:
        return f"Fixed in b{v.fixed_in}{by}: {build or f'at least b{lo}'} already has the fix.", False, False
    if hi is not None and hi < v.fixed_in:
        return (
            f"Fixed in b{v.fixed_in}{by}; {build or f'at most b{hi}'} lacks it: upgrade to b{v.fixed_in} or later.",
            True,
            False,
        )
    return f"Fixed in b{v.fixed_in}{by}; the build is between b{lo} and b{hi}, which does not settle it.", None, False


def _from_absence(cond: Condition, facts: dict[str, FactValue], flag_of: dict[str, str]) -> bool:
    """A fact known only because a flag or a startup line is missing: weak evidence in a query."""
    if cond.fact is None:
        return False
    fact = facts.get(cond.fact)
    if fact is None:
        return False
    return fact.source == "absent" or (cond.fact in flag_of and f"flag.{flag_of[cond.fact]}" not in facts)


def _specificity(cond: Condition) -> float:
    """How much a true condition says: a named value more than "anything but none"."""
    if cond.any_of is not None:
        return min((_specificity(c) for c in cond.any_of), default=0.5)
    if cond.equals is not None or cond.in_ is not None:
        return 1.0
    if cond.not_in is not None or cond.exists is not None:
        return 0.5
    return 0.8


def _fact_text(name: str | None, facts: dict[str, FactValue]) -> str:
    if name is None:
        return "a combination of facts"
    fact = facts.get(name)
    if fact is None:
        return name
    where = {"cmdline": "from the flags", "build-option": "from --build", "version-text": "from the version"}.get(
        fact.source, f"line {fact.line}" if fact.line else fact.source
    )
    return f"{name} = {fact.value} ({where})"


def _words(q: Query, k: Knowledge, cands: dict[str, Candidate], cand: Any) -> None:
    if not q.search_text.strip():
        return
    hits = text_index(k).search(q.search_text)
    if not hits:
        return
    top = max(h.score for h in hits.values())
    for rule_id, hit in hits.items():
        share = hit.score / top
        if share < WORD_MIN and rule_id not in cands:
            continue
        c = cand(rule_id)
        c.words = WORDS_TOP * share
        shown = []
        for qword, (word, how, fields) in sorted(hit.matched.items(), key=lambda kv: -len(kv[1][2]))[:6]:
            label = word if how == "exact" else f"{qword}~{word} ({how})"
            shown.append(f"{label} [{', '.join(sorted(fields))}]")
        c.add(c.words, "words: " + "; ".join(shown))


_READERS: dict[int, tuple[Knowledge, EnvelopeParser, LiteralIndex]] = {}


def _reader_for(k: Knowledge) -> tuple[EnvelopeParser, LiteralIndex]:
    """The envelope parser and literal index of a knowledge, built once per process (the desk
    and the tests look up many times with one knowledge)."""
    hit = _READERS.get(id(k))
    if hit is None or hit[0] is not k:
        hit = _READERS[id(k)] = (k, EnvelopeParser(k.envelope), index_for(k))
    return hit[1], hit[2]
