"""The command line: the typer application (group.py) and the console script's entry (entry.py),
which runs a plain `explain LOG` without typer and hands everything else to the application.

`from llamadiag.cli import app` (and `COMMANDS`, `RULES`, `rules_app`) still gives the application;
it is imported when asked for, so that the lean path does not pay for typer.
"""

from __future__ import annotations

import os
from typing import Any

# pydantic looks for plugins (the entry points of every installed distribution) when it first builds
# a schema: ~10 ms of each start, for nothing a command line uses; an explicit setting still wins
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

_APPLICATION = ("COMMANDS", "RULES", "app", "rules_app")


def __getattr__(name: str) -> Any:
    """The typer application's names (group.py), imported when first asked for."""
    if name in _APPLICATION:
        from llamadiag.cli import group

        return getattr(group, name)
    raise AttributeError(f"module 'llamadiag.cli' has no attribute {name!r}")


__all__ = ["COMMANDS", "RULES", "app", "rules_app"]
