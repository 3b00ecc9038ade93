"""A bug-report draft in llama.cpp's issue form, for a failure no rule explains.

API (the `report` command; the desk may call it too):

    no_draft(report, templates, source) -> NoDraft | None         # a rule explains it, or nothing failed
    draft_report(report, templates, redactor=None) -> BugReport   # redacted unless redactor.enabled is False

The form's fields (Name and Version, Operating systems, GGML backends, Hardware, Models,
Problem description & steps to reproduce, First Bad Commit, Relevant log output) are filled
from the run's facts; what the log cannot tell becomes a question for the reporter.
`templates` are the unexplained warning/error lines (engine/unmatched.py). When their lines match
a known report whose cause is not settled (rules/formats/unsettled.yaml), the draft says so first:
"Possibly the same as #NNNN (open): add your details there instead of filing a new issue".
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from llamadiag.engine.findings import Report, RunOut
from llamadiag.engine.reportdata import dump
from llamadiag.engine.unmatched import LineTemplate, LooksLike
from llamadiag.features.redact import RedactionSummary, Redactor
from llamadiag.knowledge.formatcache import cached_format
from llamadiag.knowledge.levels import Severity
from llamadiag.mdtext import fence

MAX_LOG_LINES = 40
MAX_POSSIBLY_SAME = 3


class BugReport(BaseModel):
    """A draft upstream bug report in the fields of llama.cpp's issue template."""

    title: str
    name_and_version: str
    operating_systems: str
    ggml_backends: str
    hardware: str
    models: str
    problem: str
    first_bad_commit: str
    log_output: str
    templates: list[LineTemplate] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)
    known_findings: list[str] = Field(default_factory=list, description="Rules that did match: check them first.")
    possibly_same: list[LooksLike] = Field(
        default_factory=list,
        description="Known reports with no settled cause that the unexplained lines match: add to them first.",
    )
    redaction: RedactionSummary = Field(default_factory=RedactionSummary)


class NoDraft(BaseModel):
    """Why no bug report should be drafted: a rule already explains the failure, or nothing failed."""

    reason: str = Field(description="explained | nothing")
    message: str
    rule_id: str | None = Field(None, description="The rule that explains the failure (reason explained).")
    docs: str | None = Field(None, description="Its documentation page in llamadiag's repository.")


def _errors(templates: list[LineTemplate]) -> list[LineTemplate]:
    """The templates that show a failure: error lines (the log's level E, or no level and an
    error's words). A warning is not a failure, even in an error's words: a healthy server
    logs `setting n_batch = n_ubatch = 512 to avoid assertion failure`."""
    return [t for t in templates if t.level == "E"]


def no_draft(report: Report, templates: list[LineTemplate], source: str) -> NoDraft | None:
    """Why a draft would not help, or None when there is something to report.

    A finding of severity error or worse means a rule explains the failure: the diagnosis, not
    a new upstream issue, is the answer. With no unexplained error line and no failure found
    (a healthy log, an empty file) there is nothing to report; warnings alone are not a bug."""
    failures = [f for f in report.findings if Severity(f.severity).rank >= Severity.error.rank]
    if failures:
        f = failures[0]
        docs = f"docs/rules/{f.rule_id}.md"
        return NoDraft(
            reason="explained",
            rule_id=f.rule_id,
            docs=docs,
            message=(
                f"No draft: a known issue {'may explain' if f.confidence == 'possible' else 'explains'} this "
                f"failure: {f.title} ({f.rule_id}, {f.confidence}). "
                f"Read the diagnosis and the fix with `llamadiag explain {source}`; the rule: "
                f"`llamadiag rules show {f.rule_id}`, {docs}. If the fix does not help, "
                "`--force` drafts a report anyway."
            ),
        )
    if not _errors(templates):
        seen = "the log is empty" if not report.runs and not templates else "the log shows no unexplained error line"
        known = ", ".join(dict.fromkeys(f"{f.rule_id} ({f.severity})" for f in report.findings))
        return NoDraft(
            reason="nothing",
            message=(
                f"No draft: nothing to report, {seen}"
                + (f"; `llamadiag explain {source}` names what it found: {known}" if known else "")
                + ". If something still goes wrong (a hang, a wrong answer), start llama-server with -lv 4, "
                "reproduce it, and run report on that log; `--force` drafts a report from this one anyway."
            ),
        )
    return None


