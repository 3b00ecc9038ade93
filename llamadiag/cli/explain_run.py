"""What `explain` does once its options are parsed, without typer: load the knowledge, diagnose
each log, write every report in the chosen format, and the exit status. The typer command
(explain.py) and the lean entry (entry.py) both run it, so their output cannot drift apart."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from llamadiag.api import ServerFacts
from llamadiag.cli.common import (
    Color,
    CommandExit,
    ExplainFormat,
    FailConfidence,
    FailOn,
    diagnose_source,
    err,
    fails,
    load,
    paged,
    report_rule_errors,
    safe,
    terminal,
)
from llamadiag.cli.writers import ReportWriter, console_on, destination

# what --server gives: the live server's facts and the notes naming it (none without --server)
LiveProbe = Callable[[], tuple[ServerFacts | None, list[str]]]


def _no_server() -> tuple[ServerFacts | None, list[str]]:
    return None, []


@dataclass
class ExplainOptions:
    """explain's options, converted (the defaults are the command line's)."""

    fmt: ExplainFormat = ExplainFormat.rich
    output: Path | None = None
    cmdline: str | None = None
    version_text: str | None = None
    build: int | None = None
    fail_on: FailOn = FailOn.error
    fail_confidence: FailConfidence = FailConfidence.possible
    why: bool = False
    no_redact: bool = False
    unmatched: bool = False
    rules: list[Path] | None = None
    show_progress: bool = True
    quiet: bool = False
    color: Color = Color.auto
    pager: bool = True
    processes: int = 1
    live: LiveProbe = field(default=_no_server)


def run_explain(sources: list[str], o: ExplainOptions) -> int:
    """Diagnose each log and write its report; the exit status: the worst of the logs, 2 for one
    that cannot be read, 1 for a finding at --fail-on."""
    k = load(o.rules)
    live, origin = o.live()
    status = 0
    view = o.fmt is ExplainFormat.rich and not o.quiet
    with destination(o.output) as out:
        console = terminal(o.color) if o.output is None else console_on(out)
        with paged(console, o.pager and view and o.output is None) as console:
            writer = ReportWriter(o.fmt, o.why, o.no_redact, out, console)
            for source in sources:
                try:
                    diagnosis = diagnose_source(
                        k, source, o.cmdline, o.version_text, o.build, o.unmatched, o.show_progress, live, o.processes
                    )
                except CommandExit as exc:  # this log cannot be read (said on stderr): the others still are
                    status = max(status, exc.exit_code)
                    continue
                report = diagnosis.report
                report.notes[:0] = origin
                failed = fails(report.findings, o.fail_on, o.fail_confidence)  # before a renderer reshapes the report
                if not o.quiet:
                    writer.add(report)
                if diagnosis.input_error:
                    err.print(safe(f"llamadiag: {diagnosis.input_error}"))
                    status = 2
                elif failed:
                    status = max(status, 1)
            if not o.quiet:
                writer.close()
    if report_rule_errors(k):
        status = 2
    return status
