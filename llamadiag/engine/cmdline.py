"""Parsing a llama-server command line with the alias table in rules/flags/.

Accepts what people paste: a shell prompt, line continuations, leading VAR=value
assignments, `docker run -e VAR=value image ...`, Windows paths and quotes. Aliases and
LLAMA_ARG_* variables resolve to one canonical name per option; renamed spellings are
reported with their replacement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from llamadiag.knowledge.patterns import compile_format_pattern

if TYPE_CHECKING:  # the model classes are not built on a start-up cache hit
    import regex

    from llamadiag.knowledge.formatmodel import Flag, Flags

ENV_ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*)=(.*)$")
@dataclass
class ParsedFlags:
    """A parsed llama-server command line: flag values, the spellings used, old and unknown flags."""

    values: dict[str, str | bool] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # canonical -> spelling used
    old_spellings: list[tuple[str, str, str | None]] = field(default_factory=list)  # (used, canonical, note)
    unknown: list[str] = field(default_factory=list)
    text: str = ""

    def __bool__(self) -> bool:
        return bool(self.text)


class FlagTable:
    """The flag specification indexed by alias, old spelling and environment variable; parses command lines."""

    def __init__(self, spec: Flags) -> None:
        self.spec = spec
        self.by_alias: dict[str, Flag] = {}
        self.by_old: dict[str, Flag] = {}
        self.by_env: dict[str, Flag] = {}
        for flag in spec.flags:
            for alias in flag.aliases:
                self.by_alias[alias] = flag
            for old in flag.old_spellings:
                self.by_old[old] = flag
            for env in flag.env:
                self.by_env[env] = flag

    @cached_property
    def prompt(self) -> re.Pattern[str] | regex.Pattern[str]:
        """The shell prompt a command line may be pasted with (rules/flags/llama-server.yaml);
        compiled when a command line is first parsed (`regex`'s syntax: not at every start)."""
        return compile_format_pattern(self.spec.shell_prompt)

    def canonical(self, name: str) -> str | None:
        """The canonical name of a flag spelling (current or old), or None when unknown."""
        flag = self.by_alias.get(name) or self.by_old.get(name)
        return flag.name if flag else None

    def parse(self, text: str) -> ParsedFlags:
        """Parse a command line (with environment variables and docker arguments) into flag values."""
        text = text.strip()
        if text.startswith("`"):  # the command quoted as markdown inline code
            text = text.strip("`").strip()
        text = self.prompt.sub("", text, count=1)  # the shell prompt it was pasted with
        out = ParsedFlags(text=text)
        tokens = _tokens(text)
        start = self._program_index(tokens)
        for token in tokens[:start]:
            self._env(token, out)
        for i, token in enumerate(tokens[:start]):  # docker run -e VAR=value
            if token in ("-e", "--env") and i + 1 < start:
                self._env(tokens[i + 1], out)
        args = tokens[start + 1 :] if start < len(tokens) else tokens
        i = 0
        while i < len(args):
            token = args[i]
            i += 1
            if not token.startswith("-") or token == "-":
                continue
            name, _, inline = token.partition("=") if token.startswith("--") else (token, "", "")
            flag = self.by_alias.get(name)
            if flag is None and name in self.by_old:
                flag = self.by_old[name]
                out.old_spellings.append((name, flag.name, flag.note))
            if flag is None:
                out.unknown.append(token)
                continue
            value: str | bool = True
            if inline:
                value = inline
            elif (flag.takes_value == "yes" and i < len(args)) or (
                flag.takes_value == "optional" and i < len(args) and flag.choices and args[i] in flag.choices
            ):
                value = args[i]
                i += 1
            out.values[flag.name] = value
            out.sources[flag.name] = name
        return out

    def _env(self, token: str, out: ParsedFlags) -> None:
        m = ENV_ASSIGN.match(token)
        if m and m.group(1) in self.by_env:
            flag = self.by_env[m.group(1)]
            if flag.name not in out.values:
                out.values[flag.name] = m.group(2) if flag.takes_value != "no" else True
                out.sources[flag.name] = m.group(1)

    def _program_index(self, tokens: list[str]) -> int:
        for i, token in enumerate(tokens):
            base = re.split(r"[/\\]", token)[-1]
            if base in self.spec.program or token in self.spec.program or any(i in token for i in self.spec.images):
                return i
        return len(tokens)


def _tokens(text: str) -> list[str]:
    text = re.sub(r"\\\r?\n", " ", text)  # shell line continuations
    text = re.sub(r"`\r?\n", " ", text)  # PowerShell continuations
    windows = bool(re.search(r"[A-Za-z]:\\|\.exe\b", text))
    try:
        import shlex  # when a command line is given: not on every start

        tokens = shlex.split(text, posix=not windows)
    except ValueError:
        tokens = text.split()
    return [t[1:-1] if windows and len(t) > 1 and t[0] == t[-1] and t[0] in "\"'" else t for t in tokens]
