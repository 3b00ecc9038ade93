"""`explain --format github`: GitHub Actions workflow commands, one annotation per finding
(`::error file=server.log,line=47,title=...::message`), shown on the run's summary and, when
the log is a file of the repository, on its line.

Escaping follows GitHub's runner (actions/toolkit `command.ts`): in the message `%`, `\\r` and
`\\n` become `%25`, `%0D`, `%0A`; in a property also `:` and `,` (`%3A`, `%2C`). So log text
in a message can neither end the annotation nor start a workflow command of its own.
"""

from __future__ import annotations

from typing import IO, Any

LEVELS = {"critical": "error", "error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """A workflow command's message, escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: dict[str, Any], file: str) -> str:
    """One finding as a workflow command."""
    level = LEVELS.get(finding["severity"], "warning")
    props = {
        "file": file,
        "line": str(finding["first_line"]),
        "endLine": str(finding["last_line"]),
        "title": f"{finding['title']} [{finding['confidence']}, {finding['rule_id']}]",
    }
    lines = [finding["summary"], finding["version_status"]]
    lines += [f"{i}. {s['text']}" for i, s in enumerate(finding["remediation"], 1)]
    lines.append(f"(llamadiag rule {finding['rule_id']}, docs/rules/{finding['rule_id']}.md)")
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
    return f"::{level} {head}::{escape_data(chr(10).join(lines))}"


def write_annotations(data: dict[str, Any], out: IO[str]) -> None:
    """Write one workflow command per finding of report data (`render.json.report_data`)."""
    file = str(data["input"].get("name", "input"))
    for finding in data["findings"]:
        out.write(annotation(finding, file) + "\n")
