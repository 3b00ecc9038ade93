"""Commands registered by name and imported when run, so that `--help`, `--version` and shell
completion do not import the analyzer (each command module imports it through `llamadiag.api`).

A `LazyGroup` lists its commands with the one-line help given at registration; only the command
that is run, or asked for `--help`, is imported. tests/cli/test_startup.py checks that the
registered help is the command's own.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from llamadiag.cli.helptext import HelpGroup


@dataclass(frozen=True)
class LazyCommand:
    """A command by name: `target` is "module:attribute" under llamadiag.cli, either a function
    (one command) or a `typer.Typer` (a group); `help` is what the group's listing shows."""

    name: str
    target: str  # "explain:facts" is llamadiag.cli.explain.facts, "group:rules_app" a group
    help: str

    def load(self) -> Any:
        """The click command, its module imported now."""
        module, attr = self.target.split(":")
        obj = getattr(importlib.import_module(f"llamadiag.cli.{module}" if module else "llamadiag.cli"), attr)
        if isinstance(obj, typer.Typer):
            return typer.main.get_group(obj)
        single = typer.Typer(rich_markup_mode=None, add_completion=False)
        single.command(self.name)(obj)
        return typer.main.get_command(single)


class LazyGroup(TyperGroup):
    """A typer group whose registered commands are imported only when one is run."""

    lazy: dict[str, LazyCommand] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._listing = False

    @contextmanager
    def _stubs(self) -> Iterator[None]:
        """While listing (help, completion of a command name), unloaded commands are stand-ins."""
        self._listing = True
        try:
            yield
        finally:
            self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        """The commands in registration order."""
        return [*self.commands, *(n for n in self.lazy if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command, imported now unless the group is only listing its commands."""
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        spec = self.lazy.get(cmd_name)
        if spec is None:
            return None
        if self._listing:
            return TyperCommand(name=cmd_name, help=spec.help)
        command = spec.load()
        self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list of --help, from the registered one-line helps."""
        with self._stubs():
            super().format_commands(ctx, formatter)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        """Completion of a command name, from the registered one-line helps."""
        with self._stubs():
            return super().shell_complete(ctx, incomplete)


def lazy_group(commands: list[LazyCommand]) -> type[LazyGroup]:
    """A LazyGroup class that holds these commands (typer builds the group from a class). HelpGroup
    first: it names the placeholders of each command as the lazy group hands it out."""
    return type("CommandGroup", (HelpGroup, LazyGroup), {"lazy": {c.name: c for c in commands}})
