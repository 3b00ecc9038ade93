"""Option defaults from a config file, found the way ruff finds its own.

From the current folder upward, the first folder holding `.llamadiag.toml`, `llamadiag.toml` or
a `pyproject.toml` with a `[tool.llamadiag]` table wins (in that order within a folder); when
none does, `llamadiag.toml` in the user config folder (userdirs.config_dir). Keys are long
option names without the dashes (`fail-on = "warning"`, `rules = ["my-rules"]`); a key applies
to every command that has that option, and a table named after a command (`[explain]`, or
`[tool.llamadiag.explain]`; `[rules.lint]` for a subcommand) overrides it there. The command
line overrides the file. Folders are relative to the file's folder. A malformed file, an unknown
key or a value of the wrong kind is an error naming the file (and the line, for TOML syntax).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llamadiag.userdirs import config_dir

# typer carries its own copy of click: its objects are used by what they offer (list_commands,
# params, type_cast_value), not by class
Command = Any
Context = Any
Param = Any

NAMES = (".llamadiag.toml", "llamadiag.toml", "pyproject.toml")
ENV_FILE = "LLAMADIAG_CONFIG"  # a config file named outright (or "none": no file at all)


class ConfigError(Exception):
    """A config file that cannot be used: the message names the file and what is wrong."""


@dataclass
class Config:
    """The settings found: the file they came from and its table (empty when no file)."""

    path: Path | None
    table: dict[str, Any]


def find(start: Path | None = None) -> Path | None:
    """The config file that applies in `start` (the current folder), or None."""
    named = os.environ.get(ENV_FILE)
    if named:
        return None if named.lower() == "none" else Path(named)
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        for name in NAMES:
            path = candidate / name
            if path.is_file() and (name != "pyproject.toml" or _has_tool_table(path)):
                return path
    user = config_dir() / "llamadiag.toml"
    return user if user.is_file() else None


def _has_tool_table(path: Path) -> bool:
    try:
        return "llamadiag" in _read(path).get("tool", {})
    except ConfigError:
        return True  # broken: say so rather than pass it by


def _read(path: Path) -> dict[str, Any]:
    import tomllib  # only when a config file exists: not on every start (~3 ms)

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line N, column M)"
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {exc}") from exc


def load(start: Path | None = None) -> Config:
    """The config that applies here (an empty one when there is no file)."""
    path = find(start)
    if path is None:
        return Config(None, {})
    data = _read(path)
    table = data.get("tool", {}).get("llamadiag", {}) if path.name == "pyproject.toml" else data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.llamadiag] is not a table")
    return Config(path, table)


def apply(ctx: Context) -> None:
    """Set the option defaults of the command about to run from the config file that applies;
    a broken file ends the run (status 2) with one line naming it."""
    import typer  # `find` alone (the lean explain path) does without it

    try:
        ctx.default_map = default_map(load(), ctx.command, ctx)
    except ConfigError as exc:
        typer.echo(f"llamadiag: config: {exc}", err=True)
        raise typer.Exit(2) from exc


def default_map(config: Config, group: Command, ctx: Context) -> dict[str, Any]:
    """Click's `default_map` for the command about to run (`ctx.invoked_subcommand`): parameter
    name -> value. Only that command's values are checked and converted, so a key meant for
    another command (`limit`, lookup's) does not slow down or break this one; a key that no
    command has is an error all the same."""
    if config.path is None or ctx.invoked_subcommand is None:
        return {}
    commands = set(group.list_commands(ctx))
    for key, value in config.table.items():
        if isinstance(value, dict) and key not in commands:
            raise ConfigError(f"{config.path}: [{key}] is not a command (tables are named after commands)")
    builder = _Builder(config, ctx, set())
    out = builder.group(config.table, {}, group, ctx.invoked_subcommand)
    others = [k for k, v in config.table.items() if not isinstance(v, dict) and k not in builder.known]
    if others:  # meant for another command, or a typo: only now are the other commands looked at
        every = _every_option(group, ctx)
        unknown = [k for k in others if k not in every]
        if unknown:
            raise ConfigError(f"{config.path}: unknown key {unknown[0]!r} (keys are long option names, like fail-on)")
    return out


def _every_option(group: Command, ctx: Context) -> set[str]:
    names: set[str] = set()
    for _, command in _commands(group, ctx, group.list_commands(ctx)):
        if hasattr(command, "list_commands"):
            names |= _every_option(command, ctx)
        names |= set(_long_options(command))
    return names


def _commands(group: Command, ctx: Context, names: list[str]) -> Iterator[tuple[str, Command]]:
    for name in names:
        command = group.get_command(ctx, name)
        if command is not None:
            yield name, command


def _long_options(command: Command) -> dict[str, Param]:
    """The command's options by long name without the dashes (`fail-on`)."""
    return {opt[2:]: param for param in command.params for opt in param.opts if opt.startswith("--")}


@dataclass
class _Builder:
    """Walks the commands of a group, turning the file's table into click's default_map."""

    config: Config
    ctx: Context
    known: set[str]  # the top-level keys some walked command has

    def group(self, table: dict[str, Any], inherited: dict[str, Any], group: Command, only: str | None) -> dict:
        shared = {**inherited, **{k: v for k, v in table.items() if not isinstance(v, dict)}}
        out: dict[str, Any] = {}
        for name, command in _commands(group, self.ctx, [only] if only else group.list_commands(self.ctx)):
            own = table.get(name, {}) if isinstance(table.get(name), dict) else {}
            if hasattr(command, "list_commands"):  # a group: `rules list` ...
                out[name] = self.group(own, shared, command, None)
                continue
            values = {**shared, **{k: v for k, v in own.items() if not isinstance(v, dict)}}
            out[name] = self.command(name, values, own, command)
        return out

    def command(self, name: str, values: dict[str, Any], own: dict[str, Any], command: Command) -> dict:
        by_option = _long_options(command)
        for key in own:
            if key not in by_option:
                raise ConfigError(f"{self.config.path}: [{name}] has no option --{key}")
        import typer

        sub = typer.Context(command, parent=self.ctx, info_name=name)
        out: dict[str, Any] = {}
        for key, value in values.items():
            param = by_option.get(key)
            if param is None or param.name is None:
                continue
            self.known.add(key)
            out[param.name] = _value(self.config, key, value, param, sub)
        return out


def _value(config: Config, key: str, value: Any, param: Param, ctx: Context) -> Any:
    """The value as the option takes it, once it accepts it (else an error naming the file);
    a path relative to the config file's folder."""
    if isinstance(value, dict) or (isinstance(value, list) and not param.multiple):
        raise ConfigError(f"{config.path}: {key} takes one value, not {type(value).__name__} {value!r}")
    import typer

    given = value if isinstance(value, list) or not param.multiple else [value]
    try:
        converted = param.process_value(ctx, given)
    except typer.BadParameter as exc:
        message = exc.message.removeprefix("Value error, ")  # typer's validation wording
        raise ConfigError(f"{config.path}: {key}: {message}") from exc
    base = config.path.parent if config.path else Path.cwd()
    if isinstance(converted, Path):
        return str(base / converted.expanduser())
    if isinstance(converted, list | tuple) and converted and all(isinstance(v, Path) for v in converted):
        return [str(base / v.expanduser()) for v in converted]
    return given
