"""How long `watch` waits after a cause's evidence before judging it.

By default a cause waits SETTLE_LINES physical lines (or quiet, or the run's end): a line
that rules it out, a richer signature or a deciding fact often comes right after the
evidence. Some causes cannot change any more, and are judged at once:

- the run has printed its whole startup (the facts of the startup are in);
- the rule's best signature matched (no richer one can complete later);
- no line of the run can rule the rule out (it has no `exclude_lines`) and no rule can
  hide it: nobody `supersedes` it, or only rules that hide it on their own evidence, whose
  signatures are single lines, and that have not matched in this run yet (a later match starts
  after this evidence, so it cannot cover it) or cannot speak (they need a known fact, and none
  of the facts their conditions test is known once the startup is in);
- every fact its conditions and exclusions test is known, and is not a count or a list
  (which later lines could still change).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llamadiag.engine.analyze import Analyzer
    from llamadiag.engine.matcher import Match
    from llamadiag.engine.run import Run
    from llamadiag.knowledge.rulemodel import Condition

SETTLE_LINES = 20  # physical lines after the evidence before a cause is judged


def _tested(conditions: Iterable[Condition]) -> Iterator[str]:
    for cond in conditions:
        if cond.fact is not None:
            yield cond.fact
        if cond.any_of:
            yield from _tested(cond.any_of)


class SettlePolicy:
    """How long `watch` waits after a match before judging it."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.a = analyzer
        rules = [loaded.rule for loaded in analyzer.k.rules]
        hiders: dict[str, list[int]] = {}
        always_hidden: set[str] = set()
        for i, rule in enumerate(rules):
            for rid in rule.supersedes:
                hiders.setdefault(rid, []).append(i)
                single = all(len(sig.entries) == 1 for sig in rule.signatures)
                if rule.supersedes_scope == "run" or not single:
                    always_hidden.add(rid)  # a later or longer match can cover evidence seen now
        growing = {f.name for f in analyzer.k.facts if f.type in ("count", "list")}
        # per rule: None when later lines can always change it, else the facts it tests
        self.tested: list[frozenset[str] | None] = []
        # per rule: the rules that hide it on their evidence once they have matched in the run
        self.hiders: list[tuple[int, ...]] = []
        # per rule that stays silent unless one of these (startup) facts is known: those facts
        self.mute_unless: list[frozenset[str] | None] = []
        for rule in rules:
            names = frozenset(_tested([*rule.conditions, *rule.exclusions]))
            fragile = bool(rule.exclude_lines) or rule.id in always_hidden or bool(names & growing)
            self.tested.append(None if fragile else names)
            self.hiders.append(tuple(hiders.get(rule.id, ())))
            needed = frozenset(_tested(rule.conditions))
            quiet = rule.needs_a_known_fact and bool(needed) and not needed & growing
            self.mute_unless.append(needed if quiet else None)

    def lines(self, rule_i: int, run: Run, match: Match) -> int:
        """Physical lines to wait after the evidence's last line before judging."""
        names = self.tested[rule_i]
        if names is None or not run.startup_seen or match.sig_index != 0:
            return SETTLE_LINES
        known: dict[str, Any] = self.a.run_facts(run)
        if any(i in run.hits and not self._mute(i, known) for i in self.hiders[rule_i]):
            return SETTLE_LINES  # a rule that hides it matched earlier: its next match may cover this one
        return 0 if names <= known.keys() else SETTLE_LINES

    def _mute(self, rule_i: int, known: dict[str, Any]) -> bool:
        """Whether a rule cannot speak in this run: it needs one of its condition facts known,
        and none is once the startup is in (these facts are not counts or lists)."""
        needed = self.mute_unless[rule_i]
        return needed is not None and not needed & known.keys()
