"""The progress bar: only for large files on a terminal."""

from __future__ import annotations

import os
from pathlib import Path

from llamadiag.render.progress import MIN_BYTES, wanted

LOG = "srv  load_model: loading model '/m/x.gguf'\nE srv        decode: failed to process speculative batch\n"


def test_progress_only_for_large_files_on_a_terminal(tmp_path: Path) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    small = tmp_path / "small.log"
    small.write_text(LOG)
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.truncate(MIN_BYTES)
    assert wanted(str(big), True, Tty()) == MIN_BYTES
    assert wanted(str(big), False, Tty()) == 0  # --no-progress
    with open(os.devnull, "w") as devnull:
        assert wanted(str(big), True, devnull) == 0  # not a terminal
    assert wanted(str(small), True, Tty()) == 0
    assert wanted("-", True, Tty()) == 0
