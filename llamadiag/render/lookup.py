"""Lookup results for the terminal (rich) and for a ticket (Markdown).

`lookup_markdown(response, versions, redaction_note)`: the best match as a full answer (why,
build status, steps, workaround, verification, references), the others as a short list.
`print_lookup(console, response)`: the same for a terminal; log text never becomes markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from llamadiag.features.lookup.service import LookupResponse, LookupResult
from llamadiag.mdtext import esc
from llamadiag.render.layout import Block, plain_lines
from llamadiag.render.markdown import reference_line, steps_markdown
from llamadiag.render.terminal import SEV_STYLE, safe

BAND_WORDS = [(95, "named"), (85, "signature"), (70, "partial signature"), (50, "applies"), (0, "words")]


def band(score: float) -> str:
    """The word for a lookup score's band."""
    return next(word for low, word in BAND_WORDS if score >= low)


def _read_as(resp: LookupResponse) -> str:
    q = resp.query
    parts = [", ".join(q.kind) or "nothing usable"]
    if q.build is not None:
        parts.append(f"build b{q.build}")
    if q.flags:
        parts.append("flags " + " ".join(f"--{k}" + ("" if v is True else f" {v}") for k, v in q.flags.items()))
    return "; ".join(parts)


def lookup_markdown(resp: LookupResponse, versions: str = "", redaction_note: str | None = None) -> str:
    """A lookup response as markdown."""
    out = ["# Known issues for this query", ""]
    if resp.error:
        out.append(f"The query could not be read: {esc(resp.error)}.")
    else:
        out.append(f"Read as: {esc(_read_as(resp))}.")
    for note in resp.notes:
        out += ["", f"> Note: {esc(note)}"]
    if resp.results:
        out += ["", *_best_markdown(resp.results[0])]
    if len(resp.results) > 1:
        out += ["", "## Other candidates", ""]
        for i, r in enumerate(resp.results[1:], 2):
            status = f" {esc(r.build_status)}" if r.affects_build is not None else ""
            out.append(f"{i}. **{esc(r.title)}** (`{r.rule_id}`, score {r.score:g}): {esc(r.why[0])}.{status}")
    out += ["", "---", " · ".join(filter(None, [versions and f"*{versions}*", redaction_note and esc(redaction_note)]))]
    return "\n".join(out).rstrip("\n· ") + "\n"


def _best_markdown(r: LookupResult) -> list[str]:
    out = [
        f"## {esc(r.title)}",
        "",
        f"*Rule `{r.rule_id}` · severity {r.severity} · score {r.score:g} ({band(r.score)})*",
        "",
    ]
    out += ["**Why it matches**", "", *[f"- {esc(w)}" for w in r.why if w != r.build_status], ""]
    out += [f"**What the user sees.** {esc(r.summary)}", ""]
    if r.diagnosis:
        out += [f"**What happened.** {esc(r.diagnosis)}", ""]
    if r.build_status:
        out += [f"**The build.** {esc(r.build_status)}", ""]
    out += steps_markdown(r.remediation, r.workarounds, [])
    if r.verification:
        out += ["", "**How to verify the fix**", "", *[f"- [ ] {esc(s)}" for s in r.verification]]
    if r.questions:
        out += ["", "**Questions that would settle it**", "", *[f"- {esc(q)}" for q in r.questions]]
    if r.references:
        out += ["", "**References**", "", *[f"- {reference_line(ref)}" for ref in r.references]]
    return out


def print_lookup(console: Console, resp: LookupResponse, full: int = 1) -> None:
    """Print a lookup response to the terminal (`full` results in full, the rest in short)."""
    plain_lines(console)
    header = Text("lookup · read as: ", style="dim")
    header.append_text(safe(_read_as(resp)))
    console.print(header)
    for note in resp.notes:
        console.print(Text("Note: ", style="bold yellow") + safe(note))
    if not resp.results:
        console.print(Text("No known issue matches.", style="yellow"))
    for i, r in enumerate(resp.results):
        console.print(_panel(r, detailed=i < full))


def _panel(r: LookupResult, detailed: bool) -> Block:
    parts: list[Text] = [Text(" • ") + safe(w) for w in r.why if w != r.build_status]
    if r.build_status:
        parts.append(Text("Build: ", style="bold") + safe(r.build_status))
    parts.append(Text("Sees: ", style="bold") + safe(r.summary))
    if detailed:
        if r.diagnosis:
            parts.append(Text("What happened: ", style="bold") + safe(r.diagnosis))
        parts.append(Text("What to do", style="bold"))
        for i, step in enumerate(r.remediation, 1):
            parts.append(Text(f" {i}. ") + safe(step.text))
            if step.command:
                parts.append(Text("      $ ", style="dim") + Text(step.command, style="green"))
        for w in r.workarounds:
            parts.append(Text("Workaround: ", style="bold cyan") + safe(f"{w.text} Caveat: {w.caveat}"))
    refs = Text("Refs: ", style="bold")
    for ref in r.references[:6]:
        refs.append(ref.label, style=f"link {ref.url}")
        refs.append(f" ({ref.role}{f', b{ref.build}' if ref.build else ''})  ")
    parts.append(refs)
    title = Text(f" {r.score:5.1f} ", style="bold")
    title.append(f"{r.title} ", style="bold")
    title.append(f"[{r.severity}] ", style=SEV_STYLE.get(r.severity, ""))
    return Block(parts, title=title, subtitle=Text(f"{r.rule_id} · {band(r.score)}"))
