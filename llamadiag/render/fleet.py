"""Rendering of the fleet report (`llamadiag fleet`): rich tables and Markdown. JSON is the
report model itself (docs/fleet.md); the HTML page is `fleet_html.py`."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from llamadiag.features.fleet.report import FleetReport
from llamadiag.mdtext import esc, link
from llamadiag.render.terminal import CONF_STYLE, SEV_STYLE, safe

MAX_NAMES = 6  # instance names shown in a cell before "+N more"
MAX_UNMATCHED = 15


def names(items: Iterable[str], limit: int = MAX_NAMES) -> str:
    """The first instance names and how many more."""
    items = list(items)
    shown = ", ".join(items[:limit])
    return f"{shown} +{len(items) - limit} more" if len(items) > limit else shown


def builds_text(builds: Iterable[int]) -> str:
    """`b11503, b11548`, or `?` when no build is known."""
    return ", ".join(f"b{b}" for b in builds) or "?"


def headline(r: FleetReport) -> str:
    """One line: how many logs, instances, and how many hit a known failure."""
    return (
        f"llamadiag {r.version} · fleet of {r.instances} instance(s) from {r.logs} log(s) · "
        f"{r.instances_with_failures} with a known failure · {len(r.failures)} distinct failure(s)"
        + (f" · {len(r.errors)} log(s) not read" if r.errors else "")
    )


def print_fleet(console: Console, r: FleetReport) -> None:
    """The fleet report as rich tables: failures, upgrade plan, builds, unexplained lines, errors."""
    console.print(safe(headline(r)), style="bold")
    if r.failures:
        t = Table(title="Known failures across the fleet", title_justify="left")
        t.add_column("failure", no_wrap=True)
        for col in ("inst.", "count", "confidence", "builds", "fix"):
            t.add_column(col)
        for f in r.failures:
            title = Text(f.rule_id, style=SEV_STYLE.get(f.severity, ""))
            t.add_row(
                title,
                str(f.instances),
                str(f.count),
                Text(f.confidence, style=CONF_STYLE.get(f.confidence, "")),
                builds_text(f.builds),
                " ".join([*([f"b{f.fixed_in}"] if f.fixed_in else []), *(x.label for x in f.references[:1])]),
            )
        console.print(t)
    else:
        console.print("No known failure on any instance.")
    if r.upgrade.text:
        console.print(Text("Upgrade plan: ", style="bold") + safe(r.upgrade.text))
    for s in r.upgrade.steps:
        line = Text(f"  {s.rule_id}: ", style="bold") + safe(s.text)
        if s.instances:
            line.append_text(safe(f" ({names(s.instances)})"))
        if s.unknown_build:
            more = len(s.unknown_build)
            line.append_text(safe(f" {more} more hit it on an unknown build: run llama-server --version."))
        if s.regression:
            again = len(s.regression)
            line.append_text(safe(f" {again} hit it on a build that has the fix: a regression, report it."))
        console.print(line)
    bt = Table(title="Builds", title_justify="left")
    for col in ("build", "instances", "known failures in its window", "seen here"):
        bt.add_column(col)
    for b in r.builds:
        label = f"b{b.build}" if b.build is not None else (f"unknown (≥ b{b.build_min})" if b.build_min else "unknown")
        seen = [i.rule_id for i in b.known_issues if i.seen]
        bt.add_row(
            label,
            safe(f"{len(b.instances)}: {names(b.instances, 3)}"),
            str(len(b.known_issues)),
            safe(", ".join(seen) or "-"),
        )
    console.print(bt)
    if r.unmatched:
        ut = Table(title="Errors no rule explains, by instances (the next rules to write)", title_justify="left")
        for col in ("instances", "count", "level", "template"):
            ut.add_column(col)
        for u in r.unmatched[:MAX_UNMATCHED]:
            ut.add_row(str(u.instances), str(u.count), u.level, safe(u.template))
        console.print(ut)
        if len(r.unmatched) > MAX_UNMATCHED:
            console.print(f"  ... {len(r.unmatched) - MAX_UNMATCHED} more templates (--format json has them all)")
    for e in r.errors:
        console.print(safe(f"not read: {e.log}: {e.error}"), style="red")


def _cell(value: object) -> str:
    return esc(value).replace("|", "\\|").replace("\n", " ")


def fleet_markdown(r: FleetReport) -> str:
    """The fleet report as Markdown (tables), for a ticket or a wiki page."""
    out = [f"# Fleet report\n\n{_cell(headline(r))}\n"]
    if r.failures:
        out.append("## Known failures\n")
        out.append("| failure | instances | count | confidence | builds | fixed in | references | on |")
        out.append("|---|---|---|---|---|---|---|---|")
        for f in r.failures:
            ref = " ".join(link(x.label, x.url) for x in f.references[:2])
            out.append(
                f"| `{f.rule_id}` {_cell(f.title)} | {f.instances} | {f.count} | {f.confidence} | "
                f"{builds_text(f.builds)} | {f'b{f.fixed_in}' if f.fixed_in else '-'} | {ref} | "
                f"{_cell(names(h.instance for h in f.hits))} |"
            )
        out.append("")
    if r.upgrade.steps:
        out.append("## Upgrade plan\n")
        if r.upgrade.text:
            out.append(f"{_cell(r.upgrade.text)}\n")
        for s in r.upgrade.steps:
            extra = f" Unknown build: {_cell(names(s.unknown_build))}." if s.unknown_build else ""
            extra += f" Regression (has the fix): {_cell(names(s.regression))}." if s.regression else ""
            out.append(f"- `{s.rule_id}`: {_cell(s.text)} {_cell(names(s.instances))}{extra}")
        out.append("")
    out.append("## Builds\n\n| build | instances | known failures in its window | seen here |\n|---|---|---|---|")
    for b in r.builds:
        label = f"b{b.build}" if b.build is not None else "unknown"
        seen = ", ".join(f"`{i.rule_id}`" for i in b.known_issues if i.seen) or "-"
        out.append(f"| {label} | {len(b.instances)}: {_cell(names(b.instances, 3))} | {len(b.known_issues)} | {seen} |")
    out.append("")
    if r.unmatched:
        out.append("## Errors no rule explains\n\n| instances | count | level | template |\n|---|---|---|---|")
        for u in r.unmatched[:MAX_UNMATCHED]:
            out.append(f"| {u.instances} | {u.count} | {u.level} | {_cell(u.template)} |")
        out.append("")
    if r.errors:
        out.append("## Logs not read\n")
        out.extend(f"- {_cell(e.log)}: {_cell(e.error)}" for e in r.errors)
        out.append("")
    return "\n".join(out)
