"""Markdown for a ticket reply: the short answer, what happened, why, what to do in order,
how to verify, the references, and the log lines it rests on.

GitHub-flavoured Markdown. Text that came from a log is escaped (`<` would start HTML) or
fenced; commands go in code spans or blocks. `reference_line` and `steps_markdown` are
shared with the lookup and bug-report renderers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llamadiag.engine.findings import Finding, ReferenceOut, Report, StepOut, WorkaroundOut
from llamadiag.mdtext import code, esc, fence, link
from llamadiag.render.words import run_words, stats_words, value_words

if TYPE_CHECKING:  # the draft's models: pydantic, which `explain -f markdown` does not import
    from llamadiag.features.bugreport import BugReport, LineTemplate, LooksLike

CONF_WORDS = {
    "confirmed": "Confirmed",
    "regression": "Possible regression",
    "likely": "Likely",
    "possible": "Possible",
}
CONF_SENTENCE = {
    "confirmed": "Your log shows a known llama.cpp issue",
    "regression": "Your log shows a known llama.cpp issue that your build should already have fixed",
    "likely": "Your log most likely shows a known llama.cpp issue",
    "possible": "Your log may show a known llama.cpp issue",
}


def ref_label(r: ReferenceOut) -> str:
    """`#30204`, `PR #30257`, `commit abc`, another repository's by name: the link text of a reference."""
    return r.label


def ref_detail(r: ReferenceOut) -> str:
    """What follows the link: role, first build with the fix, title or note (plain text)."""
    text = f"({r.role}"
    if r.build:
        text += f", first in b{r.build}"
    text += ")"
    if r.title:
        text += f": {r.title}"
    if not r.confirmed:
        text += f" (unconfirmed: {r.note})" if r.note else " (unconfirmed)"
    elif r.note:
        text += f". {r.note}"
    return text


def reference_line(r: ReferenceOut) -> str:
    """One reference: link, role, first build with the fix, title or note."""
    return f"{link(ref_label(r), r.url)} {esc(ref_detail(r))}"


def steps_markdown(steps: list[StepOut], workarounds: list[WorkaroundOut], not_to_do: list[str]) -> list[str]:
    """Markdown lines for the remediation steps, workarounds and what not to do."""
    out = ["**What to do, in order**", ""]
    for i, step in enumerate(steps, 1):
        out.append(f"{i}. {esc(step.text)}")
        if step.command:
            out.append(f"   {code(step.command)}" if len(step.command) <= 70 else "\n" + _indented_block(step.command))
    if workarounds:
        out += ["", "**Until then (workaround)**", ""]
        for w in workarounds:
            out.append(
                f"- {esc(w.text)}" + (f" {code(w.command)}" if w.command else "") + f" *Caveat:* {esc(w.caveat)}"
            )
    if not_to_do:
        out += ["", "**What will not help**", ""]
        out += [f"- {esc(t)}" for t in not_to_do]
    return out


def _indented_block(command: str) -> str:
    return "\n".join("   " + line for line in fence(command, "sh").splitlines())


def short_answer(f: Finding) -> str:
    """The finding's one-paragraph answer: confidence, title, references and version status."""
    refs = [r for r in f.references if r.role in ("report", "fix")]
    named = ", ".join(r.label for r in refs)
    head = CONF_SENTENCE.get(f.confidence, "Your log shows a known issue")
    return f"**Short answer.** {head}: {esc(f.title)}" + (f" ({named})" if named else "") + f". {esc(f.version_status)}"


def finding_markdown(f: Finding, heading: str = "##") -> str:
    """A finding as a markdown section."""
    out = [f"{heading} {CONF_WORDS.get(f.confidence, f.confidence)}: {esc(f.title)}", ""]
    out += [short_answer(f), ""]
    out += [f"**What happened.** {esc(f.diagnosis)}", ""]
    out.append(f"*From {f.count} occurrence(s), log lines {f.first_line}–{f.last_line}:*")
    out += [fence("\n".join(f"{e.line:>6}: {e.text}" for e in f.evidence[:12])), ""]
    if f.seen is not None and f.seen.runs > 1:
        out += [f"**Across runs.** {esc(f.seen.sentence()[0].upper() + f.seen.sentence()[1:])}.", ""]
        if f.seen.last_evidence:
            out.append(f"*Last seen in run {f.seen.last_run}:*")
            out += [fence("\n".join(f"{e.line:>6}: {e.text}" for e in f.seen.last_evidence[:6])), ""]
    out += [f"**Why.** {esc(f.root_cause)}", ""]
    out += steps_markdown(f.remediation, f.workarounds, f.not_to_do)
    out += ["", "**How to verify the fix**", ""]
    out += [f"- [ ] {esc(s)}" for s in f.verification]
    if f.questions:
        out += ["", "**Questions that would settle this** (please answer in your reply)", ""]
        out += [f"- {esc(q)}" for q in f.questions]
    if f.references:
        out += ["", "**References**", ""]
        out += [f"- {reference_line(r)}" for r in f.references]
    where = f"run {f.run}" if f.seen is None or f.seen.runs <= 1 else f"runs {f.seen.first_run}–{f.seen.last_run}"
    out += ["", f"*Rule `{f.rule_id}` · severity {f.severity} · confidence {f.confidence} · {where}*"]
    return "\n".join(out)


def run_line(run: Any) -> str:
    """A run as a markdown list item: its lines and summary (and the runs with the same facts)."""
    line = f"- Run {run.index} (lines {run.first_line}–{run.last_line}): " + esc(run_summary(run))
    seen = getattr(run, "seen", None)
    return line + (f"; {esc(seen.sentence())}" if seen is not None else "")


def run_summary(run: Any) -> str:
    """What a run was, in a few plain words: build, backends, devices, model, speculative type."""
    return run_words(run.facts, detail=False)


