"""`llamadiag probe` output: the endpoints asked, the facts (each with the endpoint it came
from), the models of a router; or the same as JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Console

from llamadiag.engine.reportdata import dump
from llamadiag.render.layout import TableView, is_plain, plain_lines
from llamadiag.render.terminal import safe
from llamadiag.render.words import value_words

if TYPE_CHECKING:
    from llamadiag.features.redact import Redactor
    from llamadiag.source.probe import Answer, ProbeResult

LONG = 72  # a chat template is shown cut to this many characters in the terminal


def _short(value: Any, whole: bool = False) -> str:
    text = value_words(value).replace("\n", "⏎")
    if whole or len(text) <= LONG:
        return text
    if "/" in text and " " not in text:  # a path: its end names the file
        return "…" + text[-(LONG - 1) :]
    return text[: LONG - 1] + "…"


def _endpoints(title: str, answers: dict[str, Answer]) -> TableView:
    table = TableView(["endpoint", "status", "ms", "note"], title, right=["status", "ms"])
    for a in answers.values():
        table.add_row(safe(a.path), str(a.status or "-"), f"{a.ms:.0f}", safe(a.error or ""))
    return table


def _facts(title: str, facts: dict[str, Any], whole: bool) -> TableView:
    """The facts table; `whole`: values never cut (the plain layout of a pipe)."""
    table = TableView(["fact", "value", "from"], title)
    for name, fv in sorted(facts.items()):
        table.add_row(name, safe(_short(fv.value, whole)), safe(f"from {fv.source}"))
    return table


def print_probe(console: Console, result: ProbeResult) -> None:
    """The probe as tables: endpoints, facts, then each model of a router (plain lines in a pipe)."""
    whole = is_plain(plain_lines(console))
    build = result.facts.get("build")
    commit = result.facts.get("commit")
    head = f"llama-server at {result.url}"
    if build is not None:
        head += f" · b{build.value}" + (f"-{commit.value}" if commit is not None else "")
    answered = sum(1 for a in result.answers.values() if a.ok)
    console.print(safe(f"{head} · {answered}/{len(result.answers)} endpoint(s) answered"))
    console.print(_endpoints("endpoints", result.answers))
    console.print(_facts("facts", result.facts, whole))
    for m in result.models:
        where = f", port {m.port}" if m.port else ""
        if not m.facts:
            console.print(safe(f"model {m.id}: {m.status}{where} (not asked: asking would load it)"))
            continue
        console.print(_facts(f"model {m.id}: {m.status}{where}", m.facts, whole))
    for note in result.notes:
        console.print(safe(f"note: {note}"))


def probe_json(result: ProbeResult, redactor: Redactor) -> str:
    """The probe as JSON (docs/probe.md), redacted like every shareable output."""
    from llamadiag.features.redact import redact_data

    data, redaction = redact_data(result.to_json(), redactor)
    data["redaction"] = dump(redaction)
    return json.dumps(data, indent=2)
