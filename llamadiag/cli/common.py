"""What every command shares without typer: output formats, errors, rule loading and the
diagnosis of a source. `explain` runs from here without the typer application on its hot path
(cli/entry.py); options.py adds the typer declarations of the options.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 usage, input
or rule-loading error (ruff/semgrep convention; the reverse of grep's).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from llamadiag.render import progress

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from llamadiag import api
    from llamadiag.features.redact import Redactor


class CommandExit(SystemExit):
    """Ends a command with an exit status (what `typer.Exit` does, without importing typer): a
    SystemExit, so that the typer application, its test runner and the lean explain path all end
    with its `exit_code`."""

    def __init__(self, exit_code: int = 0) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code


class _DeferredConsole:
    """A rich Console made on first use: a command that writes JSON (or nothing on stderr) never
    imports rich, ~25 ms of a small log's start-up."""

    def __init__(self, plain_lines: bool, options: dict[str, Any]) -> None:
        object.__setattr__(self, "_plain_lines", plain_lines)
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def _real(self) -> Console:
        console = object.__getattribute__(self, "_console")
        if console is None:
            from rich.console import Console

            console = Console(**object.__getattribute__(self, "_options"))
            if object.__getattribute__(self, "_plain_lines"):
                from llamadiag.render.layout import plain_lines

                plain_lines(console)
            object.__setattr__(self, "_console", console)
        return console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real(), name, value)


def deferred_console(plain_lines: bool = False, **options: Any) -> Console:
    """`rich.console.Console(**options)`, made when first used (`plain_lines`: then given
    `render.layout.plain_lines`, whole lines when it does not write to a terminal)."""
    return cast("Console", _DeferredConsole(plain_lines, options))


def safe(value: Any) -> Text:
    """The value as rich Text without control characters (`render.terminal.safe`, imported when
    a message is printed)."""
    from llamadiag.render.terminal import safe as text

    return text(value)


err = deferred_console(stderr=True, highlight=False, soft_wrap=True)


class Format(str, Enum):
    """The output formats of facts, compare and lookup (explain has more, report fewer)."""

    rich = "rich"
    json = "json"
    markdown = "markdown"


class ExplainFormat(str, Enum):
    """The output formats of explain: the view, the JSON contract, a ticket reply, and what CI
    and editors read (one finding per JSON line, SARIF 2.1.0, GitHub workflow annotations)."""

    rich = "rich"
    json = "json"
    markdown = "markdown"
    jsonl = "jsonl"
    sarif = "sarif"
    github = "github"


class ViewFormat(str, Enum):
    """The output formats of probe: its view and its JSON (no markdown: nothing to share there)."""

    rich = "rich"
    json = "json"


class DraftFormat(str, Enum):
    """The output formats of a bug-report draft (markdown is what the issue form takes)."""

    markdown = "markdown"
    json = "json"


class FailOn(str, Enum):
    """`--fail-on`: the least severity that makes the exit status 1; none: never."""

    none = "none"
    info = "info"
    warning = "warning"
    error = "error"
    critical = "critical"


class FailConfidence(str, Enum):
    """`--fail-confidence`: the least confidence a finding needs to set the exit status."""

    possible = "possible"
    likely = "likely"
    confirmed = "confirmed"  # and regression: a confirmed failure in a build past its fix


class Color(str, Enum):
    """`--color`: auto follows the terminal and NO_COLOR / FORCE_COLOR."""

    auto = "auto"
    always = "always"
    never = "never"


SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2, "critical": 3}
CONFIDENCE_RANK = {"possible": 0, "likely": 1, "confirmed": 2, "regression": 2}


def parse_build(value: str | int) -> int | None:
    """The build number of `--build` (11503 or b11503, as `llama-server --version` and the
    release tags say it); None when it is not one."""
    text = str(value).strip()
    digits = text[1:] if text[:1] in ("b", "B") else text
    if not (digits.isascii() and digits.isdigit()) or int(digits) < 1:
        return None
    return int(digits)


def parse_jobs(value: str) -> int | None:
    """`--jobs`: a number of processes (at least 1), or auto for the usable cores; None when it
    is neither."""
    if value.strip().lower() == "auto":
        from llamadiag.api import usable_cores

        return usable_cores()
    try:
        number = int(value)
    except ValueError:
        return None
    return number if number >= 1 else None


def fail(message: str) -> CommandExit:
    """Print an error on stderr; the caller raises the returned exit (status 2)."""
    err.print(safe(f"llamadiag: {message}"))
    return CommandExit(2)


def load(rules: list[Path] | None) -> api.Knowledge:
    """The checked knowledge, or exit 2 when a shipped knowledge file is broken."""
    from llamadiag import api  # the analyzer: imported by the commands that diagnose, when they run

    try:
        k = api.load_knowledge(rules or [])
    except Exception as exc:  # a broken shipped knowledge file: nothing can run
        raise fail(str(exc)) from exc
    for note in k.override_notes(rules or []):  # a --rules folder replacing a shipped rule is said
        err.print(safe(f"llamadiag: note: {note}"))
    return k


