"""What the grouped summary keeps per ended run, with equal texts and parts held once.

A finding's texts come from its rule (title, summary, root cause, steps, references ...), but
each run's assessment builds them anew (`str.strip()`, a reference's URL, a rendered step), and
each run's entry names the same facts and sources again. In a long log each distinct finding and
run shape stays in the summary until the report (engine/grouping.py); where one rule is found
again with other values in many runs (a crash loop naming another model each time), each kept
its own copies. `Sharing` swaps each for the first equal one it holds: the report is the same,
byte for byte (docs/performance.md, "Memory").
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, TypeVar

from llamadiag.engine.findings import FactUse, Finding, ReferenceOut, RunOut, StepOut, WorkaroundOut

# distinct texts and parts held at most: rule texts and fact names are bounded by the knowledge;
# what comes from the log (a model's path, a rendered value) is not, and is then kept as it is
MAX_SHARED = 8192

# Finding's plain text fields taken from its rule (the evidence, values and questions are the run's)
_TEXTS: tuple[str, ...] = ("rule_id", "title", "category", "severity", "confidence", "summary")
_TEXTS += ("version_status", "diagnosis", "root_cause", "source_file")

_PLAIN = (str, int, bool, float, type(None))
Part = TypeVar("Part", ReferenceOut, StepOut, WorkaroundOut, FactUse)


class Sharing:
    """Equal texts and parts of findings and run entries, held once (bounded by MAX_SHARED)."""

    def __init__(self) -> None:
        self._held: dict[Any, Any] = {}

    def _one(self, key: Any, value: Any) -> Any:
        held = self._held.get(key)
        if held is not None:
            return held
        if len(self._held) < MAX_SHARED:
            self._held[key] = value
        return value

    def text(self, value: Any) -> Any:
        """The held string equal to `value` (a string), else `value` as it is."""
        return self._one(value, value) if type(value) is str else value

    def part(self, part: Part) -> Part:
        """The held part whose fields are all the same as `part`'s, else `part`. Only plain
        values are compared, each with its type (1, 1.0 and True are equal in Python, not in
        the report) and floats by their text (-0.0 == 0.0); a part holding anything else (a
        fact's list) is kept as it is."""
        key: list[Any] = [type(part)]
        for f in fields(part):
            value = getattr(part, f.name)
            kind = type(value)
            if kind not in _PLAIN:
                return part
            key.append((kind, repr(value) if kind is float else value))
        return self._one(tuple(key), part)

    def finding(self, f: Finding) -> Finding:
        """`f` with its rule's texts and parts shared."""
        text, part = self.text, self.part
        return replace(
            f,
            **{name: text(getattr(f, name)) for name in _TEXTS},
            references=[part(r) for r in f.references],
            remediation=[part(s) for s in f.remediation],
            workarounds=[part(w) for w in f.workarounds],
            not_to_do=[text(t) for t in f.not_to_do],
            verification=[text(t) for t in f.verification],
            facts_used={text(k): part(v) for k, v in f.facts_used.items()},
        )

    def run(self, r: RunOut) -> RunOut:
        """`r` with its fact names, text values and sources shared."""
        text = self.text
        facts = {text(k): self._values(v) for k, v in r.facts.items()}
        return replace(r, facts=facts, fact_sources={text(k): self.part(v) for k, v in r.fact_sources.items()})

    def _values(self, value: Any) -> Any:
        if isinstance(value, dict):  # the parsed flags, grouped
            return {self.text(k): self.text(v) for k, v in value.items()}
        return self.text(value)
