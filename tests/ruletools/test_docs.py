"""Generated documentation is never stale: rule pages, the index and the rule JSON Schema."""

from __future__ import annotations

import json

from llamadiag.ruletools import docsgen
from llamadiag.ruletools.docsgen import rule_schema
from tests.paths import DOCS


def test_rule_pages_are_current(knowledge) -> None:
    pages = docsgen.generate(knowledge)
    stale = [
        name
        for name, content in pages.items()
        if not (DOCS / "rules" / name).is_file() or (DOCS / "rules" / name).read_text() != content
    ]
    extra = [p.name for p in (DOCS / "rules").glob("*.md") if p.name not in pages]
    assert stale == [] and extra == [], "run `llamadiag rules docs` and commit docs/rules/"


def test_schema_is_current() -> None:
    on_disk = json.loads((DOCS / "rule-schema.json").read_text())
    assert on_disk == rule_schema(), "run `llamadiag rules schema -o docs/rule-schema.json`"
    assert on_disk["$schema"].startswith("https://json-schema.org/") and on_disk["$id"]


def test_index_lists_every_rule(knowledge) -> None:
    index = (DOCS / "rules" / "index.md").read_text()
    for loaded in knowledge.rules:
        assert f"[{loaded.rule.id}]({loaded.rule.id}.md)" in index
