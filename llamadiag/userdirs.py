"""Where llamadiag keeps the user's files: the config folder (user rules, llamadiag.toml) and the
cache folder, native on every OS (platformdirs: ~/.config and ~/.cache on Linux, ~/Library on
macOS, %LOCALAPPDATA% on Windows).

$XDG_CONFIG_HOME / $XDG_CACHE_HOME win on every OS when set, and a ~/.config/llamadiag that
already exists keeps being used (where earlier versions put user rules on every OS).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "llamadiag"


def _native(kind: str) -> Path:
    """The OS's own `kind` ("config" or "cache") folder for llamadiag. On Linux that is what
    platformdirs gives without $XDG_*_HOME (~/.config, ~/.cache): said here, because importing
    platformdirs took ~5 ms of every start-up (docs/performance.md); elsewhere platformdirs."""
    if sys.platform.startswith("linux"):
        return Path.home() / f".{kind}" / APP
    import platformdirs

    native = platformdirs.user_config_dir if kind == "config" else platformdirs.user_cache_dir
    return Path(native(APP, appauthor=False))


def config_dir() -> Path:
    """The user config folder: $XDG_CONFIG_HOME/llamadiag, else an existing ~/.config/llamadiag,
    else the OS's own (platformdirs)."""
    if os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"]) / APP
    legacy = Path.home() / ".config" / APP
    if legacy.is_dir():
        return legacy
    return _native("config")


def cache_dir() -> Path:
    """The cache folder: $XDG_CACHE_HOME/llamadiag, else the OS's own (platformdirs)."""
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / APP
    return _native("cache")
