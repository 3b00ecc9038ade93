"""`watch --format compact`: one plain line per event, for journald, syslog and `grep`.

    ERROR spec-vision-draft-position-gap line 51: Speculative draft ... (confirmed, run 0)

The shape is `LEVEL WHAT line N: TEXT`: LEVEL is the severity in capitals (CRITICAL, ERROR,
WARNING, INFO; NOTICE for what watch did to the input), WHAT a rule id or the event's kind,
N the input line it is about. No colour, no boxes, no time stamp (journald adds its own), no
control character and never a line break inside a line. What came from the log is redacted as
in `--format jsonl`: the events pass through the same sink and are read back.
"""

from __future__ import annotations

import json
import re
from typing import IO, Any

from llamadiag.features.redact import Redactor
from llamadiag.lines import strip_controls
from llamadiag.render.terminal import run_bits
from llamadiag.render.watch import JsonlSink

_SPACES = re.compile(r"\s+")


def one_line(value: Any) -> str:
    """A value on one line: control characters dropped, every run of white space one space."""
    return _SPACES.sub(" ", strip_controls(str(value))).strip()


def compact_line(event: dict[str, Any], severities: dict[tuple[str, int], str]) -> str:
    """The line of one event (as JSON data). `severities` remembers each reported cause's
    severity, which its later `repeat` events do not carry."""
    kind = event["type"]
    if kind == "finding":
        f = event["finding"]
        severities[(f["rule_id"], f["run"])] = f["severity"]
        return _line(f["severity"], f["rule_id"], f["last_line"], f"{f['title']} ({f['confidence']}, run {f['run']})")
    if kind == "repeat":
        severity = severities.get((event["rule_id"], event["run"]), "info")
        text = (
            f"seen {event['count']} times in all, {event['new']} since last told, "
            f"lines {event['first_seen']['line']}-{event['last_seen']['line']} (run {event['run']})"
        )
        return _line(severity, event["rule_id"], event["last_seen"]["line"], text)
    if kind == "run_start":
        run = event["run"]
        where = f" ({run['instance']})" if run.get("instance") else ""
        return _line("info", "run-start", run["first_line"], f"run {run['index']}{where}: {run_bits(run['facts'])}")
    if kind == "notice":
        return _line("notice", event["kind"], event.get("line"), event["message"])
    if kind == "summary":
        return _line("info", "summary", event["input"].get("lines"), _summary_text(event))
    return _line("info", kind, None, json.dumps(event, ensure_ascii=False))


def _summary_text(event: dict[str, Any]) -> str:
    causes = ", ".join(f"{c['rule_id']} {c['count']}x (run {c['run']})" for c in event["causes"]) or "none"
    return (
        f"{event['reason']}; {event['runs_seen']} run(s), {event['findings']} finding(s), "
        f"{event['notices']} notice(s); causes: {causes}"
    )


def _line(level: str, what: str, line: int | None, text: str) -> str:
    where = f" line {line}" if line is not None else ""
    return f"{level.upper()} {one_line(what)}{where}: {one_line(text)}"


class _Lines:
    """Takes the JSON lines the JSON Lines sink writes and writes their compact form."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.severities: dict[tuple[str, int], str] = {}

    def write(self, text: str) -> None:
        for raw in text.splitlines():
            self.out.write(compact_line(json.loads(raw), self.severities) + "\n")

    def flush(self) -> None:
        self.out.flush()


class CompactSink(JsonlSink):
    """One plain line per `watch` event (see the module's docstring for the shape)."""

    def __init__(self, out: IO[str], redactor: Redactor | None = None) -> None:
        super().__init__(_Lines(out), redactor)  # type: ignore[arg-type]  # a text sink with write/flush