def footer(report: Report, redaction_note: str | None) -> list[str]:
    """The closing lines: llamadiag and rules version, and the redaction note."""
    line = f"*llamadiag {report.version}, rules {report.rules_version}*"
    return ["", "---", line + (f" · {esc(redaction_note)}" if redaction_note else "")]


def report_markdown(report: Report, redaction_note: str | None = None) -> str:
    """The whole report as markdown."""
    out = ["# llamadiag diagnosis", ""]
    name = esc(report.input.get("name", "input"))
    runs = report.run_count if report.run_count is not None else len(report.runs)
    if not report.findings:
        out.append(
            f"No known failure was recognised in `{name}` ({runs} server run(s) read). "
            "`llamadiag report LOG` drafts an upstream bug report from it."
        )
    else:
        first = report.findings[0]
        out.append(
            f"`{name}`: {len(report.findings)} finding(s) in {runs} server run(s). Most likely: "
            f"**{esc(first.title)}** ({first.confidence})."
        )
    out += ["", *[run_line(run) for run in report.runs]]
    for f in report.findings:
        out += ["", finding_markdown(f)]
    if report.unmatched:
        out += ["", "## Lines no rule explains", ""]
        templates: list[LineTemplate] = report.unmatched
        out += [
            f"- {t.count}× `{t.level}` from line {t.first_line}: {code(t.template)}" + looks_like_md(t.looks_like)
            for t in templates
        ]
    for note in report.notes:
        out += ["", f"> Note: {esc(note)}"]
    out += footer(report, redaction_note)
    return "\n".join(out) + "\n"


def table_code(value: Any) -> str:
    """A value in a table cell: in words, as inline code (no markdown or HTML inside), on one line,
    its `|` escaped so it cannot open another cell."""
    return code(value_words(value).replace("\r", "").replace("\n", "⏎")).replace("|", "\\|")


def facts_markdown(report: Report, redaction_note: str | None = None) -> str:
    """`facts -f markdown`: per run a table of each fact, its value and where it came from, and
    the run's request statistics."""
    name = esc(report.input.get("name", "input"))
    out = ["# llamadiag facts", "", f"`{name}`: {len(report.runs)} server run(s)."]
    for run in report.runs:
        where = f", instance {esc(run.instance)}" if run.instance else ""
        out += ["", f"## Run {run.index} (lines {run.first_line}–{run.last_line}{where})", ""]
        out += ["| fact | value | from |", "|---|---|---|"]
        for fact, use in run.fact_sources.items():
            source = f"line {use.line}" if use.line else esc(use.source)
            out.append(f"| {fact} | {table_code(use.value)} | {source} |")
        said = stats_words(run.stats)
        if said:
            out += ["", "**Requests**", ""]
            out += [f"- {esc(line.strip())}" for line in said]
    if not report.runs:
        out += ["", "No server run found in the input."]
    for note in report.notes:
        out += ["", f"> Note: {esc(note)}"]
    out += footer(report, redaction_note)
    return "\n".join(out) + "\n"


def looks_like_md(reports: list[LooksLike]) -> str:
    """` — looks like [#NNNN](url) (open, no known fix)` for a template's known reports, or ''."""
    if not reports:
        return ""
    return " — looks like " + "; ".join(f"[#{x.issue}]({x.url}) ({esc(x.state_words)}, no known fix)" for x in reports)


def possibly_same_md(reports: list[LooksLike]) -> list[str]:
    """The draft's opening note: known reports with no settled cause that the lines match."""
    out = []
    for x in reports:
        where = (
            "add your details there instead of filing a new issue"
            if x.state == "open"
            else "it was closed without a fix: link it from your report"
        )
        out += [f"> Possibly the same as [#{x.issue}]({x.url}) ({esc(x.state_words)}): {where}.", ">"]
        out += [f"> *{esc(x.title)}* — {esc(x.note)}", ""]
    return out


def draft_markdown(d: BugReport) -> str:
    """A bug-report draft as the sections of llama.cpp's issue form, in Markdown."""
    out = [f"<!-- Title: {d.title.replace('--', '- -')} -->", ""]
    out += possibly_same_md(d.possibly_same)
    if d.known_findings:
        out += ["> llamadiag recognised known issues in this log; check them before filing:", ">"]
        out += [f"> - {esc(x)}" for x in d.known_findings]
        out.append("")
    sections = [
        ("Name and Version", fence(d.name_and_version, "shell")),
        ("Operating systems", esc(d.operating_systems)),
        ("GGML backends", esc(d.ggml_backends)),
        ("Hardware", esc(d.hardware)),
        ("Models", esc(d.models)),
        ("Problem description & steps to reproduce", d.problem),
        ("First Bad Commit", esc(d.first_bad_commit)),
        ("Relevant log output", fence(d.log_output, "shell")),
    ]
    for heading, body in sections:
        out += [f"### {heading}", "", body, ""]
    if d.templates:
        out += ["<details><summary>Unexplained warning and error lines, grouped</summary>", ""]
        out += ["| level | count | lines | template | looks like |", "|---|---|---|---|---|"]
        for t in d.templates:
            cell = t.template.replace("|", "\\|").replace("`", "'")
            seen = ", ".join(f"#{x.issue}" for x in t.looks_like)
            out.append(f"| {t.level} | {t.count} | {t.first_line}–{t.last_line} | `{cell}` | {seen} |")
        out += ["", "</details>", ""]
    out += ["### Before filing, please answer", "", *[f"- [ ] {esc(q)}" for q in dict.fromkeys(d.questions)], ""]
    out += ["---", f"*Draft by llamadiag · {esc(d.redaction.line())}*"]
    return "\n".join(out) + "\n"
