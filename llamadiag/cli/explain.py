"""explain, facts and compare: diagnose logs and show what they say."""

from __future__ import annotations

from typing import Annotated

import typer

from llamadiag.api import ServerFacts
from llamadiag.cli.common import parse_jobs
from llamadiag.cli.explain_run import ExplainOptions, run_explain
from llamadiag.cli.options import (
    AllowRemoteOpt,
    ApiKeyOpt,
    BuildOpt,
    CmdlineOpt,
    Color,
    ColorOpt,
    ExplainFormat,
    FailConfidence,
    FailConfidenceOpt,
    FailOn,
    FailOnOpt,
    Format,
    OutputOpt,
    PagerOpt,
    ProgressOpt,
    QuietOpt,
    RulesOpt,
    ServerOpt,
    VersionOpt,
    diagnose_source,
    fails,
    load,
)
from llamadiag.cli.writers import write_facts, write_to


def explain(
    sources: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG",
            help="Log files (plain, gz, zst, xz, bz2; UTF-8 or UTF-16), or - for stdin; each is diagnosed on its own.",
        ),
    ],
    fmt: Annotated[
        ExplainFormat,
        typer.Option(
            "--format",
            "-f",
            help="Output format: rich (the view), json, markdown (a ticket reply), jsonl (one finding per line), "
            "sarif (SARIF 2.1.0, one run per log), github (GitHub Actions annotations).",
        ),
    ] = ExplainFormat.rich,
    output: OutputOpt = None,
    cmdline: CmdlineOpt = None,
    version_text: VersionOpt = None,
    build: BuildOpt = None,
    fail_on: FailOnOpt = FailOn.error,
    fail_confidence: FailConfidenceOpt = FailConfidence.possible,
    why: Annotated[bool, typer.Option("--why", help="Show each condition and the rules that were ruled out.")] = False,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Keep keys, prompts, addresses and user names (every format but rich).")
    ] = False,
    unmatched: Annotated[
        bool, typer.Option("--unmatched", help="Also list warning/error lines no rule explains, as templates.")
    ] = False,
    rules: RulesOpt = None,
    show_progress: ProgressOpt = True,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    allow_remote: AllowRemoteOpt = False,
    quiet: QuietOpt = False,
    color: ColorOpt = Color.auto,
    pager: PagerOpt = True,
    jobs: Annotated[
        str,
        typer.Option(
            "--jobs",
            "-j",
            metavar="N|auto",
            help="Processes that scan one large plain log (32 MB or more) in byte ranges split where the server "
            "restarted, merged into the same report; auto: the usable cores. Standard input, compressed and "
            "UTF-16 logs, --unmatched and --server are read by one.",
        ),
    ] = "1",
) -> None:
    """Diagnose llama-server logs: what failed, why, the fix and how to verify it. The exit status
    is the worst of the logs: 2 for one that cannot be read, 1 for a finding at --fail-on."""
    processes = _jobs(jobs)
    options = ExplainOptions(
        fmt,
        output,
        cmdline,
        version_text,
        build,
        fail_on,
        fail_confidence,
        why,
        no_redact,
        unmatched,
        rules,
        show_progress,
        quiet,
        color,
        pager,
        processes,
        live=lambda: _live(server, api_key, allow_remote),
    )
    raise typer.Exit(run_explain(sources, options))


def facts(
    source: Annotated[str, typer.Argument(help="Log file or - for stdin.")],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format: rich, json or markdown.")] = Format.rich,
    output: OutputOpt = None,
    cmdline: CmdlineOpt = None,
    version_text: VersionOpt = None,
    build: BuildOpt = None,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Keep paths, addresses and keys in json and markdown.")
    ] = False,
    rules: RulesOpt = None,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    allow_remote: AllowRemoteOpt = False,
) -> None:
    """Show what the log says about the server: build, era, backends, model, flags ..., with source lines."""
    k = load(rules)
    live, origin = _live(server, api_key, allow_remote)
    report = diagnose_source(k, source, cmdline, version_text, build, server_facts=live).report
    report.notes[:0] = origin
    write_to(output, lambda out: write_facts(report, fmt, no_redact, out))


def _live(server: str | None, api_key: str | None, allow_remote: bool) -> tuple[ServerFacts | None, list[str]]:
    """The facts of the live server of --server, and a note naming it (a failed probe ends the
    command: exit 2)."""
    if not server:
        return None, []
    from llamadiag.cli.probe import probe_server

    result = probe_server(server, api_key, allow_remote)
    asked = ", ".join(a.path for a in result.answers.values() if a.ok)
    return result.server_facts, [f"live server {result.url} asked ({asked}); its facts say 'from /props' etc."]


def compare(
    before: Annotated[str, typer.Argument(help="Log from before the fix.")],
    after: Annotated[str, typer.Argument(help="Log from after the fix.")],
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.rich,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Exit 1 when AFTER has a new finding of at least this severity.")
    ] = FailOn.error,
    rules: RulesOpt = None,
) -> None:
    """Compare two logs: throughput (median and p90: a loss, or a gain too large to trust), draft
    acceptance, errors, whether each finding is gone, and which failures are new in AFTER. Exit 1
    when a finding of BEFORE is not fixed or AFTER has a new one at or above --fail-on."""
    from llamadiag import __version__
    from llamadiag.features.compare import compare_logs
    from llamadiag.render.compare import compare_json, compare_markdown, print_compare

    k = load(rules)
    rb = diagnose_source(k, before, None, None, None).report
    ra = diagnose_source(k, after, None, None, None).report
    c = compare_logs(k, rb, ra, after)
    if fmt is Format.json:
        typer.echo(compare_json(c))
    elif fmt is Format.markdown:
        typer.echo(compare_markdown(c, f"llamadiag {__version__}, rules {k.digest}"), nl=False)
    else:
        from rich.console import Console

        print_compare(Console(highlight=False), c)
    broken = fails(c.new, fail_on, FailConfidence.possible)
    raise typer.Exit(0 if all(v.fixed for v in c.verdicts) and not broken else 1)


def _jobs(value: str) -> int:
    """--jobs: a number of processes (at least 1), or auto for the usable cores."""
    number = parse_jobs(value)
    if number is None:
        raise typer.BadParameter(f"{value!r}: give a number of processes (1 or more) or auto", param_hint="--jobs")
    return number
