"""`llamadiag lookup` and `llamadiag report`: the support desk's commands.

lookup exits 0 when something matched, 1 when nothing did, 2 for input it cannot read.
report exits 0 when it wrote a draft, 1 when it did not because a rule already explains the
failure (it names the rule), 3 when it did not because there is nothing to report (no error
line, or an empty log), 2 for input it cannot read. Shareable formats
(json, markdown, and every bug-report draft) are redacted unless --no-redact.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console

from llamadiag import __version__
from llamadiag.api import dump
from llamadiag.cli.options import (
    BuildOpt,
    CmdlineOpt,
    DraftFormat,
    Format,
    NoRedactOpt,
    RulesOpt,
    VersionOpt,
    diagnose_source,
    end_with_input_error,
    err,
    fail,
    load,
    redactor_for,
)
from llamadiag.render.terminal import safe
from llamadiag.source.reader import InputError, ReadReport, read_blocks


def _read_query(words: list[str]) -> str:
    if words != ["-"]:
        return " ".join(words)
    if sys.stdin.isatty():
        raise fail("reading a query from the terminal: pipe the text in, or give it as arguments")
    try:
        return "\n".join(line for block in read_blocks("-", ReadReport("<stdin>")) for line in block)
    except InputError as exc:
        raise fail(str(exc)) from exc


def lookup(
    query: Annotated[
        list[str] | None,
        typer.Argument(help="Error text, an issue or PR number (30204, #30257), a rule id or words; - reads stdin."),
    ] = None,
    build: BuildOpt = None,
    cmdline: CmdlineOpt = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.rich,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=50, help="How many results.")] = 5,
    no_redact: NoRedactOpt = False,
    rules: RulesOpt = None,
) -> None:
    """Find the known issues behind an error text, an issue number or a build with its flags."""
    from llamadiag.features.lookup.service import lookup as run_lookup
    from llamadiag.render.lookup import lookup_markdown, print_lookup

    text = _read_query(query or [])
    k = load(rules)
    resp = run_lookup(k, text, build, cmdline, limit)
    if fmt is Format.rich:
        if not resp.error:
            print_lookup(Console(highlight=False), resp)
    else:
        redactor = redactor_for(no_redact)
        redactor.learn_input([text, cmdline or ""])  # a value the rule text quotes gets its stand-in
        resp = redactor.model(resp)
        summary = redactor.summary()
        if fmt is Format.json:
            typer.echo(json.dumps(resp.model_dump(mode="json") | {"redaction": dump(summary)}, indent=2))
        else:
            versions = f"llamadiag {__version__}, rules {k.digest}"
            typer.echo(lookup_markdown(resp, versions, summary.line()), nl=False)
    if resp.error:
        err.print(safe(f"llamadiag: {resp.error}"))
        raise typer.Exit(2)
    raise typer.Exit(0 if resp.results else 1)


def report(
    source: Annotated[str, typer.Argument(help="Log file (plain or compressed), or - for stdin.")],
    cmdline: CmdlineOpt = None,
    version_text: VersionOpt = None,
    build: BuildOpt = None,
    fmt: Annotated[
        DraftFormat, typer.Option("--format", "-f", help="markdown (default, for the issue form) or json.")
    ] = DraftFormat.markdown,
    force: Annotated[
        bool, typer.Option("--force", help="Draft even when a rule explains the failure or no error line shows.")
    ] = False,
    no_redact: NoRedactOpt = False,
    rules: RulesOpt = None,
) -> None:
    """Draft an upstream bug report (llama.cpp's issue form) for a failure no rule explains.

    Exit 0: a draft was written; 1: no draft, a rule already explains the failure (run explain);
    3: no draft, nothing to report (no error line, or an empty log); 2: unreadable input."""
    from llamadiag.features.bugreport import draft_report, no_draft
    from llamadiag.render.markdown import draft_markdown

    k = load(rules)
    diagnosis = diagnose_source(k, source, cmdline, version_text, build, unmatched=True)
    rep = diagnosis.report
    templates, rep.unmatched = rep.unmatched, []  # the draft lists them itself
    refusal = None if force else no_draft(rep, templates, source)
    if refusal is not None:
        if fmt is DraftFormat.json:  # shareable: the path given may hold a user name
            shown = no_draft(rep, templates, redactor_for(no_redact).text(source)) or refusal
            typer.echo(shown.model_dump_json(indent=2))
        err.print(safe(f"llamadiag: {refusal.message}"))
    elif fmt is DraftFormat.json:
        typer.echo(draft_report(rep, templates, redactor_for(no_redact)).model_dump_json(indent=2))
    else:
        typer.echo(draft_markdown(draft_report(rep, templates, redactor_for(no_redact))), nl=False)
    end_with_input_error(diagnosis)
    raise typer.Exit(0 if refusal is None else 1 if refusal.reason == "explained" else 3)
