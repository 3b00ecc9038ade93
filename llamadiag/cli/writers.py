"""How explain and facts write their output: every format, to standard output or to the file of
`-o FILE` (written in one step). The terminal view goes to a console that gives the plain layout
when it is not a terminal (render/layout.py); every other format is shareable, so redacted unless
--no-redact."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from llamadiag.api import Report
from llamadiag.cli.common import ExplainFormat, Format, deferred_console, fail, redactor_for
from llamadiag.cli.output import output_to

if TYPE_CHECKING:
    from rich.console import Console


class ReportWriter:
    """Writes the reports of explain's logs in one format: one document per log (json, markdown,
    the view), lines (jsonl, github), or one SARIF log holding a run per log, written at `close`.
    Every format but rich is shareable, so redacted unless --no-redact (the terminal shows
    everything)."""

    def __init__(self, fmt: ExplainFormat, why: bool, no_redact: bool, out: IO[str], console: Console) -> None:
        self.fmt, self.why, self.no_redact, self.out, self.console = fmt, why, no_redact, out, console
        self.sarif_runs: list[dict] = []

    def add(self, report: Report) -> None:
        """Write one log's report (or keep its SARIF run)."""
        fmt, out = self.fmt, self.out
        if fmt is ExplainFormat.rich:
            from llamadiag.render.terminal import print_report

            print_report(self.console, report, self.why)
            return
        if fmt is ExplainFormat.markdown:
            from llamadiag.features.redact import redact_report
            from llamadiag.render.markdown import report_markdown

            report, redaction = redact_report(report, redactor_for(self.no_redact))
            out.write(report_markdown(report, redaction.line()))
            return
        from llamadiag.render.json import report_data, write_json

        data = report_data(report, redactor_for(self.no_redact), self.why)
        if fmt is ExplainFormat.json:
            write_json(data, out)
        elif fmt is ExplainFormat.jsonl:
            from llamadiag.render.jsonl import write_findings_jsonl

            write_findings_jsonl(data, out)
        elif fmt is ExplainFormat.sarif:
            from llamadiag.render.sarif import sarif_log

            self.sarif_runs += sarif_log(data)["runs"]
        else:
            from llamadiag.render.github import write_annotations

            write_annotations(data, out)

    def close(self) -> None:
        """Write what waits for the last log: the SARIF log."""
        if self.fmt is ExplainFormat.sarif:
            from llamadiag.render.json import write_json
            from llamadiag.render.sarif import sarif_document

            write_json(sarif_document(self.sarif_runs), self.out)


def console_on(out: IO[str]) -> Console:
    """The console for a view written to `out`: standard output's, or a file's (plain layout);
    made when first used, so that the other formats never import rich."""
    from llamadiag.render.plainconsole import PlainConsole, writes_plain

    if writes_plain(out):  # a pipe or a file: the plain layout, written without rich
        return cast("Console", PlainConsole(out, highlight=False))
    if out is sys.stdout:  # as render.layout.stdout_console
        return deferred_console(plain_lines=True, highlight=False)
    return deferred_console(plain_lines=True, file=out, highlight=False)


@contextlib.contextmanager
def destination(output: Path | None) -> Iterator[IO[str]]:
    """Standard output, or the file of -o written in one step (an unwritable file: exit 2)."""
    if output is None:
        yield sys.stdout
        return
    try:
        with output_to(output) as out:
            yield out
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror or exc}") from exc


def write_to(output: Path | None, write: Callable[[IO[str]], None]) -> None:
    """Run `write` on standard output or on the file of -o."""
    with destination(output) as out:
        write(out)


def write_facts(report: Report, fmt: Format, no_redact: bool, out: IO[str]) -> None:
    """Write what the log says about the server in a format (json and markdown redacted)."""
    if fmt is Format.json:
        from llamadiag.render.json import facts_data, write_json

        write_json(facts_data(report, redactor_for(no_redact)), out)
    elif fmt is Format.markdown:
        from llamadiag.features.redact import redact_report
        from llamadiag.render.markdown import facts_markdown

        report, redaction = redact_report(report, redactor_for(no_redact))
        out.write(facts_markdown(report, redaction.line()))
    else:
        from llamadiag.render.terminal import print_facts

        print_facts(console_on(out), report)
