"""The user's config and cache folders: XDG when set, an existing ~/.config/llamadiag, else native."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from llamadiag import userdirs


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    return tmp_path


def test_xdg_wins(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "cfg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    assert userdirs.config_dir() == home / "cfg" / "llamadiag"
    assert userdirs.cache_dir() == home / "cache" / "llamadiag"


def test_native_folders_without_xdg(home: Path) -> None:
    assert userdirs.config_dir() == Path(platformdirs.user_config_dir("llamadiag", appauthor=False))
    assert userdirs.cache_dir() == Path(platformdirs.user_cache_dir("llamadiag", appauthor=False))


def test_an_existing_dot_config_folder_keeps_being_used(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(userdirs.sys, "platform", "darwin")
    monkeypatch.setattr(platformdirs, "user_config_dir", lambda *a, **k: str(home / "Library" / "llamadiag"))
    assert userdirs.config_dir() == home / "Library" / "llamadiag"  # as on macOS
    (home / ".config" / "llamadiag").mkdir(parents=True)
    assert userdirs.config_dir() == home / ".config" / "llamadiag"


def test_user_rules_come_from_the_config_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from llamadiag.knowledge.loader import user_rules_dirs

    monkeypatch.setattr(userdirs.sys, "platform", "win32")
    monkeypatch.setattr(platformdirs, "user_config_dir", lambda *a, **k: str(home / "AppData" / "llamadiag"))
    monkeypatch.delenv("LLAMADIAG_RULES_PATH", raising=False)
    (home / "AppData" / "llamadiag" / "rules").mkdir(parents=True)
    assert user_rules_dirs() == [home / "AppData" / "llamadiag" / "rules"]


def test_linux_folders_need_no_platformdirs(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On Linux the native folders are said without importing platformdirs (start-up time)."""
    import sys

    monkeypatch.setattr(userdirs.sys, "platform", "linux")
    monkeypatch.delitem(sys.modules, "platformdirs")
    monkeypatch.setitem(sys.modules, "platformdirs", None)  # importing it now fails
    assert userdirs.config_dir() == home / ".config" / "llamadiag"
    assert userdirs.cache_dir() == home / ".cache" / "llamadiag"
