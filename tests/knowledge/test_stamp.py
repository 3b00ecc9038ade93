"""The start-up cache key read from the files' stat stamps: no file read on a warm start, yet any
change to a file's bytes (even one that keeps its size and modification time) gives a new key."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from llamadiag.knowledge import stamp


@pytest.fixture()
def settled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of its own, and stamps trusted at once (the files here are seconds old)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(stamp, "SETTLE_NS", 0)
    return tmp_path


def _digest(paths: list[Path]) -> str:
    return "".join(p.read_text() for p in paths)


def test_a_warm_key_reads_no_file(settled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from llamadiag.ruletools.checked import _knowledge_key

    first = _knowledge_key(None, True)
    read_bytes = Path.read_bytes

    def cache_only(self: Path) -> bytes:
        assert self.is_relative_to(settled / "cache"), f"read {self}"
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", cache_only)
    assert _knowledge_key(None, True) == first


def test_a_same_size_change_with_its_mtime_set_back_is_noticed(settled: Path) -> None:
    path = settled / "rule.yaml"
    path.write_text("title: one\n")
    before = stamp.remembered([path], "", lambda: _digest([path]))
    assert before == "title: one\n"
    mtime = path.stat().st_mtime_ns
    time.sleep(0.02)  # past a tick of the file system's clock
    path.write_text("title: two\n")  # same size, same inode
    os.utime(path, ns=(mtime, mtime))  # and the modification time it had
    assert stamp.remembered([path], "", lambda: _digest([path])) == "title: two\n"


def test_what_extra_says_is_part_of_the_key(settled: Path) -> None:
    path = settled / "rule.yaml"
    path.write_text("x\n")
    assert stamp.remembered([path], "a", lambda: "A") == "A"
    assert stamp.remembered([path], "b", lambda: "B") == "B"
    assert stamp.remembered([path], "a", lambda: "not asked") == "A"


def test_a_file_changed_just_now_is_not_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "rule.yaml"
    path.write_text("x\n")
    assert stamp.stamps([path]) is None  # it may change again within the same clock tick
    assert stamp.remembered([path], "", lambda: "digest") == "digest"
    assert not list((tmp_path / "cache").glob("**/stamp-*"))
