"""The start-up cache and the checked-knowledge cache: atomic entries, hits equal fresh loads,
any change to a rule or to the code loads afresh."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import yaml

from llamadiag import cache
from tests.paths import ROOT


def test_cache_entries_are_written_atomically_and_pruned(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for i in range(cache.KEEP + 3):
        cache.write(f"thing-{i}.bin", bytes([i]))
        os.utime(tmp_path / "llamadiag" / f"thing-{i}.bin", (i, i))
    left = sorted(p.name for p in (tmp_path / "llamadiag").iterdir())
    assert len(left) == cache.KEEP and cache.read(f"thing-{cache.KEEP + 2}.bin") == bytes([cache.KEEP + 2])
    assert cache.read("absent.bin") is None


def _small_rules(tmp_path: Path) -> Path:
    """Two shipped rules in a folder of their own: a fresh load runs only their examples."""
    rules = tmp_path / "rules" / "speculative"
    rules.mkdir(parents=True)
    for src in sorted((ROOT / "rules" / "speculative").glob("*.yaml"))[:2]:
        shutil.copy(src, rules / src.name)
    return tmp_path / "rules"


def test_knowledge_cache_hit_equals_a_fresh_load(tmp_path: Path, monkeypatch) -> None:
    from llamadiag.knowledge.loader import load_knowledge
    from llamadiag.ruletools.checked import checked_knowledge

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rules = _small_rules(tmp_path)
    first = checked_knowledge([rules], builtin=False)
    stored = list((tmp_path / "cache" / "llamadiag").glob("knowledge-*.pickle"))
    assert len(stored) == 1 and len(first.rules) == 2 and not first.errors
    again = checked_knowledge([rules], builtin=False)
    assert again is not first
    assert [(r.rule, r.path) for r in again.rules] == [(r.rule, r.path) for r in first.rules]
    assert again.facts == first.facts and again.envelope == first.envelope
    assert again.digest == load_knowledge([rules], builtin=False).digest
    stored[0].write_bytes(b"not a pickle")  # a broken cache entry is ignored and rewritten
    assert checked_knowledge([rules], builtin=False).digest == first.digest


def test_knowledge_cache_notices_a_changed_rule(tmp_path: Path, monkeypatch) -> None:
    from llamadiag.ruletools.checked import checked_knowledge

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rules = _small_rules(tmp_path)
    before = checked_knowledge([rules], builtin=False)
    path = next((rules / "speculative").glob("*.yaml"))
    data = yaml.safe_load(path.read_text())  # a quoted title cannot take a prefix by text replacement
    data["title"] = "CHANGED " + data["title"]
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    after = checked_knowledge([rules], builtin=False)
    assert before.digest != after.digest
    assert after.rule(path.stem).rule.title.startswith("CHANGED")


def test_a_change_in_any_subpackage_changes_the_code_digest(tmp_path: Path) -> None:
    import shutil as sh

    from llamadiag.ruletools.checked import PACKAGE, code_digest

    copy = tmp_path / "llamadiag"
    sh.copytree(PACKAGE, copy, ignore=sh.ignore_patterns("__pycache__", "rules"))
    before = code_digest(copy)
    assert before == code_digest(PACKAGE)
    deep = copy / "engine" / "scan" / "stops.py"
    deep.write_text(deep.read_text() + "\n# changed\n")
    assert code_digest(copy) != before
    (copy / "features" / "new_module.py").write_text("")  # a new module counts too
    assert len({before, code_digest(copy)}) == 2


def test_a_missing_rule_folder_is_not_remembered_for_other_runs(tmp_path: Path, monkeypatch) -> None:
    from llamadiag.ruletools.checked import checked_knowledge

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LLAMADIAG_RULES_PATH", str(tmp_path / "nonexistent"))
    rules = _small_rules(tmp_path)
    broken = checked_knowledge([rules], builtin=False)
    assert any("does not exist" in str(e) for e in broken.errors)
    monkeypatch.delenv("LLAMADIAG_RULES_PATH")
    assert checked_knowledge([rules], builtin=False).errors == []


def test_a_cache_hit_parses_and_validates_nothing(tmp_path: Path, monkeypatch) -> None:
    """A hit is the pickled checked knowledge: no YAML read, no pydantic validation, no examples run."""
    from llamadiag.knowledge import loader
    from llamadiag.ruletools import checked

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rules = _small_rules(tmp_path)
    first = checked.checked_knowledge([rules], builtin=False)

    def refuse(*args, **kwargs):
        raise AssertionError("a cache hit loaded the knowledge afresh")

    monkeypatch.setattr(loader, "validate", refuse)
    monkeypatch.setattr(loader, "load_yaml", refuse)
    monkeypatch.setattr(checked, "_check", refuse)
    hit = checked.checked_knowledge([rules], builtin=False)
    assert [r.rule for r in hit.rules] == [r.rule for r in first.rules]
    assert all(r.positions == {} for r in hit.rules)  # line positions are lint's, not cached


def test_a_refused_shipped_rule_is_checked_again_next_run(tmp_path: Path, monkeypatch) -> None:
    """A shipped rule refused at start (the pattern time budget on a loaded machine) must not stay
    refused in the cache; a refused user rule is remembered like any other rule error."""
    from llamadiag.ruletools import checked, lint

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    slow = "spec-vision-draft-position-gap"

    def busy_machine(self, loaded):
        if loaded.rule.id == slow and loaded.builtin:
            return [self.issue(loaded, (), "pattern took 0.057s on a 20000-char line (budget 0.05s)")]
        return []

    monkeypatch.setattr(lint.PatternSafety, "check", busy_machine)
    monkeypatch.setattr(lint.Examples, "check", lambda self, loaded: [])  # speed: the examples are not the point
    first = checked.checked_knowledge()
    assert first.rule(slow) is None and any("rule refused" in str(e) for e in first.errors)
    assert not list((tmp_path / "cache").rglob("knowledge-*"))  # not remembered
    monkeypatch.setattr(lint.PatternSafety, "check", lambda self, loaded: [])
    assert checked.checked_knowledge().rule(slow) is not None  # the next run checks it again