def report_rule_errors(k: api.Knowledge) -> bool:
    """Print each refused rule file on stderr; whether there was one."""
    for e in k.errors:
        err.print(safe(f"llamadiag: rule error: {e}"))
    return bool(k.errors)


def redactor_for(no_redact: bool) -> Redactor:
    """The redactor of a shareable output (a warning on stderr when redaction is off)."""
    from llamadiag.features.redact import Redactor  # imported when used: `explain` start-up stays short

    if no_redact:
        err.print(safe("llamadiag: warning: --no-redact: the output may hold API keys, prompts, IPs and user names"))
    return Redactor(enabled=not no_redact)


def diagnose_source(
    k: api.Knowledge,
    source: str,
    cmdline: str | None,
    version_text: str | None,
    build: int | None,
    unmatched: bool = False,
    show_progress: bool = True,
    server_facts: api.ServerFacts | None = None,
    jobs: int = 1,
) -> api.Diagnosis:
    """`api.diagnose` for a command: stdin checked, a progress bar for large files, errors as exit 2.
    `server_facts` are what a live server said (`--server`); `jobs` processes scan a large file."""
    from llamadiag import api

    if source == "-" and sys.stdin.isatty():
        raise fail("reading a log from the terminal: pipe a log in, or give a file name")
    if version_text and not api.version_fields(version_text, k):
        err.print(
            safe(
                "llamadiag: warning: --version-text holds no llama-server version line (expected the output of "
                "`llama-server --version`, e.g. 'version: 11503 (abc1234)', or a file holding it); not used"
            )
        )
    try:
        with progress.bar(source, progress.wanted(source, show_progress)) as update:
            return api.diagnose(
                source,
                knowledge=k,
                cmdline=cmdline,
                version_text=version_text,
                build=build,
                unmatched=unmatched,
                on_block=update,
                server_facts=server_facts,
                jobs=jobs,
            )
    except api.InputError as exc:
        raise fail(str(exc)) from exc


def end_with_input_error(diagnosis: api.Diagnosis) -> None:
    """Exit 2 after the output when the input broke off (a truncated archive)."""
    if diagnosis.input_error:
        err.print(safe(f"llamadiag: {diagnosis.input_error}"))
        raise CommandExit(2)


def fails(findings: list[Any], fail_on: FailOn, fail_confidence: FailConfidence) -> bool:
    """Whether the findings set exit status 1: one at or above both thresholds."""
    if fail_on is FailOn.none:
        return False
    least, sure = SEVERITY_RANK[fail_on.value], CONFIDENCE_RANK[fail_confidence.value]
    return any(
        SEVERITY_RANK.get(f.severity, 0) >= least and CONFIDENCE_RANK.get(f.confidence, 0) >= sure for f in findings
    )


def terminal(color: Color) -> Console:
    """The console of a terminal view; never: no escape sequence at all."""
    if color is Color.always:
        return deferred_console(highlight=False, force_terminal=True)
    options: dict[str, Any] = {"highlight": False} | ({"color_system": None} if color is Color.never else {})
    from llamadiag.render.plainconsole import PlainConsole, writes_plain

    if writes_plain(sys.stdout):  # a pipe or a file: the plain layout, written without rich
        return cast("Console", PlainConsole(sys.stdout, **options))
    return deferred_console(**options)  # rich itself honours NO_COLOR and FORCE_COLOR


@contextmanager
def paged(console: Console, pager: bool) -> Iterator[Console]:
    """A console whose output goes through a pager ($MANPAGER, $PAGER, else less -R; pydoc's
    choice) when stdin and stdout are a terminal and the output is taller than the terminal;
    otherwise `console` itself."""
    if not (pager and console.is_terminal and sys.stdout.isatty() and sys.stdin.isatty()):
        yield console
        return
    import pydoc

    from rich.console import Console

    buffer = io.StringIO()
    system = console.color_system
    yield Console(
        file=buffer,
        highlight=False,
        width=console.width,
        force_terminal=True,
        color_system=system,  # type: ignore[arg-type]  # the same names rich reports
        no_color=console.no_color,
    )
    text = buffer.getvalue()
    if text.count("\n") < console.height:
        console.file.write(text)
        console.file.flush()
        return
    os.environ.setdefault("LESS", "-R")  # less shows the colours instead of their escape codes
    pydoc.pager(text)


def pending_notices() -> tuple[list[Path], tuple[Path, Path, str] | None]:
    """What a command says on stderr before it runs: the user rule files that replace shipped
    ones, and a checkout whose rules/ the installed llamadiag does not use (`knowledge.files.
    stale_install`; None once told, which the caller records in the cache under its key)."""
    from llamadiag import cache
    from llamadiag.knowledge.files import stale_install, user_overrides

    try:
        stale = stale_install(Path.cwd())
    except OSError:  # a working folder that is gone, an unreadable rules/: nothing to tell
        stale = None
    if stale is not None and cache.read(f"checkout-{stale[2]}") is not None:
        stale = None
    return user_overrides(), stale