def _pick_run(report: Report, templates: list[LineTemplate]) -> RunOut | None:
    if not report.runs:
        return None
    first_error = next((t.first_line for t in templates if t.level == "E"), None)
    if first_error is not None:
        for run in report.runs:
            if run.first_line <= first_error <= max(run.last_line, run.first_line):
                return run
    return report.runs[-1]


def _list(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _version(f: dict[str, Any], questions: list[str]) -> str:
    if "build" not in f:
        questions.append("Which build is it? Run `llama-server --version` and paste its output.")
        return "unknown: the log does not show it (run `llama-server --version`)" + (
            f"; the log's shape says {f['era']}" if "era" in f else ""
        )
    head = (
        f"version: {f['semver']} (build {f['build']}, commit {f.get('commit', '?')})"
        if "semver" in f
        else (f"version: {f['build']} ({f.get('commit', 'unknown')})")
    )
    if "compiler" in f or "target" in f:
        head += f"\nbuilt with {f.get('compiler', '?')} for {f.get('target', '?')}"
    if f.get("version_usable") is False:
        questions.append(
            "The version line is not a mainline build (fork, distro or git-less build): which source is it?"
        )
    return head


def _os(f: dict[str, Any], questions: list[str]) -> str:
    probe = " ".join(str(f.get(k, "")) for k in ("os", "target", "compiler")).lower()
    hints = cached_format("OsHints")  # validated once, then from the start-up cache
    for word, name in hints.os_words:
        if re.search(rf"\b{word}", probe):
            return name
    for wrapper in f.get("wrappers", []):
        if wrapper in hints.wrapper_os:
            return hints.wrapper_os[wrapper]
    questions.append("Which operating system (and version) runs the server?")
    return "unknown"


def _backends(f: dict[str, Any], questions: list[str]) -> str:
    """The backends the log names, with the layer offload it reports (`offloaded N/M layers to
    GPU`, rules/facts/core.yaml): a log that offloads its layers ran on a GPU even when it does
    not name the backend."""
    done, total = f.get("offloaded_layers"), f.get("total_layers")
    offload = f"{done}/{total if total is not None else '?'} layers offloaded to the GPU" if done is not None else ""
    if f.get("backends"):
        return _list(f["backends"]) + (f" ({offload})" if offload else "")
    if done:
        questions.append("Which GGML backend does this build use (CUDA, Vulkan, Metal, ROCm, SYCL)?")
        return f"a GPU backend the log does not name: {offload}"
    if done == 0:
        return f"CPU: {offload}"
    questions.append(
        "Which GGML backend and devices? The log does not show them: "
        "paste `llama-server --list-devices`, or start with -lv 4."
    )
    return "unknown: the log shows neither the devices nor the layer offload"


def _hardware(f: dict[str, Any], questions: list[str]) -> str:
    parts = []
    if f.get("devices"):
        parts.append("Devices: " + _list(f["devices"]))
    for key, label in (
        ("compute_capability", "compute capability"),
        ("vulkan_driver", "Vulkan driver"),
        ("device_total_mib", "device memory MiB"),
        ("linux_kernel", "kernel"),
    ):
        if f.get(key) not in (None, [], ""):
            parts.append(f"{label}: {_list(f[key])}")
    questions.append("Which CPU and how much RAM; for GPUs, the driver version (nvidia-smi, vulkaninfo --summary)?")
    return "; ".join(parts) or "unknown: the log does not list devices"


def _models(f: dict[str, Any], questions: list[str]) -> str:
    parts = []
    if f.get("model_path"):
        parts.append(f"model: {f['model_path'].replace(chr(92), '/').rsplit('/', 1)[-1]}")
    for key, label in (("arch", "arch"), ("model_shards", "shards"), ("mmproj", "mmproj"), ("draft_model", "draft")):
        if f.get(key) not in (None, "", []):
            parts.append(f"{label}: {_list(f[key])}")
    if not parts:
        questions.append("Which model (Hugging Face repo and quant, or file name) does it load?")
    return "; ".join(parts) or "unknown"


def _problem(f: dict[str, Any], templates: list[LineTemplate], questions: list[str]) -> str:
    first = next(iter(_errors(templates)), None)
    lines = []
    if first is not None:
        shown = first.template.replace("`", "'")
        lines.append(f"llama-server logs `{shown}` ({first.count}×, first at line {first.first_line}).")
    else:
        lines.append(
            "The log shows no error line: describe what goes wrong (a hang, a wrong answer, a crash with no message)."
        )
    flags = f.get("flags") or {}
    if flags:
        cmd = " ".join(f"--{k}" + ("" if v is True else f" {v}") for k, v in flags.items())
        lines += ["", "Command line (as parsed from the log or given):", "", fence(f"llama-server {cmd}", "sh")]
    else:
        questions.append("What is the full llama-server command line (or the LLAMA_ARG_* variables)?")
    setup = [
        f"{k} = {_list(f[k])}"
        for k in (
            "n_ctx",
            "n_slots",
            "n_batch",
            "n_ubatch",
            "flash_attn",
            "spec_type",
            "n_gpu_layers",
            "cache_type_k",
            "cache_type_v",
        )
        if k in f
    ]
    if setup:
        lines += ["", "Setup from the log: " + ", ".join(setup) + "."]
    start = "the command line above" if flags else "your full command line"
    lines += [
        "",
        "Steps to reproduce:",
        "",
        f"1. Start llama-server with {start}.",
        "2. Send the request that fails (give a minimal curl command or request body).",
        "3. The error above appears in the log.",
    ]
    questions.append(
        "Which request triggers it (endpoint, streaming or not, images or tools), and does it happen every time?"
    )
    return "\n".join(lines)


def _possibly_same(templates: list[LineTemplate]) -> list[LooksLike]:
    """Known reports the templates match, errors first, each once, open ones before closed ones."""
    seen: dict[int, LooksLike] = {}
    for t in sorted(templates, key=lambda t: t.level != "E"):
        for x in t.looks_like:
            seen.setdefault(x.issue, x)
    return sorted(seen.values(), key=lambda x: x.state != "open")[:MAX_POSSIBLY_SAME]


def draft_report(report: Report, templates: list[LineTemplate], redactor: Redactor | None = None) -> BugReport:
    """Draft a redacted upstream bug report from a diagnosis and its unmatched-line templates.

    Only what came from the log is searched (the draft's own words and the rule titles it
    names are knowledge text, features/redact.py); the closing line counts what the draft shows."""
    r = redactor or Redactor()
    run = _pick_run(report, templates)
    f: dict[str, Any] = dict(run.facts) if run else {}
    questions: list[str] = []
    # the title is an error line, never a warning (a healthy server warns too)
    first = next(iter(_errors(templates)), None)
    title = f"Misc. bug: {first.template[:90]}" if first else "Misc. bug: <one line: what fails>"
    log_lines = [f"{n:>6}: {text}" for t in templates for n, text in t.examples[:1]][:MAX_LOG_LINES]
    draft = BugReport(
        title=title,
        name_and_version=_version(f, questions),
        operating_systems=_os(f, questions),
        ggml_backends=_backends(f, questions),
        hardware=_hardware(f, questions),
        models=_models(f, questions),
        problem=_problem(f, templates, questions),
        first_bad_commit="unknown. If an older build worked, give it; `git bisect` between the two finds the commit.",
        log_output="\n".join(log_lines) or "(no warning or error lines: attach the whole log, started with -lv 4)",
        templates=templates,
        questions=[*questions, "Did an older build work? Which one (for First Bad Commit)?"],
        known_findings=[
            f"{x.rule_id}: {x.title} ({x.confidence})"
            + (f", {x.seen.sentence()}" if x.seen and x.seen.runs > 1 else "")
            for x in report.findings
        ],
        possibly_same=_possibly_same(templates),
    )
    r.learn_report(dump(report), [dump(t) for t in templates])
    draft = r.model(draft)
    draft.redaction = r.summary()
    return draft
