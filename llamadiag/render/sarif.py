"""`explain --format sarif`: the findings as a SARIF 2.1.0 log, for code-scanning dashboards and
editors (GitHub code scanning, VS Code's SARIF viewer).

One SARIF run per input. Each rule that produced a finding is described once in
`tool.driver.rules` (title, summary, remediation as help, `helpUri` to its generated page
docs/rules/<id>.md); each finding is a result with the rule's id and index, a level from its
severity, the log file and the line of its first evidence (the other evidence lines as related
locations), and confidence, run, builds and references as properties. Built from the redacted
report data, like the JSON output.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any
from urllib.parse import quote

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"critical": "error", "error": "error", "warning": "warning", "info": "note"}
RULE_DOCS = "docs/rules/{rule_id}.md"  # the generated page of a rule, relative to the project's root


def artifact_uri(name: str) -> str:
    """The input's name as a URI reference: a relative path stays relative (forward slashes),
    characters a URI cannot hold are percent-encoded (`<stdin>` -> `%3Cstdin%3E`)."""
    path = PurePath(name).as_posix() if "\\" not in name else name.replace("\\", "/")
    return quote(path, safe="/:@-._~")


def _rule(finding: dict[str, Any]) -> dict[str, Any]:
    steps = [f"{i}. {s['text']}" for i, s in enumerate(finding["remediation"], 1)]
    help_text = "\n".join(["What to do, in order:", *steps]) if steps else finding["summary"]
    return {
        "id": finding["rule_id"],
        "name": finding["rule_id"],
        "shortDescription": {"text": finding["title"]},
        "fullDescription": {"text": finding["summary"]},
        "help": {"text": help_text},
        "helpUri": RULE_DOCS.format(rule_id=finding["rule_id"]),
        "defaultConfiguration": {"level": LEVELS.get(finding["severity"], "warning")},
        "properties": {"category": finding["category"], "tags": [finding["category"], "llama-server"]},
    }


def _location(uri: str, line: int, text: str | None = None) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": max(1, line)}
    if text is not None:
        region["snippet"] = {"text": text}
    return {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}


def _result(finding: dict[str, Any], index: int, uri: str) -> dict[str, Any]:
    evidence = finding["evidence"]
    first = evidence[0] if evidence else {"line": finding["first_line"], "text": None}
    message = f"{finding['title']}: {finding['summary']} {finding['version_status']}".strip()
    result: dict[str, Any] = {
        "ruleId": finding["rule_id"],
        "ruleIndex": index,
        "level": LEVELS.get(finding["severity"], "warning"),
        "message": {"text": message},
        "locations": [_location(uri, first["line"], first["text"])],
        "properties": {
            "severity": finding["severity"],
            "confidence": finding["confidence"],
            "run": finding["run"],
            "count": finding["count"],
            "firstLine": finding["first_line"],
            "lastLine": finding["last_line"],
            "fixedIn": finding["fixed_in"],
            "introducedIn": finding["introduced_in"],
            "references": [r["url"] for r in finding["references"]],
        },
    }
    related = [
        _location(uri, e["line"], e["text"]) | {"id": i, "message": {"text": "evidence"}}
        for i, e in enumerate(evidence[1:], 1)
    ]
    if related:
        result["relatedLocations"] = related
    return result


def sarif_log(data: dict[str, Any]) -> dict[str, Any]:
    """The SARIF 2.1.0 log of report data (`render.json.report_data`)."""
    uri = artifact_uri(str(data["input"].get("name", "input")))
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results = []
    for finding in data["findings"]:
        if finding["rule_id"] not in index:
            index[finding["rule_id"]] = len(rules)
            rules.append(_rule(finding))
        results.append(_result(finding, index[finding["rule_id"]], uri))
    driver = {
        "name": "llamadiag",
        "version": data["version"],
        "semanticVersion": data["version"],
        "rules": rules,
        "properties": {"rulesVersion": data["rules_version"]},
    }
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "artifacts": [{"location": {"uri": uri}}],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"redaction": data.get("redaction", {}), "notes": data.get("notes", [])},
    }
    return sarif_document([run])


def sarif_document(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A SARIF 2.1.0 log holding these runs (one per log explained)."""
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": runs}
