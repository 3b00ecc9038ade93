"""Help and usage errors as people write them: `--rules DIR`, `--build N`, `explain [OPTIONS] LOG`,
"Invalid value for '--build': should be a whole number".

Typer names a value by its Python type (`--rules <list[Path]>`, `--cmdline <str>`) and puts a
required argument in braces (`{source}`). `HelpGroup`, the class of the application and its
sub-groups, gives every value a placeholder word when its command is built: the name below, or
the option's own name in capitals; choices keep their list (`<rich|json|markdown>`). Typer checks
values with pydantic, whose messages it passes on ("Value error, 'x' is not one of ...", "Input
should be a valid integer, unable to parse string as an integer"); `plain_words` rewrites them.
"""

from __future__ import annotations

import re
from typing import Any

from typer._click.exceptions import BadParameter
from typer.core import TyperArgument, TyperGroup, TyperOption

# pydantic's phrases -> a person's (the first that matches, applied in order)
PLAIN_WORDS = [
    (re.compile(r"^(Value error|Assertion failed), "), ""),
    (re.compile(r"Input should be a valid integer(, [^.;]*)?"), "should be a whole number"),
    (re.compile(r"Input should be a valid number(, [^.;]*)?"), "should be a number"),
    (re.compile(r"Input should be greater than or equal to (\S+)"), r"should be \1 or more"),
    (re.compile(r"Input should be less than or equal to (\S+)"), r"should be \1 or less"),
    (re.compile(r"Input should be greater than (\S+)"), r"should be more than \1"),
    (re.compile(r"Input should be less than (\S+)"), r"should be less than \1"),
    (re.compile(r"^Input should be "), "should be "),
]


def plain_words(message: str) -> str:
    """A usage error's message without pydantic's phrasing."""
    for pattern, words in PLAIN_WORDS:
        message = pattern.sub(words, message)
    return message


# parameter name -> placeholder (the rest: the name in capitals)
PLACEHOLDERS = {
    "source": "LOG",
    "before": "BEFORE",
    "after": "AFTER",
    "rules": "DIR",
    "cmdline": "COMMAND",
    "version_text": "TEXT",
    "build": "N",
    "server": "URL",
    "url": "URL",
    "api_key": "KEY",
    "token": "TOKEN",
    "host": "ADDRESS",
    "output": "PATH",
    "limit": "N",
    "repeat_interval": "SECONDS",
    "max_mb": "MB",
    "rule_id": "RULE_ID",
    "ids": "RULE_ID",
}


class PlainArgument(TyperArgument):
    """An argument shown as `LOG` (required) or `[LOG]` (optional) in the usage line, not `{source}`."""

    def _usage_display_name(self) -> str:
        name = self.display_name_raw + ("..." if self.nargs != 1 else "")
        return name if self.required else f"[{name}]"

    def display_type_rich(self, ctx: Any) -> str | None:
        """No type after the name: the placeholder says what to give."""
        return None


def _is_choice(param: Any) -> bool:
    descriptor = getattr(param, "type_descriptor", None)
    return bool(getattr(descriptor, "is_choice", False))


def name_placeholders(command: Any) -> None:
    """Give each value of a command a placeholder word (again: nothing changes)."""
    for param in getattr(command, "params", []):
        if isinstance(param, TyperArgument):
            if param.metavar is None:
                param.metavar = PLACEHOLDERS.get(param.name or "", (param.name or "value").upper())
            if type(param) is TyperArgument:
                param.__class__ = PlainArgument  # only the usage line differs
        elif isinstance(param, TyperOption) and param.metavar is None and not param.is_flag and not _is_choice(param):
            param.metavar = PLACEHOLDERS.get(param.name or "", (param.name or "value").upper())


class HelpGroup(TyperGroup):
    """The application's group: its commands show placeholder words in their help, and a bad
    value is reported without pydantic's phrasing. (A group that loads its commands lazily can
    derive from it: the words are given to each command as the group hands it out.)"""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command, its values named with placeholder words."""
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            name_placeholders(command)
        return command

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a bad value is reported in plain words."""
        try:
            return super().invoke(ctx)
        except BadParameter as exc:
            exc.message = plain_words(exc.message)
            raise
