"""The formats CI, editors and tickets read (#13 points 8 and 9): explain's JSON against its
published schema (every sample log), SARIF 2.1.0 against the OASIS schema, GitHub workflow
commands escaped as the runner reads them, JSON Lines, and facts as a real markdown table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from markdown_it import MarkdownIt

from llamadiag import api
from llamadiag.features.redact import Redactor
from llamadiag.render.github import annotation, escape_data, escape_property
from llamadiag.render.json import SCHEMA_VERSION, facts_data, report_data
from llamadiag.render.jsonl import write_findings_jsonl
from llamadiag.render.markdown import facts_markdown
from llamadiag.render.sarif import sarif_log
from llamadiag.render.schema import output_schema
from tests.paths import DATA, ROOT, SAMPLES

LOGS = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and not p.name.endswith(".md"))
SARIF_SCHEMA = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text())
OUTPUT_SCHEMA = json.loads((ROOT / "docs" / "output-schema.json").read_text())


@pytest.fixture(scope="module")
def knowledge() -> api.Knowledge:
    return api.load_knowledge()


def data_of(k: api.Knowledge, path: Path, unmatched: bool = True, why: bool = True) -> dict[str, Any]:
    report = api.diagnose(str(path.relative_to(ROOT)), knowledge=k, unmatched=unmatched).report
    return report_data(report, Redactor(), why)


def test_the_published_schema_is_the_generated_one() -> None:
    assert json.loads(json.dumps(output_schema())) == OUTPUT_SCHEMA, "regenerate: python -m llamadiag.render.schema"


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_sample_log_gives_json_that_the_schema_accepts_and_valid_sarif(
    knowledge: api.Knowledge, path: Path
) -> None:
    data = data_of(knowledge, path)
    jsonschema.Draft202012Validator(OUTPUT_SCHEMA).validate(data)
    assert data["schema_version"] == SCHEMA_VERSION
    for template in data["unmatched"]:  # objects like evidence, not [line, text] pairs
        assert all(set(e) == {"line", "text"} for e in template["examples"])
    log = sarif_log(data)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert len(log["runs"][0]["results"]) == len(data["findings"])


def test_sarif_results_name_rules_levels_and_log_lines(knowledge: api.Knowledge) -> None:
    data = data_of(knowledge, SAMPLES / "server-port-in-use-b5060-windows.log")
    run = sarif_log(data)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert data["findings"], "the sample has a failure"
    for finding, result in zip(data["findings"], run["results"], strict=True):
        rule = rules[result["ruleIndex"]]
        assert result["ruleId"] == rule["id"] == finding["rule_id"]
        assert rule["helpUri"] == f"docs/rules/{finding['rule_id']}.md"
        assert (ROOT / rule["helpUri"]).is_file()
        level = {"critical": "error", "error": "error", "warning": "warning", "info": "note"}[finding["severity"]]
        assert result["level"] == level
        where = result["locations"][0]["physicalLocation"]
        assert where["artifactLocation"]["uri"] == "sample_logs/server-port-in-use-b5060-windows.log"
        assert where["region"]["startLine"] == finding["evidence"][0]["line"]
        assert where["region"]["snippet"]["text"] == finding["evidence"][0]["text"]


def test_an_unmatched_log_gives_examples_as_objects(knowledge: api.Knowledge) -> None:
    # (not backends-windows-cuda-zip-without-cudart.log: its one "unexplained" line was a healthy
    # sampler line taken for an error, no longer listed)
    data = data_of(knowledge, SAMPLES / "context-kv-retry-recovers-nearmiss-compose.log")
    examples = [e for t in data["unmatched"] for e in t["examples"]]
    assert examples and all(isinstance(e["line"], int) and isinstance(e["text"], str) for e in examples)


def test_github_commands_escape_what_would_end_or_forge_a_command() -> None:
    assert escape_data("100% done\r\n::warning::forged") == "100%25 done%0D%0A::warning::forged"
    assert escape_property("a, b: c%") == "a%2C b%3A c%25"
    finding = {
        "severity": "critical",
        "first_line": 7,
        "last_line": 9,
        "title": "Port in use: 8080, again",
        "confidence": "likely",
        "rule_id": "some-rule",
        "summary": "bind failed\n::error::not a command",
        "version_status": "No fix needed.",
        "remediation": [{"text": "Pick another port."}],
    }
    line = annotation(finding, "logs/server,1.log")
    head, message = line.split("::", 2)[1:]
    assert (
        head
        == "error file=logs/server%2C1.log,line=7,endLine=9,title=Port in use%3A 8080%2C again [likely%2C some-rule]"
    )
    assert "\n" not in line and message.startswith("bind failed%0A::error::not a command%0A")


def test_jsonl_is_one_finding_per_line(knowledge: api.Knowledge) -> None:
    import io

    data = data_of(knowledge, SAMPLES / "seed-b11503-default.log")
    out = io.StringIO()
    write_findings_jsonl(data, out)
    lines = out.getvalue().splitlines()
    assert [json.loads(line) for line in lines] == data["findings"]


def test_facts_markdown_is_a_table_that_markdown_renders(knowledge: api.Knowledge) -> None:
    report = api.diagnose(str(SAMPLES / "seed-b11503-default.log"), knowledge=knowledge).report
    report.runs[0].fact_sources["model_path"].value = "a|b <user> *x*"  # a cell that could break out
    html = MarkdownIt("commonmark").enable("table").render(facts_markdown(report))
    assert html.count("<table>") == 1
    assert "<td>model_path</td>\n<td><code>a|b &lt;user&gt; *x*</code></td>" in html
    assert "<td>has_mmproj</td>\n<td><code>yes</code></td>" in html  # words, not True


def test_facts_json_has_the_version_wrapper_of_explain(knowledge: api.Knowledge) -> None:
    report = api.diagnose(str(SAMPLES / "seed-ticket.txt"), knowledge=knowledge).report
    data = facts_data(report, Redactor())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["version"] == report.version and data["rules_version"] == report.rules_version
    assert data["runs"][0]["facts"]["build"] == 11503 and "redaction" in data
