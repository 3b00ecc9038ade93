"""Terminal rendering of `compare`."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from llamadiag.engine.findings import Finding, Report
from llamadiag.features.compare import FindingVerdict


def _series(s: dict) -> str:
    if not s or not s.get("count"):
        return "-"
    return f"{s['median']} (p10 {s['p10']}, p90 {s['p90']}; n={s['count']})"


def print_compare(
    console: Console, before: Report, after: Report, verdicts: list[FindingVerdict], new: list[Finding]
) -> None:
    """The per-run statistics table, a verdict per finding of BEFORE, and the failures new in AFTER."""
    """Print the per-run request table and the verdict on each finding of the before-log."""
    table = Table(title="Requests per run", title_justify="left")
    for col in ("log", "run", "prompt tok/s", "generation tok/s", "draft acceptance", "errors"):
        table.add_column(col)
    for label, report in (("before", before), ("after", after)):
        for run in report.runs:
            st = run.stats
            draft = st.get("draft")
            acc = f"{draft['accepted']}/{draft['generated']} ({draft['acceptance']})" if draft else "-"
            table.add_row(
                label,
                str(run.index),
                _series(st.get("prompt_tps", {})),
                _series(st.get("generation_tps", {})),
                acc,
                str(st.get("errors", 0)),
            )
    console.print(table)
    if not verdicts:
        console.print("No finding in BEFORE to verify.")
    for f in new:
        head = Text("NEW IN AFTER ", style="bold red")
        head.append(f"{f.title} ({f.rule_id}; {f.severity}, {f.confidence})")
        console.print(head)
    for v in verdicts:
        head = Text("FIXED " if v.fixed else "NOT FIXED ", style="bold green" if v.fixed else "bold red")
        head.append(f"{v.title} ({v.rule_id})")
        console.print(head)
        console.print(Text(f"   finding {'gone' if v.gone else 'still present'} in AFTER"))
        for c in v.checks:
            style = {"pass": "green", "fail": "red"}.get(c.status, "yellow")
            line = Text(f"   {c.status:7} ", style=style)
            line.append(f"{c.text} {c.detail}".rstrip())
            console.print(line)


def compare_json(before: Report, after: Report, verdicts: list[FindingVerdict], new: list[Finding]) -> str:
    """`compare -f json`: the statistics of each run and a verdict per finding of BEFORE."""
    import json

    return json.dumps(
        {
            "before": [r.stats | {"run": r.index} for r in before.runs],
            "after": [r.stats | {"run": r.index} for r in after.runs],
            "findings": [
                {
                    "rule_id": v.rule_id,
                    "gone": v.gone,
                    "fixed": v.fixed,
                    "checks": [c.__dict__ for c in v.checks],
                }
                for v in verdicts
            ],
            "new_in_after": [
                {"rule_id": f.rule_id, "title": f.title, "severity": f.severity, "confidence": f.confidence}
                for f in new
            ],
        },
        indent=2,
    )
