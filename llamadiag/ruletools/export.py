"""The rules' signatures for other tools: POSIX EREs for `grep -E -f` (benchmarks, quick triage)."""

from __future__ import annotations

from llamadiag.knowledge.loader import Knowledge
from llamadiag.ruletools.ere import Untranslatable, to_ere


def signature_eres(k: Knowledge) -> tuple[list[str], list[str]]:
    """(EREs in rule order without repeats, problems for entries that have none)."""
    out: dict[str, None] = {}
    problems = []
    for loaded in k.rules:
        for sig in loaded.rule.signatures:
            for entry in sig.entries:
                try:
                    out[to_ere(entry.regex)] = None
                except Untranslatable as exc:
                    problems.append(f"{loaded.rule.id}: {entry.regex!r}: {exc}")
    return list(out), problems
