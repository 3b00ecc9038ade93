"""The typer application: it registers the commands; each lives in the module of its group and
reaches the engine through `llamadiag.api`.

    explain.py   explain, facts, compare      lookup.py   lookup, report
    probe.py     probe (a live server)        fleet.py    fleet (many logs)
    watch.py     watch                        desk.py     desk
    rules.py     rules list|show|new|test|lint|schema|docs     export.py   rules export
    options.py   shared options (typer)       common.py   formats, errors, rule loading (no typer)
    config.py    option defaults from a config file

Commands are registered by name and imported when run (lazy.py): `--help`, `--version` and shell
completion import neither the analyzer nor rich. A new command is a `LazyCommand` below, its help
the first sentence of its docstring (tests/cli/test_startup.py fails when they differ). The
console script enters through entry.py, which runs a plain `explain` without this application.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from llamadiag import __version__
from llamadiag.cli.lazy import LazyCommand, lazy_group

RULES = [
    LazyCommand("list", "rules:list_rules", "All rules: id, category, severity, fixed in, title and source file."),
    LazyCommand("show", "rules:show", "One rule as YAML (or JSON), with its file."),
    LazyCommand("new", "rules:new", "Write a skeleton rule file to fill in."),
    LazyCommand(
        "test",
        "rules:test",
        "Run every rule's inline examples and the annotated corpus (sample_logs/) through the engine.",
    ),
    LazyCommand("lint", "rules:lint", "Check rules: patterns, captures, references, examples, verification."),
    LazyCommand("schema", "rules:schema", "The JSON Schema of rule files, generated from the pydantic models."),
    LazyCommand("docs", "rules:docs", "Generate docs/rules/<id>.md and an index table from the rule files."),
    LazyCommand("export", "export:export", "Export the signatures of the rules for other tools (grep, Sigma, Loki)."),
]
rules_app = typer.Typer(
    cls=lazy_group(RULES), no_args_is_help=True, rich_markup_mode=None, help="Inspect, test and lint the rules."
)

COMMANDS = [
    LazyCommand(
        "explain", "explain:explain", "Diagnose llama-server logs: what failed, why, the fix and how to verify it."
    ),
    LazyCommand(
        "facts",
        "explain:facts",
        "Show what the log says about the server: build, era, backends, model, flags ..., with source lines.",
    ),
    LazyCommand(
        "compare",
        "explain:compare",
        "Compare two logs: throughput (median and p90: a loss, or a gain too large to trust), draft acceptance, "
        "errors, whether each finding is gone, and which failures are new in AFTER.",
    ),
    LazyCommand(
        "lookup",
        "lookup:lookup",
        "Find the known issues behind an error text, an issue number or a build with its flags.",
    ),
    LazyCommand(
        "report",
        "lookup:report",
        "Draft an upstream bug report (llama.cpp's issue form) for a failure no rule explains.",
    ),
    LazyCommand(
        "watch",
        "watch:watch",
        "Watch a live log: report each finding as its evidence completes, once per cause and run.",
    ),
    LazyCommand(
        "desk",
        "desk:desk",
        "Serve the support desk: paste a log or look up an error in a browser, or use its JSON API.",
    ),
    LazyCommand(
        "probe",
        "probe:probe_cmd",
        "Ask a running llama-server what it is: GET /health, /props, /slots, /metrics, /v1/models.",
    ),
    LazyCommand(
        "fleet",
        "fleet:fleet",
        "Diagnose a fleet: which instances hit which known failure, on which builds, what to upgrade.",
    ),
    LazyCommand("rules", "group:rules_app", "Inspect, test and lint the rules."),
]

app = typer.Typer(
    cls=lazy_group(COMMANDS),
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    help="Diagnose llama.cpp llama-server logs: known failures, causes, fixes and how to verify them.",
)


def _version_callback(value: bool) -> None:
    if value:
        # the digest of the knowledge files and their count, without loading them (start-up stays short)
        from llamadiag.knowledge.files import knowledge_digest, rule_files

        typer.echo(
            f"llamadiag {__version__} (rules {knowledge_digest()}, {len(rule_files())} rule files; "
            f"Python {sys.version.split()[0]})"
        )
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version and rule count."),
    ] = False,
) -> None:
    """llamadiag: a troubleshooting expert system for llama-server."""
    from llamadiag.cli.config import apply
    from llamadiag.cli.output import quiet_closed_pipe

    if ctx.invoked_subcommand != "watch":  # watch ends by SIGPIPE itself, like a stream filter
        quiet_closed_pipe()
    apply(ctx)  # option defaults from llamadiag.toml / [tool.llamadiag] (docs/config.md)
    _rule_notices()


def _rule_notices() -> None:
    """On stderr, before a command: user rules that replace shipped ones, and (once per state) a
    checkout whose rules/ the installed llamadiag does not use."""
    from llamadiag import cache
    from llamadiag.cli.common import pending_notices

    overrides, stale = pending_notices()
    for path in overrides:
        typer.echo(f"llamadiag: note: user rule {path} overrides the shipped rule {path.stem!r}", err=True)
    if stale is not None:
        cache.write(f"checkout-{stale[2]}", b"told")
        typer.echo(
            f"llamadiag: warning: the rules in this checkout ({stale[0]}) differ from the installed ones "
            f"({stale[1]}), which are used. Reinstall after editing, or install with `pip install -e .` "
            "to use the checkout's rules (docs/rule-format.md).",
            err=True,
        )


__all__ = ["COMMANDS", "RULES", "app", "rules_app"]
