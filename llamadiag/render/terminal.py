"""The terminal report. Every string from a log is wrapped in styled text (render/styled.py,
never parsed as markup) after control characters were stripped, so a log cannot style or drive
the terminal. The report is built without rich, so that in a pipe (render/plainconsole.py) rich
is never imported; a rich console draws the same objects as rich Text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llamadiag.engine.findings import Evidence, Finding, Report, RuledOut
from llamadiag.render.layout import Block, Printer, TableView, is_plain, plain_lines
from llamadiag.render.styled import Styled, styled_safe
from llamadiag.render.words import run_words, stats_words, value_words

if TYPE_CHECKING:
    from rich.text import Text

CONF_STYLE = {"confirmed": "bold red", "regression": "bold magenta", "likely": "bold yellow", "possible": "yellow"}
SEV_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}


def safe(value: Any) -> Text:
    """The value as rich Text with control characters removed (log text is untrusted); for the
    views that are built with rich (watch, lookup, fleet ...)."""
    return styled_safe(value).__rich__()


def source_label(source: str) -> str:
    """A fact's source as a reader says it: `from /props` for what a live server answered."""
    return f"from {source}" if source.startswith("/") else source


def cut(value: Any, limit: int = 160) -> str:
    """A fact value on one table row: a long one (a chat template) cut, its newlines shown as ⏎."""
    text = str(value)
    if len(text) <= limit:
        return text
    return text[: limit - 1].replace("\n", "⏎") + "…"


def _labelled(label: str, body: Any, style: str = "bold") -> Styled:
    text = Styled(f"{label} ", style=style)
    text.append_text(body if isinstance(body, Styled) else styled_safe(body))
    return text


def _evidence_view(evidence: list[Evidence]) -> TableView:
    """Evidence lines with their numbers (a grid on a terminal, aligned lines in a pipe)."""
    view = TableView(["line", "text"], grid=True, styles=["dim", ""], right=["line"])
    for e in evidence:
        view.add_row(str(e.line), styled_safe(e.text))
    return view


def finding_panel(f: Finding, why: bool = False) -> Block:
    """A finding as a panel on a terminal, plain lines in a pipe (with its conditions when `why`)."""
    parts: list[Any] = []
    parts.append(styled_safe(f.summary))
    parts.append(Styled())
    parts.append(_labelled("What happened:", f.diagnosis))
    parts.append(_labelled("Why:", f.root_cause))
    parts.append(_labelled("Your build:", f.version_status))
    ev = _evidence_view(f.evidence[:12])
    parts += [Styled(), Styled(f"Evidence (seen {f.count}×, lines {f.first_line}-{f.last_line})", style="bold"), ev]
    if f.seen is not None and f.seen.runs > 1:
        parts.append(_labelled("Across runs:", f.seen.sentence(), "bold cyan"))
        if f.seen.last_evidence:
            last = _evidence_view(f.seen.last_evidence[:6])
            parts += [Styled(f"Last seen (run {f.seen.last_run})", style="bold"), last]
    if f.values:
        parts.append(_labelled("Values:", ", ".join(f"{k}={value_words(v)}" for k, v in f.values.items())))
    if f.facts_used:
        parts.append(
            _labelled(
                "Facts used:",
                "; ".join(
                    f"{k}={value_words(v.value)}" + (f" (line {v.line})" if v.line else f" ({source_label(v.source)})")
                    for k, v in f.facts_used.items()
                ),
            )
        )
    parts += [Styled(), Styled("What to do, in order", style="bold")]
    for i, step in enumerate(f.remediation, 1):
        line = Styled(f" {i}. ")
        line.append_text(styled_safe(step.text))
        parts.append(line)
        if step.command:
            parts.append(Styled("      $ ", style="dim") + Styled(step.command, style="green"))
    for w in f.workarounds:
        parts.append(_labelled("Workaround:", w.text, "bold cyan"))
        parts.append(_labelled("  Caveat:", w.caveat, "cyan"))
    for t in f.not_to_do:
        parts.append(_labelled("Does not help:", t, "bold magenta"))
    parts += [Styled(), Styled("Verify", style="bold")]
    parts += [Styled(" • ") + styled_safe(s) for s in f.verification]
    if f.questions:
        parts += [Styled(), Styled("Questions that would settle it", style="bold yellow")]
        parts += [Styled(" ? ") + styled_safe(q) for q in f.questions]
    if f.references:
        parts += [Styled(), Styled("References", style="bold")]
        for r in f.references:
            line = Styled(f" {r.role:8} ")
            line.append(r.label, style=f"link {r.url}")
            extra = f" (first in b{r.build})" if r.build else ""
            extra += "" if r.confirmed else " (unconfirmed)"
            line.append_text(styled_safe(f"{extra} {r.title or r.note or ''}"))
            parts.append(line)
    if why and f.conditions:
        parts += [Styled(), Styled("Conditions", style="bold")]
        for c in f.conditions:
            parts.append(styled_safe(f"  {c.status:7} {c.fact} {c.expected} (value: {value_words(c.value)})"))
    if f.source_file:
        parts.append(Styled(f"rule file: {f.source_file}", style="dim"))
    title = Styled()
    title.append(f" {f.confidence.upper()} ", style=CONF_STYLE.get(f.confidence, ""))
    title.append(f" {f.title} ", style="bold")
    title.append(f"[{f.severity}] ", style=SEV_STYLE.get(f.severity, ""))
    subtitle = Styled(f"{f.rule_id} · {runs_label(f)}")
    return Block(parts, title=title, subtitle=subtitle, border_style=SEV_STYLE.get(f.severity, ""))


