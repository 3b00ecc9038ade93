"""`llamadiag watch`: diagnose a live stream (stdin, or a file followed like `tail -F`).

Wiring only: a reader thread (pump), the Watcher, a sink. The main loop wakes every TICK
even without input, to release held entries, report due repeats and notice a closed output.
SIGINT/SIGTERM print the summary, then the process ends by that same signal, so a shell or a
service manager sees what stopped it; a closed output pipe ends it quietly, by SIGPIPE.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import sys
import time
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from llamadiag.cli.options import (
    SEVERITY_RANK,
    CmdlineOpt,
    FailOn,
    RulesOpt,
    fail,
    load,
    redactor_for,
    report_rule_errors,
)

if TYPE_CHECKING:  # the watch machinery is imported when `watch` runs: other commands start faster
    from llamadiag.features.watch.watcher import Watcher
    from llamadiag.render.watch import JsonlSink, RichSink
    from llamadiag.source.pump import Block, End, InputPump, Notice

TICK = 0.05  # seconds: how often the loop wakes while the input is quiet
SWITCH_INTERVAL = 0.0005  # seconds: thread switch interval (latency from the reader thread)
DRAIN_WAIT = 2.0  # seconds: after a signal, how long the rest of the input (a last line) is awaited


class WatchFormat(str, Enum):
    """Output formats of `llamadiag watch`: a live terminal view, one JSON object per event
    (json is jsonl: a stream has no single document), or one plain line per event."""

    rich = "rich"
    json = "json"
    jsonl = "jsonl"
    compact = "compact"


class _Stopper:
    """Turns SIGINT/SIGTERM into a flag the loop checks; a second signal ends at once."""

    def __init__(self) -> None:
        self.signum: int | None = None
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signum is not None:
            _die_by(signum)
        self.signum = signum


def _die_by(signum: int) -> None:
    """End the process by a signal, as if it had not been caught (exit status 128+n)."""
    sys.stdout.flush()
    if hasattr(signal, "SIGKILL"):  # POSIX
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def _quiet_broken_pipe() -> None:
    """The reader of our output went away (`| head -1`): stop without a traceback."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    _die_by(getattr(signal, "SIGPIPE", 13))


class _OutputWatch:
    """Notices a closed output pipe while there is nothing to write (poll reports POLLERR)."""

    def __init__(self) -> None:
        self.poll: Any = None
        if hasattr(select, "poll"):
            self.poll = select.poll()
            self.poll.register(sys.stdout.fileno(), 0)  # no events asked: errors and hang-ups only

    def closed(self) -> bool:
        return self.poll is not None and any(ev & (select.POLLERR | select.POLLHUP) for _, ev in self.poll.poll(0))


def _loop(pump: InputPump, watcher: Watcher, stopper: _Stopper) -> End | None:

    output = _OutputWatch()
    last = time.monotonic()
    while stopper.signum is None:
        item = pump.get(watcher.wake_within(TICK, time.monotonic() - last))
        if item is None:
            watcher.idle(time.monotonic() - last)
            if output.closed():
                raise BrokenPipeError
            continue
        last = time.monotonic()
        end = _hand_over(item, watcher)
        if end is not None:
            return end
    return None


def _hand_over(item: Block | Notice | End, watcher: Watcher) -> End | None:
    """Give the watcher a block of lines or a reader's notice; an end of input is returned."""
    from llamadiag.source.pump import Block, Notice

    if isinstance(item, Block):
        watcher.feed(item.lines)
    elif isinstance(item, Notice):
        watcher.notice(item.kind, item.message, item.line)
    else:
        return item
    return None


def _drain(pump: InputPump, watcher: Watcher, wait: float) -> End | None:
    """After a signal: end the input where it is and analyse what the reader still holds, so a
    last line without its newline gives its finding and a `partial_line` notice, as at the end
    of a file. Bounded by `wait` seconds (a pipe whose writer is silent cannot be ended)."""

    pump.stop()
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        item = pump.get(left)
        if item is None:
            return None
        end = _hand_over(item, watcher)
        if end is not None:
            return end
    return None


def _sink(fmt: WatchFormat, console: Console, no_redact: bool) -> JsonlSink | RichSink:
    from llamadiag.render.watch import JsonlSink, RichSink, StreamRedactor
    from llamadiag.render.watch_compact import CompactSink

    if fmt is WatchFormat.rich:
        return RichSink(console)
    redactor = redactor_for(True) if no_redact else StreamRedactor()
    if fmt is WatchFormat.compact:
        return CompactSink(sys.stdout, redactor)
    return JsonlSink(sys.stdout, redactor)


