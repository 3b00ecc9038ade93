"""The typer declarations of the options commands share (`OutputOpt`, `RulesOpt` ...) and the
parsers of their values; what commands share beyond typer (formats, errors, rule loading) is in
common.py and re-exported here.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 usage, input
or rule-loading error (ruff/semgrep convention; the reverse of grep's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from llamadiag.cli.common import (
    CONFIDENCE_RANK,
    SEVERITY_RANK,
    Color,
    CommandExit,
    DraftFormat,
    ExplainFormat,
    FailConfidence,
    FailOn,
    Format,
    ViewFormat,
    deferred_console,
    diagnose_source,
    end_with_input_error,
    err,
    fail,
    fails,
    load,
    paged,
    parse_build,
    redactor_for,
    report_rule_errors,
    safe,
    terminal,
)

__all__ = [
    "CONFIDENCE_RANK",
    "SEVERITY_RANK",
    "Color",
    "CommandExit",
    "DraftFormat",
    "ExplainFormat",
    "FailConfidence",
    "FailOn",
    "Format",
    "ViewFormat",
    "deferred_console",
    "diagnose_source",
    "end_with_input_error",
    "err",
    "fail",
    "fails",
    "load",
    "paged",
    "parse_build",
    "redactor_for",
    "report_rule_errors",
    "safe",
    "terminal",
]

OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the output to FILE instead of standard output (replaced in one step, never half-written).",
    ),
]


FailOnOpt = Annotated[
    FailOn,
    typer.Option("--fail-on", help="Exit 1 when a finding has at least this severity (none: never)."),
]
FailConfidenceOpt = Annotated[
    FailConfidence,
    typer.Option(
        "--fail-confidence", help="Only findings at least this sure set exit 1 (confirmed includes regression)."
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors; the exit status tells.")]
ColorOpt = Annotated[
    Color, typer.Option("--color", help="Colour in the terminal view (auto honours NO_COLOR and FORCE_COLOR).")
]
PagerOpt = Annotated[
    bool, typer.Option("--pager/--no-pager", help="Page a long terminal view (only when stdout is a terminal).")
]

RulesOpt = Annotated[
    list[Path] | None, typer.Option("--rules", help="Extra rule folder (repeatable); overrides shipped rules by id.")
]
CmdlineOpt = Annotated[
    str | None, typer.Option("--cmdline", help="The llama-server command line, when the log lacks it.")
]


def build_number(value: str | int) -> int:
    """`--build`: 11503 or b11503 (as `llama-server --version` and the release tags say it)."""
    number = parse_build(value)
    if number is None:
        raise typer.BadParameter(f"{value!r} is not a build number; give it as 11503 or b11503")
    return number


def version_text(value: str) -> str:
    """`--version-text`: the output of `llama-server --version`, or a file holding it. A file
    that exists but cannot be read is an error, not text."""
    path = Path(value)
    try:
        exists = "\n" not in value and path.exists()
    except (OSError, ValueError):  # a name too long for a path: text
        exists = False
    if not exists:
        return value
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {value}: {exc.strerror or exc}") from exc


VersionOpt = Annotated[
    str | None,
    typer.Option(
        "--version-text",
        parser=version_text,
        metavar="TEXT|FILE",
        help="Output of `llama-server --version`, or a file holding it.",
    ),
]
BuildOpt = Annotated[
    int | None,
    typer.Option(
        "--build",
        parser=build_number,
        metavar="bNNNN",
        help="The build number (b11503 or 11503), when nothing else gives it.",
    ),
]
ProgressOpt = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr for large files (terminal only).")
]
ServerOpt = Annotated[
    str | None,
    typer.Option(
        "--server",
        help="A running llama-server (e.g. http://127.0.0.1:8080): its build and settings fill what the log "
        "does not say (GET only; loopback unless --allow-remote).",
    ),
]
ApiKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        help="The server's API key for --server / probe (sent as a Bearer token; default: the variable "
        "llama-server reads its key from, see docs/probe.md).",
    ),
]
AllowRemoteOpt = Annotated[
    bool, typer.Option("--allow-remote", help="Allow a server that is not on this machine (loopback is the default).")
]
NoRedactOpt = Annotated[
    bool, typer.Option("--no-redact", help="Keep keys, prompts, addresses and user names in shareable output.")
]
