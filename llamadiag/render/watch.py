"""Where `watch` events go: JSON Lines for pipelines, a rich view for people.

Both write each event the moment it is emitted and flush, so a consumer behind a pipe sees
it at once. Log text reaches the terminal only through render_rich.safe (no markup, no
control sequences).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import is_dataclass
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from llamadiag.engine.reportdata import dump
from llamadiag.features.redact import Redactor
from llamadiag.render.layout import TableView, plain_lines
from llamadiag.render.terminal import CONF_STYLE, SEV_STYLE, finding_panel, run_bits, safe

REDACT_MEMORY = 4096  # distinct strings remembered by StreamRedactor


def _encode(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):  # a finding, a run ...
        return dump(value, json=True)
    if hasattr(value, "model_dump"):  # a pydantic model (not imported here: watch's start stays light)
        return value.model_dump(mode="json")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


class StreamRedactor(Redactor):
    """The shared redactor, for a stream: the rule text that every finding repeats is redacted
    once, not at each event. The result is the same while no new secret is learnt (then the
    memory is dropped); a repeated string is not counted again in the summary's counts."""

    def __init__(self) -> None:
        super().__init__()
        self._done: OrderedDict[str, str] = OrderedDict()  # string -> redacted, most recent last
        self._searched: OrderedDict[str, None] = OrderedDict()  # strings already searched for secrets
        self._secrets_seen = 0

    def text(self, s: str) -> str:
        """As `Redactor.text`, remembering results while no new secret is learnt."""
        if len(self.known) != self._secrets_seen:  # a new secret: earlier results may miss it
            self._done.clear()
            self._secrets_seen = len(self.known)
        out = self._done.get(s)
        if out is None:
            out = self._done[s] = super().text(s)
            if len(self._done) > REDACT_MEMORY:
                self._done.popitem(last=False)
        else:
            self._done.move_to_end(s)
        return out

    def learn(self, obj: Any) -> None:
        """As `Redactor.learn`, skipping strings already searched."""
        if isinstance(obj, str):
            if obj in self._searched:
                return
            self._searched[obj] = None
            if len(self._searched) > REDACT_MEMORY:
                self._searched.popitem(last=False)
        super().learn(obj)


class JsonlSink:
    """One JSON object per event. Like `explain --format json`, what came from the log is
    redacted (keys, prompts, addresses, user names) unless the redactor is disabled."""

    def __init__(self, out: IO[str], redactor: Redactor | None = None) -> None:
        self.out = out
        self.redactor = redactor

    def __call__(self, event: dict[str, Any]) -> None:
        """Write one event as a line of JSON, redacted unless the redactor is disabled."""
        r = self.redactor
        if r is not None and r.enabled:
            data = json.loads(json.dumps(event, default=_encode))
            body = {k: v for k, v in data.items() if k not in ("type", "at")}
            facts = body["run"]["facts"] if data["type"] == "run_start" else {}
            for name in r.spec.secret_facts:  # a secret the run's facts hold is masked everywhere
                value = facts.get(name)
                if isinstance(value, str) and value:
                    r.add_secret(value)
            r.learn(body)
            event = {"type": data["type"], "at": data["at"], **r.value(body)}
        if r is not None and event["type"] == "summary":
            event = {**event, "redaction": dump(r.summary())}
        self.out.write(json.dumps(event, default=_encode, ensure_ascii=False) + "\n")
        self.out.flush()


class RichSink:
    """Prints `watch` events to the terminal (in a pipe: the plain layout, nothing cut)."""

    def __init__(self, console: Console) -> None:
        self.console = plain_lines(console)

    def __call__(self, event: dict[str, Any]) -> None:
        """Print one event."""
        kind = event["type"]
        show: Callable[[dict[str, Any]], Any] = getattr(self, f"_{kind}")
        self.console.print(show(event))
        self.console.file.flush()

    def _run_start(self, event: dict[str, Any]) -> Text:
        run = event["run"]
        where = f" ({run['instance']})" if run.get("instance") else ""
        text = Text(f"▶ run {run['index']}{where} from line {run['first_line']}: ", style="bold cyan")
        text.append_text(safe(run_bits(run["facts"])))
        return text

    def _finding(self, event: dict[str, Any]) -> Any:
        return finding_panel(event["finding"])

    def _repeat(self, event: dict[str, Any]) -> Text:
        text = Text("↻ ", style="bold")
        text.append(event["rule_id"], style="bold")
        text.append(
            f" (run {event['run']}) seen {event['count']}× in all, {event['new']} since last told; "
            f"lines {event['first_seen']['line']}-{event['last_seen']['line']}, last at {event['last_seen']['at']}"
        )
        return text

    def _notice(self, event: dict[str, Any]) -> Text:
        text = Text("note: ", style="bold yellow")
        text.append_text(safe(event["message"]))
        return text

    def _summary(self, event: dict[str, Any]) -> Any:
        info = event["input"]
        head = Text(
            f"llamadiag watch · {info.get('name', 'input')} · {event['reason']} · {info.get('lines', 0)} lines · "
            f"{event['runs_seen']} run(s) · {event['findings']} finding(s)",
            style="bold",
        )
        if not event["causes"]:
            return Text.assemble(head, "\n", Text("No known failure recognised.", style="green"))
        table = TableView(
            ["rule", "run", "severity", "confidence", "seen", "lines", "last seen"], head, no_wrap=["rule"]
        )
        builds = {r["index"]: r.get("build") for r in event.get("runs", [])}
        for c in group_causes(event["causes"]):
            confidence = c["confidence"] if "ruled_out" not in c else "ruled out later"
            table.add_row(
                c["rule_id"],
                _runs_cell(c, builds),
                Text(c["severity"], style=SEV_STYLE.get(c["severity"], "")),
                Text(str(confidence), style=CONF_STYLE.get(str(confidence), "")),
                f"{c['count']}×",
                f"{c['first_seen']['line']}-{c['last_seen']['line']}",
                c["last_seen"]["at"][11:19],  # the time of day (UTC); the date is in the JSON
            )
        return table


def group_causes(causes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The summary's causes with one row per (rule, severity, verdict) across runs: a crash
    loop's one cause in 40 runs is one row; `runs` lists the runs, `count` adds up."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for c in causes:
        key = (c["rule_id"], c["severity"], str(c["confidence"]) if "ruled_out" not in c else "ruled out")
        row = rows.get(key)
        if row is None:
            rows[key] = {**c, "runs": [c["run"]]}
            continue
        row["runs"].append(c["run"])
        row["count"] += c["count"]
        row["last_seen"] = c["last_seen"]
    return list(rows.values())


def _runs_cell(row: dict[str, Any], builds: dict[int, Any]) -> str:
    """`3`, or `0-39 (40 runs)` with the builds those runs ran where known."""
    runs = row["runs"]
    text = str(runs[0]) if len(runs) == 1 else f"{runs[0]}-{runs[-1]} ({len(runs)} runs)"
    known = sorted({b for b in (builds.get(r) for r in runs) if b is not None})
    if len(runs) > 1 and known:
        text += " b" + ", b".join(map(str, known[:4])) + (" ..." if len(known) > 4 else "")
    return text


class StatusLine:
    """The live bottom line on a terminal: what is being watched and what was found so far."""

    def __init__(self, name: str, counts: Callable[[], tuple[int, int, int]]) -> None:
        self.name = name
        self.counts = counts

    def __rich__(self) -> Text:
        lines, runs, findings = self.counts()
        text = safe(f"watching {self.name} · {lines} lines · {runs} run(s) · {findings} finding(s)")
        text.stylize("dim")
        return text
