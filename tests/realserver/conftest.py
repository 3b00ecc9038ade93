"""Shared set-up of the real-server tests.

test_corpus.py runs on every run (committed logs only). test_live.py needs the real
llama-server built by build.py; without it (or without cmake/g++ to build it) those tests are
skipped with one line.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build  # noqa: E402


def _has_numpy() -> bool:
    import importlib.util
    import subprocess

    if importlib.util.find_spec("numpy"):
        return True
    py = shutil.which("python3")
    return bool(py) and subprocess.run([py, "-c", "import numpy"], capture_output=True).returncode == 0


def _live_missing() -> str | None:
    if not build.server_path().exists():
        missing = [t for t in ("cmake", "g++") if shutil.which(t) is None]
        if missing:
            return f"real llama-server tests skipped: {', '.join(missing)} missing (committed corpus still runs)"
        return (f"real llama-server tests skipped: no binary at {build.server_path()}; "
                "run python tests/realserver/build.py (committed corpus still runs)")
    if not _has_numpy():
        return "real llama-server tests skipped: numpy (for the tiny models) missing (committed corpus still runs)"
    return None


LIVE_MISSING = _live_missing()
