"""The command line: wiring only. Each command reads input, runs the engine, renders.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 usage, input
or rule-loading error (ruff/semgrep convention; the reverse of grep's).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from llamadiag import __version__, progress
from llamadiag.analyze import Analyzer
from llamadiag.blocks import read_byte_blocks
from llamadiag.findings import Report
from llamadiag.knowledge import Knowledge
from llamadiag.reader import InputError, ReadReport
from llamadiag.render_markdown import report_markdown
from llamadiag.render_rich import print_report, safe
from llamadiag.rulemodel import Severity
from llamadiag.session import checked_knowledge

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    help="Diagnose llama.cpp llama-server logs: known failures, causes, fixes and how to verify them.",
)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class Format(str, Enum):
    rich = "rich"
    json = "json"
    markdown = "markdown"


RulesOpt = Annotated[
    list[Path] | None, typer.Option("--rules", help="Extra rule folder (repeatable); overrides shipped rules by id.")
]
CmdlineOpt = Annotated[
    str | None, typer.Option("--cmdline", help="The llama-server command line, when the log lacks it.")
]
VersionOpt = Annotated[str | None, typer.Option("--version-text", help="Output of `llama-server --version`.")]
BuildOpt = Annotated[int | None, typer.Option("--build", help="The build number (bNNNN), when nothing else gives it.")]
ProgressOpt = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr for large files (terminal only).")
]


def fail(message: str) -> typer.Exit:
    err.print(safe(f"llamadiag: {message}"))
    return typer.Exit(2)


def load(rules: list[Path] | None) -> Knowledge:
    try:
        k = checked_knowledge(rules or [])
    except Exception as exc:  # a broken shipped knowledge file: nothing can run
        raise fail(str(exc)) from exc
    return k


def report_rule_errors(k: Knowledge) -> bool:
    for e in k.errors:
        err.print(safe(f"llamadiag: rule error: {e}"))
    return bool(k.errors)


def analyze_source(
    k: Knowledge,
    source: str,
    cmdline: str | None,
    version_text: str | None,
    build: int | None,
    every_line: bool = False,
    on_entry: Callable[..., None] | None = None,
    show_progress: bool = True,
) -> tuple[Report, Analyzer, ReadReport]:
    if source == "-" and sys.stdin.isatty():
        raise fail("reading a log from the terminal: pipe a log in, or give a file name")
    analyzer = Analyzer(k, cmdline, version_text, build, every_line=every_line)
    analyzer.on_entry = on_entry
    read_report = ReadReport(source)
    try:
        with progress.bar(source, progress.wanted(source, show_progress)) as update:
            for block in read_byte_blocks(source, read_report, on_block=update):
                analyzer.feed_bytes(block)
    except InputError as exc:
        raise fail(str(exc)) from exc
    info = {
        "name": read_report.name,
        "lines": read_report.lines,
        "bytes": read_report.bytes_read,
        "compression": read_report.compression,
        "encoding": read_report.encoding,
    }
    notes = read_report.notes()
    if read_report.lines == 0:
        notes.append("the input is empty: nothing to diagnose")
    report = analyzer.report(info, notes)
    return report, analyzer, read_report


def _drain(items: list[Any]) -> Iterator[Any]:
    """The items in order, each let go of as it is handed out."""
    items.reverse()
    while items:
        yield items.pop()


def _version_callback(value: bool) -> None:
    if value:
        k = checked_knowledge()
        typer.echo(f"llamadiag {__version__} (rules {k.digest}, {len(k.rules)} rules; Python {sys.version.split()[0]})")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version and rule count."),
    ] = False,
) -> None:
    """llamadiag: a troubleshooting expert system for llama-server."""


@app.command()
def explain(
    source: Annotated[str, typer.Argument(help="Log file (plain, gz, zst, xz, bz2; UTF-8 or UTF-16), or - for stdin.")],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.rich,
    cmdline: CmdlineOpt = None,
    version_text: VersionOpt = None,
    build: BuildOpt = None,
    fail_on: Annotated[
        Severity, typer.Option("--fail-on", help="Exit 1 when a finding has at least this severity.")
    ] = Severity.error,
    why: Annotated[bool, typer.Option("--why", help="Show each condition and the rules that were ruled out.")] = False,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Keep keys, prompts, addresses and user names in json/markdown.")
    ] = False,
    unmatched: Annotated[
        bool, typer.Option("--unmatched", help="Also list warning/error lines no rule explains, as templates.")
    ] = False,
    rules: RulesOpt = None,
    show_progress: ProgressOpt = True,
) -> None:
    """Diagnose a llama-server log: what failed, why, the fix and how to verify it."""
    k = load(rules)
    collector = None
    if unmatched:
        from llamadiag.templating import UnmatchedCollector

        collector = UnmatchedCollector([r.rule.id for r in k.rules])
    report, analyzer, read_report = analyze_source(
        k,
        source,
        cmdline,
        version_text,
        build,
        every_line=unmatched,
        on_entry=collector.observe if collector else None,
        show_progress=show_progress,
    )
    del analyzer  # its scanning state is not needed to render: free it before the report is copied
    if collector is not None:
        report.unmatched = collector.templates(report)
    worst = max((Severity(f.severity).rank for f in report.findings), default=-1)
    if fmt is Format.json:  # shareable: redacted unless asked not to (the terminal shows everything)
        from llamadiag.cli_lookup import redactor_for
        from llamadiag.redact import redact_data

        # one copy of a long log's report at a time: each run and finding is dumped and let go
        runs, report.runs = report.runs, []
        findings, report.findings = report.findings, []
        data = report.model_dump(mode="json")
        del report
        data["runs"] = [item.model_dump(mode="json") for item in _drain(runs)]
        data["findings"] = [item.model_dump(mode="json") for item in _drain(findings)]
        data, redaction = redact_data(data, redactor_for(no_redact))
        if not why:
            del data["ruled_out"]
        data["redaction"] = redaction.model_dump()
        # written as it is encoded: an indented json.dumps of a report with hundreds of runs
        # would hold several copies of it at once (the same bytes either way)
        for chunk in json.JSONEncoder(indent=2).iterencode(data):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
    elif fmt is Format.markdown:
        from llamadiag.cli_lookup import redactor_for
        from llamadiag.redact import redact_report

        report, redaction = redact_report(report, redactor_for(no_redact))
        typer.echo(report_markdown(report, redaction.line()), nl=False)
    else:
        print_report(Console(highlight=False), report, why)
    broken = report_rule_errors(k)
    if read_report.error:
        err.print(safe(f"llamadiag: {read_report.error}"))
    if broken or read_report.error:
        raise typer.Exit(2)
    raise typer.Exit(1 if worst >= fail_on.rank else 0)


@app.command()
def facts(
    source: Annotated[str, typer.Argument(help="Log file or - for stdin.")],
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.rich,
    cmdline: CmdlineOpt = None,
    version_text: VersionOpt = None,
    build: BuildOpt = None,
    no_redact: Annotated[bool, typer.Option("--no-redact", help="Keep paths, addresses and keys in json.")] = False,
    rules: RulesOpt = None,
) -> None:
    """Show what the log says about the server: build, era, backends, model, flags ..., with source lines."""
    k = load(rules)
    report, _, _ = analyze_source(k, source, cmdline, version_text, build)
    if fmt is Format.json:
        from llamadiag.cli_lookup import redactor_for
        from llamadiag.redact import redact_report

        report, _ = redact_report(report, redactor_for(no_redact))
        typer.echo(json.dumps([r.model_dump(mode="json") for r in report.runs], indent=2))
        raise typer.Exit(0)
    console = Console(highlight=False)
    from rich.table import Table

    for run in report.runs:
        table = Table(
            title=f"run {run.index} (lines {run.first_line}-{run.last_line})"
            + (f", instance {run.instance}" if run.instance else ""),
            title_justify="left",
        )
        table.add_column("fact")
        table.add_column("value")
        table.add_column("from")
        for name, use in run.fact_sources.items():
            table.add_row(name, safe(use.value), f"line {use.line}" if use.line else use.source)
        console.print(table)
        if run.stats:
            console.print(safe(f"  requests: {json.dumps(run.stats)}"))
    if not report.runs:
        console.print("no server run found in the input")


@app.command()
def compare(
    before: Annotated[str, typer.Argument(help="Log from before the fix.")],
    after: Annotated[str, typer.Argument(help="Log from after the fix.")],
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.rich,
    rules: RulesOpt = None,
) -> None:
    """Compare two logs: throughput, draft acceptance, errors, and whether each finding is gone."""
    from llamadiag.compare import compare as run_compare
    from llamadiag.render_compare import print_compare

    k = load(rules)
    rb, _, _ = analyze_source(k, before, None, None, None)
    ra, _, _ = analyze_source(k, after, None, None, None)
    verdicts = run_compare(k, rb, ra, after)
    if fmt is Format.json:
        typer.echo(
            json.dumps(
                {
                    "before": [r.stats | {"run": r.index} for r in rb.runs],
                    "after": [r.stats | {"run": r.index} for r in ra.runs],
                    "findings": [
                        {
                            "rule_id": v.rule_id,
                            "gone": v.gone,
                            "fixed": v.fixed,
                            "checks": [c.__dict__ for c in v.checks],
                        }
                        for v in verdicts
                    ],
                },
                indent=2,
            )
        )
    else:
        print_compare(Console(highlight=False), rb, ra, verdicts)
    raise typer.Exit(0 if all(v.fixed for v in verdicts) else 1)


from llamadiag import cli_lookup, cli_rules  # noqa: E402, F401  (cli_lookup registers lookup and report)

app.add_typer(cli_rules.rules_app, name="rules")

from llamadiag import cli_watch  # noqa: E402  (registers the `watch` command)

app.command()(cli_watch.watch)
from llamadiag import cli_desk, cli_export  # noqa: E402, F401  (register `desk` and `rules export`)