def runs_label(f: Finding) -> str:
    """`run 3`, or `runs 0-39 (40)` for a cause seen in several runs."""
    if f.seen is None or f.seen.runs <= 1:
        return f"run {f.run}"
    return f"runs {f.seen.first_run}-{f.seen.last_run} ({f.seen.runs})"


def run_count(report: Report) -> int:
    """The runs the input held (a report's runs with the same facts are shown once)."""
    return report.run_count if report.run_count is not None else len(report.runs)


def run_bits(facts: dict[str, Any]) -> str:
    """The facts that tell runs apart, on one line, in words: build (or era), backends, model,
    speculation, mmproj, slots."""
    return run_words(facts)


def print_report(console: Printer, report: Report, why: bool = False) -> None:
    """Print the report to the terminal (with the ruled-out rules when `why`); plain lines when
    the console is not a terminal."""
    plain_lines(console)
    name = report.input.get("name", "input")
    header = Styled(f"llamadiag {report.version} · {name} · {run_count(report)} run(s) · ", style="dim")
    header.append(f"{len(report.findings)} finding(s)", style="bold")
    console.print(header)
    for run in report.runs:
        console.print(styled_safe(f"  run {run.index}: lines {run.first_line}-{run.last_line}; " + run_bits(run.facts)))
        if run.seen is not None:
            console.print(styled_safe(f"    {run.seen.sentence()}"), style="dim")
    if not report.findings:
        console.print(Styled("No known failure recognised.", style="green"))
    for f in report.findings:
        console.print(finding_panel(f, why))
    if why and report.ruled_out:
        console.print(Styled("Ruled out", style="bold"))
        for r in report.ruled_out:
            console.print(ruled_out_line(r))
    if report.unmatched:
        print_unmatched(console, report.unmatched)
    for note in report.notes:
        console.print(_labelled("Note:", note, "bold yellow"))


def ruled_out_line(r: RuledOut) -> Styled:
    """A ruled-out rule as one line."""
    where = f"run {r.run}" if r.runs <= 1 else f"{r.runs} runs, {r.run}-{r.last_run}, first"
    return styled_safe(f"  {r.rule_id} ({where}, line {r.evidence_line}): {r.reason}")


def print_unmatched(console: Printer, templates: list) -> None:
    """Warning/error lines no rule explains, grouped: the next rule to write is at the top."""
    known = any(t.looks_like for t in templates)
    table = TableView(
        ["count", "level", "first line", "template", *(("known report",) if known else ())], "Lines no rule explains"
    )
    for t in templates:
        cells = [str(t.count), t.level, str(t.first_line), styled_safe(t.template)]
        if known:
            cells.append("\n".join(f"looks like {x.label()}" for x in t.looks_like))
        table.add_row(*cells)
    console.print(table)


def print_facts(console: Printer, report: Report) -> None:
    """One table per run: each fact, its value and the line (or option) it came from. On a
    terminal a long value (a chat template) is cut with an ellipsis; in a pipe it is kept whole."""
    whole = is_plain(plain_lines(console))
    for run in report.runs:
        table = TableView(
            ["fact", "value", "from"],
            f"run {run.index} (lines {run.first_line}-{run.last_line})"
            + (f", instance {run.instance}" if run.instance else "")
            + (f"; {run.seen.sentence()}" if run.seen is not None else ""),
        )
        for name, use in run.fact_sources.items():
            value = value_words(use.value)
            shown = value.replace("\n", "⏎") if whole else cut(value)
            table.add_row(name, styled_safe(shown), f"line {use.line}" if use.line else source_label(use.source))
        console.print(table)
        said = stats_words(run.stats)
        if said:
            console.print(Styled("  requests", style="bold"))
            for line in said:
                console.print(styled_safe(f"    {line}"))
    if not report.runs:
        console.print("no server run found in the input")
    for note in report.notes:
        console.print(_labelled("Note:", note, "bold yellow"))