def watch(
    source: Annotated[str, typer.Argument(help="Log file, or - for stdin (the default).")] = "-",
    # no -f for the format: -f means follow in tail, journalctl, docker and kubectl
    fmt: Annotated[
        WatchFormat,
        typer.Option(
            "--format",
            help="rich: a live view; json or jsonl: one JSON event per line; compact: one plain line per event "
            "(journald, syslog).",
        ),
    ] = WatchFormat.rich,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow", "-f", "-F", help="Keep reading the file as it grows, across rotation and truncation (tail -F)."
        ),
    ] = False,
    repeat_interval: Annotated[
        float, typer.Option("--repeat-interval", help="Summarise repeats of a cause at most this often (seconds).")
    ] = 60.0,
    cmdline: CmdlineOpt = None,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Keep keys, prompts, addresses and user names in jsonl/compact.")
    ] = False,
    fail_on: Annotated[
        FailOn,
        typer.Option("--fail-on", help="At the end of the input, exit 1 for a finding of this severity (none: never)."),
    ] = FailOn.error,
    rules: RulesOpt = None,
) -> None:
    """Watch a live log: report each finding as its evidence completes, once per cause and run."""
    from rich.live import Live

    from llamadiag.features.watch.watcher import Watcher
    from llamadiag.render.watch import StatusLine
    from llamadiag.source.pump import InputPump
    from llamadiag.source.reader import InputError

    if follow and source == "-":
        raise fail("--follow needs a file name (a pipe is read to its end anyway)")
    if follow and source in WatchFormat.__members__ and not os.path.exists(source):
        # `watch -f jsonl` from before -f meant follow: without this it would wait for a file "jsonl"
        raise fail(f"-f is --follow (as in tail -f); for the output format use --format {source}")
    if source == "-" and sys.stdin.isatty():
        raise fail("reading a log from the terminal: pipe a log in (journalctl -f ... | llamadiag watch -)")
    k = load(rules)
    broken = report_rule_errors(k)
    try:
        pump = InputPump(source, follow)
    except InputError as exc:
        raise fail(str(exc)) from exc
    console = Console(highlight=False)
    console.on_broken_pipe = _quiet_broken_pipe  # type: ignore[method-assign]  # rich would exit 1, our "found"
    watcher = Watcher.start(k, _sink(fmt, console, no_redact), cmdline, repeat_interval)
    stopper = _Stopper()
    # the reader thread must get the interpreter soon after data arrives, not after the default 5 ms
    sys.setswitchinterval(SWITCH_INTERVAL)
    # the rules and compiled patterns live as long as the process: keep them out of the garbage
    # collector's full passes, which would otherwise stall the stream for ~20 ms now and then
    gc.collect()
    gc.freeze()
    live: Any = contextlib.nullcontext()
    if fmt is WatchFormat.rich and console.is_terminal:
        status = StatusLine(pump.report.name, lambda: (pump.report.lines, watcher.runs_seen, watcher.findings))
        live = Live(status, console=console, refresh_per_second=4, transient=True)
    try:
        with live:
            end = _loop(pump.start(), watcher, stopper)
            if end is None and stopper.signum is not None and follow:  # a pipe's read cannot be ended
                end = _drain(pump, watcher, DRAIN_WAIT)
            if end is not None and end.crash is not None:
                raise end.crash
            if end is not None and end.fatal:
                raise fail(end.error or "cannot read the input")
            if end is not None and end.error:
                watcher.notice("input_error", end.error, pump.report.lines)
            # Ctrl-C in a shell also ends the producer: the signal, not the end of input, stopped us
            reason = "end of input" if stopper.signum is None else f"stopped by {signal.Signals(stopper.signum).name}"
            watcher.finish(reason, pump.info())
    except BrokenPipeError:
        _quiet_broken_pipe()
    if stopper.signum is not None:
        _die_by(stopper.signum)
    if broken or (end is not None and end.error):
        raise typer.Exit(2)
    raise typer.Exit(1 if fail_on is not FailOn.none and watcher.worst >= SEVERITY_RANK[fail_on.value] else 0)
