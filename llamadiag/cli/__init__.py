"""The command line. This module only creates the application and registers the commands;
each command lives in the module of its group and reaches the engine through `llamadiag.api`.

    explain.py   explain, facts, compare      lookup.py   lookup, report
    probe.py     probe (a live server)
    watch.py     watch                        desk.py     desk
    rules.py     rules list|show|test|lint|schema|docs     export.py   rules export
    options.py   formats, shared options, errors, rule loading
    config.py    option defaults from a config file
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from llamadiag import __version__
from llamadiag.cli import desk, explain, export, lookup, probe, rules, watch
from llamadiag.cli.helptext import HelpGroup
from llamadiag.cli.output import quiet_closed_pipe

app = typer.Typer(
    cls=HelpGroup,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    help="Diagnose llama.cpp llama-server logs: known failures, causes, fixes and how to verify them.",
)


def _version_callback(value: bool) -> None:
    if value:
        from llamadiag import api

        k = api.load_knowledge()
        typer.echo(f"llamadiag {__version__} (rules {k.digest}, {len(k.rules)} rules; Python {sys.version.split()[0]})")
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
    if ctx.invoked_subcommand != "watch":  # watch ends by SIGPIPE itself, like a stream filter
        quiet_closed_pipe()
    from llamadiag.cli.config import apply

    apply(ctx)  # option defaults from llamadiag.toml / [tool.llamadiag] (docs/config.md)


app.command()(explain.explain)
app.command()(explain.facts)
app.command()(explain.compare)
app.command()(lookup.lookup)
app.command()(lookup.report)
app.command()(watch.watch)
app.command()(desk.desk)
app.command("probe")(probe.probe_cmd)
app.command("fleet")(__import__("llamadiag.cli.fleet", fromlist=["fleet"]).fleet)

rules_app = typer.Typer(cls=HelpGroup, no_args_is_help=True, help="Inspect, test and lint the rules.")
rules_app.command("list")(rules.list_rules)
rules_app.command("show")(rules.show)
rules_app.command("test")(rules.test)
rules_app.command("lint")(rules.lint)
rules_app.command("schema")(rules.schema)
rules_app.command("docs")(rules.docs)
rules_app.command("export")(export.export)
app.add_typer(rules_app, name="rules")

__all__ = ["app"]
