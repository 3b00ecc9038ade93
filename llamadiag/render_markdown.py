"""Markdown for a ticket reply: what happened, why, what to do, how to verify."""

from __future__ import annotations

from llamadiag.findings import Finding, Report

CONF_WORDS = {
    "confirmed": "Confirmed",
    "regression": "Possible regression",
    "likely": "Likely",
    "possible": "Possible",
}


def _fence(text: str) -> str:
    body = text.replace("```", "`\u200b``")
    return f"```text\n{body}\n```"


def _ref(r) -> str:  # type: ignore[no-untyped-def]
    text = f"[{r.label}]({r.url}) ({r.role}"
    if r.build:
        text += f", first in b{r.build}"
    text += ")"
    if r.title:
        text += f": {r.title}"
    if not r.confirmed:
        text += " (unconfirmed"
        text += f": {r.note})" if r.note else ")"
    elif r.note:
        text += f". {r.note}"
    return text


def finding_markdown(f: Finding, heading: str = "##") -> str:
    out = [f"{heading} {CONF_WORDS.get(f.confidence, f.confidence)}: {f.title}", ""]
    out.append(
        f"*Rule `{f.rule_id}` · severity {f.severity} · run {f.run} · seen {f.count}×, "
        f"lines {f.first_line}–{f.last_line}*"
    )
    out += [
        "",
        f"**What happened.** {f.diagnosis}",
        "",
        f"**Why.** {f.root_cause}",
        "",
        f"**Your build.** {f.version_status}",
        "",
    ]
    out.append("**Evidence**")
    out.append(_fence("\n".join(f"{e.line:>6}: {e.text}" for e in f.evidence[:12])))
    out += ["", "**What to do, in order**", ""]
    for i, step in enumerate(f.remediation, 1):
        out.append(f"{i}. {step.text}" + (f"\n   `{step.command}`" if step.command else ""))
    if f.workarounds:
        out += ["", "**Until then (workaround)**", ""]
        for w in f.workarounds:
            out.append(f"- {w.text} *Caveat:* {w.caveat}")
    if f.not_to_do:
        out += ["", "**Does not help**", ""]
        out += [f"- {t}" for t in f.not_to_do]
    out += ["", "**How to verify the fix**", ""]
    out += [f"- [ ] {s}" for s in f.verification]
    if f.questions:
        out += ["", "**Questions that would settle this**", ""]
        out += [f"- {q}" for q in f.questions]
    if f.references:
        out += ["", "**References**", ""]
        out += [f"- {_ref(r)}" for r in f.references]
    return "\n".join(out)


def report_markdown(report: Report, redaction_note: str | None = None) -> str:
    out = ["# llamadiag diagnosis", ""]
    name = report.input.get("name", "input")
    runs = len(report.runs)
    if not report.findings:
        out.append(f"No known failure was recognised in `{name}` ({runs} server run(s) read).")
    else:
        first = report.findings[0]
        out.append(
            f"`{name}`: {len(report.findings)} finding(s) in {runs} server run(s). Most likely: "
            f"**{first.title}** ({first.confidence})."
        )
    for run in report.runs:
        facts = run.facts
        bits = []
        if "build" in facts:
            bits.append(f"build b{facts['build']}")
        elif "era" in facts:
            bits.append(f"era {facts['era']}")
        for key in ("backends", "spec_type", "has_mmproj", "model_path"):
            if key in facts and facts[key] not in (None, [], ""):
                bits.append(f"{key} {facts[key]}")
        out.append(
            f"- Run {run.index} (lines {run.first_line}–{run.last_line}): " + (", ".join(map(str, bits)) or "few facts")
        )
    for f in report.findings:
        out += ["", finding_markdown(f)]
    for note in report.notes:
        out += ["", f"> Note: {note}"]
    out += [
        "",
        "---",
        f"*llamadiag {report.version}, rules {report.rules_version}*"
        + (f" · {redaction_note}" if redaction_note else ""),
    ]
    return "\n".join(out) + "\n"
