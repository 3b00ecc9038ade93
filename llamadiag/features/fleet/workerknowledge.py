"""The knowledge a fleet worker is handed: what the scan and a log's summary need, not the text
the report is written with.

A worker boils each report down to a `Summary` (rule ids, counts, confidence, builds, unmatched
templates); the fleet report is rendered in the command's process from the command's own, full
knowledge. So the rules' examples, remediation, workarounds, verification, root cause, summary
and "not to do" advice (about 1.2 MiB of each worker's memory, half the rules' size) stay home,
and so do the references' titles and notes and the verification checks (their text is the
report's; the engine reads a reference's kind, id, role and builds, never a check).

Kept: everything the engine reads to find, rank and group findings (signatures, conditions,
versions, references: their roles decide the version status; the diagnosis templates: the
rendered diagnosis is part of what makes two findings one cause, `engine.grouping.cause_key`).
The literal index (`Knowledge.derived`) refers to rules by position, so the order is kept.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from llamadiag import api

# rule fields a worker never reads into a summary, and their empty values
UNUSED_ON_WORKERS: dict[str, Any] = {
    "examples": [],
    "remediation": [],
    "workarounds": [],
    "not_to_do": [],
    "root_cause": "",
    "summary": "",
}
# what the report says of a reference and of the verification, never what the engine decides on
UNUSED_REFERENCE: dict[str, Any] = {"title": None, "note": None}
UNUSED_VERIFICATION: dict[str, Any] = {"steps": [], "checks": []}


def for_workers(k: api.Knowledge) -> api.Knowledge:
    """A copy of `k` without the rules' report text (the original is not changed)."""
    rules = []
    for loaded in k.rules:
        rule = loaded.rule
        # a pydantic rule, or its light copy from the start-up cache: both copy the same way
        changes = dict(
            UNUSED_ON_WORKERS,
            verification=rule.verification.model_copy(update=UNUSED_VERIFICATION),
            references=[r.model_copy(update=UNUSED_REFERENCE) for r in rule.references],
        )
        rules.append(dataclasses.replace(loaded, rule=rule.model_copy(update=changes), positions={}))
    return dataclasses.replace(k, rules=rules)
