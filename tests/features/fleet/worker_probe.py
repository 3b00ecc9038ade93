"""Calls run on a fleet pool worker by test_workerpool.py; this module imports nothing of the
command line, so that importing it in a worker proves nothing either way."""

from __future__ import annotations

import os
import sys


def loaded_modules() -> list[str]:
    """The names of the modules the worker holds."""
    return sorted(sys.modules)


def main_module() -> str | None:
    """The name of the module the worker runs as its main (None for a script)."""
    spec = sys.modules["__main__"].__spec__
    return spec.name if spec else None


def die(code: int) -> None:
    """End the worker at once, as the kernel's OOM killer would."""
    os._exit(code)


def pid() -> int:
    """The worker's process id."""
    return os.getpid()


_kept: list[str] = []


def keep(value: str) -> None:
    """Note a value in the worker (what handing the knowledge to it does)."""
    _kept.append(value)


def kept() -> list[str]:
    """The values noted in this worker."""
    return _kept
