"""lookup's word index from the start-up cache (issue #11 point 4): built once per knowledge cache
entry, read back equal, and never served for knowledge that did not come from the cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from llamadiag.features.lookup import index
from tests.paths import ROOT


@pytest.fixture()
def rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "rules" / "memory"
    folder.mkdir(parents=True)
    for src in sorted((ROOT / "rules" / "memory").glob("*.yaml"))[:2]:
        shutil.copy(src, folder / src.name)
    return tmp_path / "rules"


def test_a_cached_knowledge_reads_its_word_index_back(rules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from llamadiag.ruletools.checked import checked_knowledge

    first = index.text_index(checked_knowledge([rules], builtin=False))  # built, then stored
    assert list((rules.parent / "cache" / "llamadiag").glob("lookup-*.pickle"))

    def refuse(*args: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(index.TextIndex, "__init__", refuse)
    again = index.text_index(checked_knowledge([rules], builtin=False))  # another knowledge object, same entry
    assert again is not first and vars(again) == vars(first)
    assert again.search("out of memory").keys() == first.search("out of memory").keys()


def test_knowledge_not_from_the_cache_builds_its_index(rules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from llamadiag.knowledge.loader import load_knowledge

    k = load_knowledge([rules], builtin=False)  # unchecked: never cached, so no key to store under
    assert "cached_as" not in k.derived
    index.text_index(k)
    assert not list((rules.parent / "cache").glob("**/lookup-*.pickle"))
