"""Shared set-up of the real-server tests: the scripts beside this file are importable by name.

test_corpus.py runs on every run (committed logs only). test_live.py needs the real llama-server
built by build.py; without it (or without cmake/g++ to build it, or numpy for the tiny models) it
is skipped with one line (build.live_missing()).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
