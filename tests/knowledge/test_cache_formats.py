"""Feature format files (redaction.yaml ...) from the start-up cache as light copies (issue #11
point 4): `explain -f json` no longer parses and validates redaction.yaml on every run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from llamadiag.knowledge import formatcache, light
from llamadiag.knowledge.files import FEATURE_FORMAT_FILES, builtin_rules_dir
from llamadiag.knowledge.formats import FILES, builtin_format


@pytest.mark.parametrize("name", sorted(FEATURE_FORMAT_FILES))
def test_a_cached_format_reads_as_the_validated_file(name: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(formatcache, "_LOADED", {})
    model = next(m for m in FILES if m.__name__ == name)
    fresh = formatcache.cached_format(name)  # a miss: validated, copied, stored
    assert list((tmp_path / "llamadiag").glob("format_*.pickle"))
    monkeypatch.setattr(formatcache, "_LOADED", {})
    monkeypatch.setattr(formatcache, "_validated", lambda _: pytest.fail("a cache hit validated the file"))
    hit = formatcache.cached_format(name)
    assert isinstance(hit, light.Light) and hit == fresh and hit is not fresh
    assert hit.model_dump() == builtin_format(model).model_dump()


def test_the_key_changes_with_the_file_and_with_the_code(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "redaction.yaml"
    shutil.copy(builtin_rules_dir() / "formats" / "redaction.yaml", path)
    before = formatcache._key(path)
    path.write_text(path.read_text() + "\n# a comment\n")
    assert formatcache._key(path) != before
    changed = formatcache._key(path)
    code = tmp_path / "code"
    shutil.copytree(formatcache.HERE, code)
    (code / "formatmodel.py").write_text((code / "formatmodel.py").read_text() + "\n# changed\n")
    monkeypatch.setattr(formatcache, "HERE", code)
    assert formatcache._key(path) != changed
