"""The console script's entry: `llamadiag explain LOG... [options]` runs without the typer
application, whose import and option parsing took ~40-65 ms CPU of a small log's start-up (typer
builds a pydantic adapter per option; docs/performance.md); every other call goes to the application.

The lean path takes only what it fully understands: the command `explain`, log names, and
options it converts exactly as the application does (a choice given by its value, a build
number, a job count, a path, a flag). Anything else — another command, `--help`, `--`, an
unknown or malformed option, an empty value or one that starts with `-`, a value it would refuse,
`--server`, `--api-key`, `--allow-remote` and `--version-text` (they reach the network or read a
file), a config file, a notice to show before the command, shell completion, Windows (where the
application expands wildcards) — is handed to the application, which parses it again and
says what is wrong in its own words. Both run `explain_run.run_explain`, so the output and the
exit status are the same (tests/cli/test_entry.py).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from llamadiag.cli.common import Color, ExplainFormat, FailConfidence, FailOn, parse_build, parse_jobs
from llamadiag.gcpause import paused

if TYPE_CHECKING:
    from llamadiag.cli.explain_run import ExplainOptions

# the options the lean path takes: long and short names -> (field of ExplainOptions, value kind)
_FLAGS = {
    "--why": ("why", True),
    "--no-redact": ("no_redact", True),
    "--unmatched": ("unmatched", True),
    "--quiet": ("quiet", True),
    "-q": ("quiet", True),
    "--progress": ("show_progress", True),
    "--no-progress": ("show_progress", False),
    "--pager": ("pager", True),
    "--no-pager": ("pager", False),
}
_CHOICES: dict[str, tuple[str, type[Enum]]] = {
    "--format": ("fmt", ExplainFormat),
    "-f": ("fmt", ExplainFormat),
    "--fail-on": ("fail_on", FailOn),
    "--fail-confidence": ("fail_confidence", FailConfidence),
    "--color": ("color", Color),
}
_VALUES = {"--output": "output", "-o": "output", "--cmdline": "cmdline", "--build": "build", "--rules": "rules"}
_VALUES |= {"--jobs": "jobs", "-j": "jobs", **{name: field for name, (field, _) in _CHOICES.items()}}


class _Unsure(Exception):
    """The arguments hold something the lean path does not take: the application parses them."""


def lean_explain(args: Sequence[str]) -> tuple[list[str], ExplainOptions] | None:
    """(log names, explain's options) when `args` is an `explain` call the lean path takes
    whole; None otherwise (the application then runs, or says what is wrong)."""
    call = _parse(args)
    options = _options(call[1]) if call is not None else None
    return (call[0], options) if call is not None and options is not None else None


def _parse(args: Sequence[str]) -> tuple[list[str], dict[str, object]] | None:
    """(log names, explain's options as given: field -> raw value) when `args` is an `explain`
    call whose syntax the lean path takes; None otherwise."""
    if not args or args[0] != "explain":
        return None
    sources: list[str] = []
    given: dict[str, object] = {}
    rest = list(args[1:])
    try:
        while rest:
            token = rest.pop(0)
            if token == "-" or not token.startswith("-"):
                sources.append(token)
                continue
            name, eq, attached = token.partition("=")
            if name in _FLAGS and not eq:
                field, value = _FLAGS[name]
                given[field] = value
                continue
            if name not in _VALUES or (eq and not name.startswith("--")):
                raise _Unsure
            if eq:
                value_text = attached
            elif rest and not (rest[0].startswith("-") and rest[0] != "-"):
                value_text = rest.pop(0)
            else:
                raise _Unsure  # no value, or one click might read as an option
            if not value_text or (value_text.startswith("-") and value_text != "-"):
                raise _Unsure  # an empty value, or one that looks like an option
            field = _VALUES[name]
            if field == "rules":
                rules = given.setdefault("rules", [])
                assert isinstance(rules, list)
                rules.append(value_text)
            else:
                given[field] = value_text
    except _Unsure:
        return None
    return (sources, given) if sources else None


def _options(given: dict[str, object]) -> ExplainOptions | None:
    """explain's options converted as the application converts them; None when one of them would
    be refused (the application then says why)."""
    from llamadiag.cli.explain_run import ExplainOptions

    values: dict[str, object] = {}
    kinds = {field: kind for field, kind in _CHOICES.values()}
    for field, raw in given.items():
        if field in kinds:
            if raw not in {member.value for member in kinds[field]}:
                return None
            values[field] = kinds[field](raw)
        elif field == "build":
            values[field] = parse_build(str(raw))
        elif field == "jobs":
            values["processes"] = parse_jobs(str(raw))
        elif field == "output":
            values[field] = Path(str(raw))
        elif field == "rules" and isinstance(raw, list):
            values[field] = [Path(p) for p in raw]
        else:
            values[field] = raw
    if any(values.get(field, 0) is None for field in ("build", "processes")):
        return None
    return ExplainOptions(**values)  # type: ignore[arg-type]  # the fields named above, converted


def _plain_start() -> bool:
    """Whether nothing the application does before a command applies: no shell completion, no
    config file, no notice on stderr, no wildcard to expand."""
    if os.name == "nt" or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return False  # Windows: the application expands wildcards in the arguments itself
    from llamadiag.cli.common import pending_notices
    from llamadiag.cli.config import ConfigError, find

    try:
        if find() is not None:
            return False
    except (ConfigError, OSError):
        return False
    overrides, stale = pending_notices()
    return not overrides and stale is None


def main(args: Sequence[str] | None = None, prog_name: str | None = None) -> NoReturn:
    """Run the command line: `explain` on the lean path when it takes the call whole, else the
    typer application (which also gets every error to word)."""
    with paused():  # explain's modules are imported on the way: they live for the whole run
        call = lean_explain(sys.argv[1:] if args is None else args)
        plain = call is not None and _plain_start()
    if call is None or not plain:
        from llamadiag.cli.group import app

        app(args=args, prog_name=prog_name)
        raise SystemExit(0)  # not reached: the application exits
    from llamadiag.cli.explain_run import run_explain
    from llamadiag.cli.output import quiet_closed_pipe

    quiet_closed_pipe()
    # what the application's standalone mode does with these (typer.core._main)
    try:
        status = run_explain(*call)
    except EOFError:
        print(file=sys.stderr)
        print("Aborted!", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        status = 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        status = 1
    raise SystemExit(status)
