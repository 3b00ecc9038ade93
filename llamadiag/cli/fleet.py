"""`llamadiag fleet SOURCES...`: diagnose many logs (one per instance) and report on the fleet.

The per-log work runs on a local process pool (default), a Dask LocalCluster (`--workers N`) or
an existing Dask cluster (`--scheduler tcp://HOST:8786`); see docs/fleet.md.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from llamadiag.cli.options import (
    FailConfidence,
    FailOn,
    FailOnOpt,
    Format,
    NoRedactOpt,
    RulesOpt,
    err,
    fail,
    fails,
    load,
    redactor_for,
)
from llamadiag.features import fleet as fl
from llamadiag.render.terminal import safe


def fleet(
    sources: Annotated[
        list[str],
        typer.Argument(help="Logs: files, folders, globs, tar/zip archives, fsspec URLs (s3://, memory://)."),
    ],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.rich,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML page here.")] = None,
    processes: Annotated[
        int | None, typer.Option("--processes", "-p", min=1, help="Local pool size (default: the CPU count).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Start a Dask LocalCluster of N worker processes.")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Run on an existing Dask cluster (tcp://HOST:8786).")
    ] = None,
    split_above: Annotated[
        int,
        typer.Option(
            "--split-above",
            min=0,
            metavar="MB",
            help="Scan a plain local log bigger than this many MB as byte ranges on several workers (0: never).",
        ),
    ] = 256,
    fail_on: FailOnOpt = FailOn.error,
    show_progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="A progress bar per log on stderr (terminal only).")
    ] = True,
    no_redact: NoRedactOpt = False,
    rules: RulesOpt = None,
) -> None:
    """Diagnose a fleet: which instances hit which known failure, on which builds, what to upgrade."""
    if workers and scheduler:
        raise fail("give --workers or --scheduler, not both")
    k = load(rules)
    tasks, bad = fl.expand(sources)
    for b in bad:
        err.print(safe(f"llamadiag: not read: {b.source}: {b.error}"))
    if not tasks:
        raise fail("no log to read")
    rule_dirs = tuple(str(r) for r in rules or [])
    try:
        with (
            _backend(processes, workers, scheduler) as (backend, dashboard),
            _progress(len(tasks), show_progress, dashboard) as progress,
        ):
            # in one process a split log is only read in more pieces: nothing to gain
            split = 0 if type(backend) is fl.SerialBackend else split_above << 20
            summary = fl.run(tasks, backend, rule_dirs, progress, knowledge=k, split_above=split)
    except RuntimeError as exc:
        raise fail(str(exc)) from exc
    report = fl.build_report(summary, k)
    if fmt is not Format.rich or html:
        report = fl.redacted(report, redactor_for(no_redact).text)
    if fmt is Format.json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    elif fmt is Format.markdown:
        from llamadiag.render.fleet import fleet_markdown

        typer.echo(fleet_markdown(report))
    else:
        from llamadiag.render.fleet import print_fleet

        print_fleet(Console(highlight=False), report)
    if html:
        from llamadiag.render.fleet_html import fleet_html

        html.write_text(fleet_html(report), encoding="utf-8")
    if bad or report.errors:
        raise typer.Exit(2)
    # a failure row has the best confidence it had on any instance
    raise typer.Exit(1 if fails(report.failures, fail_on, FailConfidence.possible) else 0)


@contextmanager
def _backend(
    processes: int | None, workers: int | None, scheduler: str | None
) -> Iterator[tuple[fl.Backend, str | None]]:
    if workers or scheduler:
        from llamadiag.features.fleet.dask_backend import DaskBackend, dashboard_link, dask_client

        with dask_client(workers, scheduler) as client:
            yield DaskBackend(client), dashboard_link(client)
        return
    n = processes or os.cpu_count() or 1
    if n == 1:
        yield fl.SerialBackend(), None
        return
    with fl.WorkerPool(n) as pool:
        yield fl.PoolBackend(pool), None


@contextmanager
def _progress(total: int, enabled: bool, dashboard: str | None) -> Iterator[fl.Progress]:
    """Per-log progress on stderr (a bar on a terminal), and a line for each log that fails."""
    if dashboard:
        err.print(safe(f"llamadiag: Dask dashboard: {dashboard}"))

    def report_errors(task: fl.LogTask, summary: fl.Summary) -> None:
        for e in summary.errors:
            err.print(safe(f"llamadiag: not read: {e.log}: {e.error}"))

    if not enabled or not sys.stderr.isatty():
        yield fl.Progress(report_errors)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err, transient=True
    ) as bar:
        job = bar.add_task("logs", total=total)

        def on_log(task: fl.LogTask, summary: fl.Summary) -> None:
            report_errors(task, summary)
            bar.update(job, advance=1, description=f"logs · {task.name[-40:]}")

        yield fl.Progress(on_log)
