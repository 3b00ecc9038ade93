"""`llamadiag lookup` and `llamadiag report`: the support desk's commands.

lookup exits 0 when something matched, 1 when nothing did, 2 for input it cannot read.
report exits 0 when it wrote a draft, 2 for input it cannot read. Shareable formats
(json, markdown, and every bug-report draft) are redacted unless --no-redact.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from llamadiag import __version__
from llamadiag.cli import BuildOpt, CmdlineOpt, Format, RulesOpt, VersionOpt, analyze_source, app, err, fail, load
from llamadiag.reader import InputError, ReadReport, read_blocks
from llamadiag.render_rich import safe

if TYPE_CHECKING:
    from llamadiag.redact import Redactor

NoRedactOpt = Annotated[
    bool, typer.Option("--no-redact", help="Keep keys, prompts, addresses and user names in shareable output.")
]


def redactor_for(no_redact: bool) -> Redactor:
    from llamadiag.redact import Redactor  # imported when used: `explain` start-up stays short

    if no_redact:
        err.print(safe("llamadiag: warning: --no-redact: the output may hold API keys, prompts, IPs and user names"))
    return Redactor(enabled=not no_redact)


def _read_query(words: list[str]) -> str:
    if words != ["-"]:
        return " ".join(words)
    if sys.stdin.isatty():
        raise fail("reading a query from the terminal: pipe the text in, or give it as arguments")
    try:
        return "\n".join(line for block in read_blocks("-", ReadReport("<stdin>")) for line in block)
    except InputError as exc:
        raise fail(str(exc)) from exc


@app.command()
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
    from llamadiag.lookup import lookup as run_lookup
    from llamadiag.render_lookup import lookup_markdown, print_lookup

    text = _read_query(query or [])
    k = load(rules)
    resp = run_lookup(k, text, build, cmdline, limit)
    if fmt is Format.rich:
        if not resp.error:
            print_lookup(Console(highlight=False), resp)
    else:
        redactor = redactor_for(no_redact)
        redactor.learn([text, cmdline or ""])
        resp = redactor.model(resp)
        summary = redactor.summary()
        if fmt is Format.json:
            typer.echo(json.dumps(resp.model_dump(mode="json") | {"redaction": summary.model_dump()}, indent=2))
        else:
            versions = f"llamadiag {__version__}, rules {k.digest}"
            typer.echo(lookup_markdown(resp, versions, summary.line()), nl=False)
    if resp.error:
        err.print(safe(f"llamadiag: {resp.error}"))
        raise typer.Exit(2)
    raise typer.Exit(0 if resp.results else 1)


@app.command()
def report(
    source: Annotated[str, typer.Argument(help="Log file (plain or compressed), or - for stdin.")],
    cmdline: CmdlineOpt = None,
    version_text: VersionOpt = None,
    build: BuildOpt = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="markdown (default) or json.")] = Format.markdown,
    no_redact: NoRedactOpt = False,
    rules: RulesOpt = None,
) -> None:
    """Draft an upstream bug report (llama.cpp's issue form) for a failure no rule explains."""
    from llamadiag.bugreport import draft_markdown, draft_report
    from llamadiag.templating import UnmatchedCollector

    k = load(rules)
    collector = UnmatchedCollector([r.rule.id for r in k.rules])
    rep, _, read_report = analyze_source(
        k, source, cmdline, version_text, build, every_line=True, on_entry=collector.observe
    )
    redactor = redactor_for(no_redact)
    draft = draft_report(rep, collector.templates(rep), redactor)
    if fmt is Format.json:
        typer.echo(draft.model_dump_json(indent=2))
    else:
        typer.echo(draft_markdown(draft), nl=False)
    if read_report.error:
        err.print(safe(f"llamadiag: {read_report.error}"))
        raise typer.Exit(2)
    raise typer.Exit(0)
