"""Rendering of `compare`: the terminal (rich), markdown for a ticket, and JSON.

All three say the same: the requests of each run, the throughput of BEFORE against AFTER
(median and p90, flagged as a loss or a suspicious gain), the failures new in AFTER, and the
verdict on each finding of BEFORE with the checks of its fix. Nothing in it is log text: titles
and check texts come from the rules, the rest are numbers.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from llamadiag.engine.findings import Report
from llamadiag.features.compare import GAIN, LOSS, STATS, Comparison, Throughput
from llamadiag.mdtext import code, esc

RUN_COLUMNS = ("log", "run", "prompt tok/s", "generation tok/s", "draft acceptance", "errors")
SPEED_COLUMNS = ("throughput", "before", "after", "change", "verdict")
FLAG_STYLE = {"loss": "bold red", "gain": "bold yellow", "mixed": "yellow", "steady": "green"}


def _series(s: dict[str, Any]) -> str:
    if not s or not s.get("count"):
        return "-"
    return f"{s['median']} (p10 {s['p10']}, p90 {s['p90']}; n={s['count']})"


def _run_rows(c: Comparison) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for label, report in (("before", c.before), ("after", c.after)):
        for run in report.runs:
            st = run.stats
            draft = st.get("draft")
            acc = f"{draft['accepted']}/{draft['generated']} ({draft['acceptance']})" if draft else "-"
            rows.append(
                (
                    label,
                    str(run.index),
                    _series(st.get("prompt_tps", {})),
                    _series(st.get("generation_tps", {})),
                    acc,
                    str(st.get("errors", 0)),
                )
            )
    return rows


def _side(side: dict[str, Any]) -> str:
    if not side:
        return "-"
    return f"median {side['median']}, p90 {side['p90']} (run {side['run']}, n={side['count']})"


def _speed_row(t: Throughput) -> tuple[str, str, str, str, str]:
    change = ", ".join(f"{s} {t.change[s]:+.0%}" for s in STATS if s in t.change) or "-"
    return (f"{t.metric} tok/s", _side(t.before), _side(t.after), change, t.note)


def _verdict_head(fixed: bool) -> str:
    return "FIXED" if fixed else "NOT FIXED"


THRESHOLDS = (
    f"A loss: median and p90 both more than {LOSS:.0%} lower in AFTER; a suspicious gain: both more than "
    f"{GAIN:.0%} higher. Throughput flags do not change the exit status."
)


def print_compare(console: Console, c: Comparison) -> None:
    """The per-run statistics, the throughput, the failures new in AFTER and a verdict per finding of BEFORE."""
    table = Table(title="Requests per run", title_justify="left")
    for col in RUN_COLUMNS:
        table.add_column(col)
    for row in _run_rows(c):
        table.add_row(*row)
    console.print(table)
    speed = Table(title="Throughput, BEFORE -> AFTER", title_justify="left", caption=THRESHOLDS, caption_justify="left")
    for col in SPEED_COLUMNS:
        speed.add_column(col)
    for t in c.throughput:
        *cells, note = _speed_row(t)
        speed.add_row(*cells, Text(note, style=FLAG_STYLE.get(t.verdict, "")))
    console.print(speed)
    if not c.verdicts:
        console.print("No finding in BEFORE to verify.")
    for f in c.new:
        head = Text("NEW IN AFTER ", style="bold red")
        head.append(f"{f.title} ({f.rule_id}; {f.severity}, {f.confidence})")
        console.print(head)
    for v in c.verdicts:
        head = Text(_verdict_head(v.fixed) + " ", style="bold green" if v.fixed else "bold red")
        head.append(f"{v.title} ({v.rule_id})")
        console.print(head)
        console.print(Text(f"   finding {'gone' if v.gone else 'still present'} in AFTER"))
        for check in v.checks:
            style = {"pass": "green", "fail": "red"}.get(check.status, "yellow")
            line = Text(f"   {check.status:7} ", style=style)
            line.append(f"{check.text} {check.detail}".rstrip())
            console.print(line)


def _md_cell(text: str) -> str:
    return esc(text).replace("|", "\\|")


def _md_table(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
    return out


def compare_markdown(c: Comparison, versions: str) -> str:
    """`compare -f markdown`: the same content as the terminal, as Markdown for a ticket."""
    out = ["# Compare: BEFORE -> AFTER", "", "## Requests per run", ""]
    rows = _run_rows(c)
    out += _md_table(RUN_COLUMNS, rows) if rows else ["No server run in either log."]
    out += ["", "## Throughput", ""]
    out += _md_table(SPEED_COLUMNS, [_speed_row(t) for t in c.throughput])
    out += ["", f"*{esc(THRESHOLDS)}*", ""]
    if c.new:
        out += ["## New in AFTER", ""]
        out += [f"- **{esc(f.title)}** ({code(f.rule_id)}; {f.severity}, {f.confidence})" for f in c.new]
        out.append("")
    out += ["## Findings of BEFORE", ""]
    if not c.verdicts:
        out += ["No finding in BEFORE to verify.", ""]
    for v in c.verdicts:
        out += [f"### {_verdict_head(v.fixed)}: {esc(v.title)} ({code(v.rule_id)})", ""]
        out += [f"Finding {'gone' if v.gone else 'still present'} in AFTER.", ""]
        out += [f"- {check.status}: {esc(f'{check.text} {check.detail}'.rstrip())}" for check in v.checks]
        out.append("")
    out += ["---", f"*{esc(versions)}*"]
    return "\n".join(out) + "\n"


def _stats(report: Report) -> list[dict[str, Any]]:
    return [r.stats | {"run": r.index} for r in report.runs]


def compare_json(c: Comparison) -> str:
    """`compare -f json`: the statistics of each run, the throughput comparison, a verdict per
    finding of BEFORE and the failures new in AFTER."""
    return json.dumps(
        {
            "before": _stats(c.before),
            "after": _stats(c.after),
            "throughput": {
                "thresholds": {"loss": LOSS, "gain": GAIN},
                "metrics": [
                    {
                        "metric": t.metric,
                        "before": t.before,
                        "after": t.after,
                        "change": {s: round(v, 4) for s, v in t.change.items()},
                        "verdict": t.verdict,
                        "note": t.note,
                    }
                    for t in c.throughput
                ],
            },
            "findings": [
                {
                    "rule_id": v.rule_id,
                    "gone": v.gone,
                    "fixed": v.fixed,
                    "checks": [check.__dict__ for check in v.checks],
                }
                for v in c.verdicts
            ],
            "new_in_after": [
                {"rule_id": f.rule_id, "title": f.title, "severity": f.severity, "confidence": f.confidence}
                for f in c.new
            ],
        },
        indent=2,
    )
