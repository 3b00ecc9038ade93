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
from llamadiag.engine.unmatched import FORMATS_READ
from llamadiag.knowledge.formatcache import cached_format
from llamadiag.knowledge.light import Light, from_model

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


def worker_formats() -> dict[str, Any]:
    """The format files a worker reads, validated here, as light copies, to hand over with the
    knowledge. Else each worker reads them from the start-up cache, and where that has not them
    (a fresh worker host, a changed tree, or the 4 newest entries of each kind kept where
    several checkouts share the cache) parses and validates them itself: pydantic and the model
    classes, imported for the worker's life (+7 to 9 MiB, docs/fleet.md)."""
    return {name: cached_format(name) for name in FORMATS_READ}


# the parts of the knowledge besides its rules that hold validated models
MODEL_PARTS = ("envelope", "versions", "eras", "runs", "stats", "facts", "flags")


def for_workers(k: api.Knowledge) -> api.Knowledge:
    """A copy of `k` without the rules' report text, every model in its light form (the original
    is not changed).

    Light whatever the command holds: the start-up cache's light copies, or the validated
    pydantic models of knowledge loaded unchecked or cached as models (`ruletools.checked`, when
    a part has no light class). A pydantic model handed over makes each worker import pydantic
    and the model classes to unpickle it (+7.5 MiB of RSS, docs/fleet.md)."""
    memo: dict[int, Any] = {}
    rules = []
    for loaded in k.rules:
        rule = _light(loaded.rule, memo)
        changes = dict(
            UNUSED_ON_WORKERS,
            verification=rule.verification.model_copy(update=UNUSED_VERIFICATION),
            references=[r.model_copy(update=UNUSED_REFERENCE) for r in rule.references],
        )
        rules.append(dataclasses.replace(loaded, rule=rule.model_copy(update=changes), positions={}))
    parts = {name: _light(getattr(k, name), memo) for name in MODEL_PARTS}
    return dataclasses.replace(k, rules=rules, **parts)


def _light(value: Any, memo: dict[int, Any]) -> Any:
    """The light copy of a validated model (or a list of them); the value itself where it is light
    already, or where a part has no light class (then the worker imports pydantic: slower, same)."""
    if isinstance(value, Light) or (isinstance(value, list) and all(isinstance(v, Light) for v in value)):
        return value
    try:
        return from_model(value, memo)
    except TypeError:
        return value
