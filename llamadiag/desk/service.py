"""What the desk does with a request apart from HTTP: check the paste, run the engine,
redact, render. Everything stays in memory; nothing a user pastes is written or logged."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from llamadiag import api
from llamadiag.api import Knowledge, Report
from llamadiag.desk import adapter
from llamadiag.render.markdown import report_markdown

FIELDS = ("log", "version_text", "cmdline")
LABELS = {"log": "log", "version_text": "version output", "cmdline": "command line"}
MAX_SIDE_FIELD = 64 * 1024  # a --version output or a command line; logs go in `log`


class BadInput(Exception):
    """A request the desk answers with a one-line message instead of a result."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Explained:
    """A diagnosis ready to show: the redacted report and its markdown."""

    redacted: adapter.Redacted
    markdown: str

    @property
    def report(self) -> Report:
        """The redacted report."""
        return self.redacted.report


@dataclass
class Desk:
    """The desk's state: the knowledge, the body size limit and the rule count."""

    knowledge: Knowledge
    max_bytes: int
    rule_count: int = field(init=False)

    def __post_init__(self) -> None:
        self.rule_count = len(self.knowledge.rules)

    def explain(self, fields: dict[str, str]) -> Explained:
        """Check the pasted fields, diagnose them, and return the redacted result."""
        log, version_text, cmdline = (fields.get(name, "") for name in FIELDS)
        if not (log.strip() or version_text.strip() or cmdline.strip()):
            raise BadInput(
                "nothing to diagnose: paste a llama-server log, the output of `llama-server --version` "
                "or the command line"
            )
        _check_side_field(LABELS["version_text"], version_text)
        _check_side_field(LABELS["cmdline"], cmdline)
        try:
            report = api.diagnose_text(
                log if log.strip() else "",
                knowledge=self.knowledge,
                cmdline=cmdline.strip() or None,
                version_text=version_text.strip() or None,
            ).report
        except api.InputError as exc:
            raise BadInput(f"{exc}: paste the text of the log") from None
        redacted = adapter.redact(report)  # before anything is rendered
        return Explained(redacted, report_markdown(redacted.report, redacted.summary.line()))

    def lookup(self, query: str, build: str = "", cmdline: str = "") -> adapter.Looked:
        """Lookup's own checks answer an empty, punctuation-only or binary query (`error`)."""
        _check_side_field("query", query)
        _check_side_field(LABELS["cmdline"], cmdline)
        number = build.strip().lstrip("bB")
        if number and not number.isdigit():
            raise BadInput(f"build {build!r} is not a build number (like 11503 or b11503)")
        return adapter.lookup(self.knowledge, query, int(number) if number else None, cmdline.strip() or None)


def _check_side_field(label: str, value: str) -> None:
    """A short field: at most 64 KiB of text (a whole log belongs in the log box)."""
    size = len(value.encode("utf-8", errors="replace"))
    if size > MAX_SIDE_FIELD:
        got, most = _sizes(size, MAX_SIDE_FIELD, "KiB", 1024)
        raise BadInput(f"the {label} is {got}; it may be at most {most} (logs go in the log box)", 413)
    bad = sum(1 for ch in value if (ch < " " and ch not in "\t\n\r") or ch == "\ufffd")
    if value and bad / len(value) > 0.1:
        raise BadInput(f"the {label} looks like binary data, not text")


def fields_from_json(body: bytes) -> dict[str, str]:
    """The API body: a JSON object with string fields log, version_text, cmdline."""
    try:
        data: Any = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadInput('the body is not JSON: send {"log": "...", "version_text": "...", "cmdline": "..."}') from None
    except RecursionError:  # arrays or objects nested about a thousand deep
        raise BadInput(
            "the body is nested too deeply: send a flat JSON object "
            '{"log": "...", "version_text": "...", "cmdline": "..."}'
        ) from None
    if not isinstance(data, dict):
        raise BadInput('the body must be a JSON object: {"log": "...", "version_text": "...", "cmdline": "..."}')
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise BadInput(f"unknown field(s) {', '.join(map(repr, unknown))}: the fields are {', '.join(FIELDS)}")
    out: dict[str, str] = {}
    for name in FIELDS:
        value = data.get(name)
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise BadInput(f"field {name!r} must be a string, not {type(value).__name__}")
        out[name] = value
    return out


def _sizes(size: int, limit: int, unit: str, scale: float) -> tuple[str, str]:
    """`size` and `limit` in `unit` with one decimal, or in bytes when that would show them equal
    ("5.0 MB, accepts up to 5.0 MB" says nothing)."""
    got, most = f"{size / scale:.1f} {unit}", f"{limit / scale:.1f} {unit}"
    if got == most:
        return f"{size:,} bytes", f"{limit:,} bytes"
    return got, most


def size_message(size: int | None, limit: int) -> str:
    """The message for a request larger than `limit` bytes (`size` when known)."""
    if size is None:
        got, most = f"more than {limit / 1e6:.1f} MB", f"{limit / 1e6:.1f} MB"
    else:
        got, most = _sizes(size, limit, "MB", 1e6)
    return (
        f"request too large: {got}, the desk accepts up to {most}. Paste the part of the log "
        "around the error, or run `llamadiag explain FILE` on the whole file"
    )
