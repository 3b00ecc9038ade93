"""A Hyperscan database missing from the cache is compiled by a child process (its ~40 MiB
moment stays out of `explain`'s heap), and still in this process where no child can run."""

from __future__ import annotations

from pathlib import Path

import pytest

from llamadiag.engine.scan import multimatch

hyperscan = pytest.importorskip("hyperscan")

EXPRESSIONS = [b"failed to decode", b"n_past = ", "déjà".encode()]


def _lines_found(db, text: str) -> list[int]:
    found: list[int] = []
    db.scan(text.encode(), match_event_handler=lambda i, start, end, flags, ctx: found.append(i))
    return sorted(found)


@pytest.fixture
def cold_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


class _NoCompileHere:
    """The hyperscan module as this process sees it, except that it cannot compile."""

    def __getattr__(self, name: str) -> object:
        return getattr(hyperscan, name)

    def Database(self) -> None:  # the module's own name
        raise AssertionError("compiled in this process")


def test_a_cache_miss_is_compiled_by_a_child_and_cached(cold_cache: Path) -> None:
    db = multimatch.cached_database(_NoCompileHere(), "hstest", EXPRESSIONS, [0, 0, 0])
    assert _lines_found(db, "E failed to decode, n_past = 3, déjà vu") == [0, 1, 2]
    assert [p.name.split("-")[0] for p in (cold_cache / "llamadiag").glob("hstest-*")] == ["hstest"]


def test_without_a_child_it_compiles_here(cold_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(multimatch.sys, "executable", "")
    db = multimatch.cached_database(hyperscan, "hstest", EXPRESSIONS, [0, 0, 0])
    assert _lines_found(db, "n_past = 7") == [1]


def test_the_child_does_not_import_from_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`llamadiag explain` run in a folder of downloaded files must not execute one of them."""
    marker = tmp_path / "ran"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit(3)\n")
    monkeypatch.chdir(tmp_path)
    data = multimatch.compile_in_child(EXPRESSIONS, [0, 0, 0])
    assert data is not None and not marker.exists()
