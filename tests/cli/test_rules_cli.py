"""`llamadiag rules ...` as a rule author meets it (#13 points 8 and 14): formats a pipe and jq
read, load errors counted, docs of a user folder, overrides and stale installs told on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.paths import ROOT, SAMPLES

RULE = "spec-vision-draft-position-gap"
SHIPPED = ROOT / "rules" / "speculative" / f"{RULE}.yaml"


def run(*args: str, tmp_path: Path, cwd: Path | None = None, env: dict[str, str] | None = None):
    full = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "COLUMNS": "80",
        **(env or {}),
    }
    full.pop("LLAMADIAG_RULES_PATH", None) if "LLAMADIAG_RULES_PATH" not in (env or {}) else None
    return subprocess.run(
        [sys.executable, "-m", "llamadiag", *args], capture_output=True, text=True, timeout=300, env=full, cwd=cwd
    )


def _override(tmp_path: Path) -> Path:
    """A user folder whose copy of a shipped rule has another title."""
    folder = tmp_path / "mine" / "speculative"
    folder.mkdir(parents=True)
    text = SHIPPED.read_text().replace("title: ", "title: MINE ", 1)
    (folder / SHIPPED.name).write_text(text)
    return tmp_path / "mine"


def test_list_formats_for_pipes_and_jq(tmp_path: Path) -> None:
    plain = run("rules", "list", tmp_path=tmp_path)  # a pipe: plain, tab-separated, nothing cut
    assert plain.returncode == 0, plain.stderr
    rows = [line.split("\t") for line in plain.stdout.splitlines()]
    assert rows[0] == ["id", "category", "severity", "fixed in", "title", "source file"]
    row = next(r for r in rows if r[0] == RULE)
    assert row[5] == f"rules/speculative/{RULE}.yaml" and len(row[4]) > 60  # the whole title
    listed = json.loads(run("rules", "list", "--format", "json", tmp_path=tmp_path).stdout)
    entry = next(r for r in listed if r["id"] == RULE)
    assert entry["source_file"] == f"rules/speculative/{RULE}.yaml" and entry["overrides"] is None
    table = run("rules", "list", "-f", "table", tmp_path=tmp_path).stdout
    assert ("source file" in table and "╇" in table) or "━" in table


def test_show_as_json_and_as_yaml_that_loads_back(tmp_path: Path) -> None:
    from llamadiag.knowledge.loader import load_knowledge
    from llamadiag.knowledge.rulemodel import Rule

    shown = json.loads(run("rules", "show", RULE, "--format", "json", tmp_path=tmp_path).stdout)
    assert shown["source_file"] == f"rules/speculative/{RULE}.yaml" and shown["id"] == RULE
    text = run("rules", "show", RULE, tmp_path=tmp_path).stdout
    assert text.startswith(f"# rules/speculative/{RULE}.yaml\n")
    again = Rule.model_validate(yaml.safe_load(text))
    assert again == load_knowledge().rule(RULE).rule  # type: ignore[union-attr]


def test_lint_counts_a_file_that_does_not_load(tmp_path: Path) -> None:
    broken = tmp_path / "broken" / "server"
    broken.mkdir(parents=True)
    (broken / "half-written.yaml").write_text("id: half-written\ntitle: [unclosed\n")
    linted = run("rules", "lint", "--rules", str(tmp_path / "broken"), tmp_path=tmp_path)
    assert "half-written.yaml" in linted.stderr
    summary = linted.stdout.strip().splitlines()[-1]
    assert "0 errors" not in summary and "1 errors (1 of them files that do not load)" in summary
    assert linted.returncode == 2


def test_new_then_lint_lists_the_todos(tmp_path: Path) -> None:
    made = run("rules", "new", "my-rule", "--category", "server", "--dir", str(tmp_path / "r"), tmp_path=tmp_path)
    assert made.returncode == 0 and (tmp_path / "r" / "server" / "my-rule.yaml").is_file()
    linted = run("rules", "lint", "--rules", str(tmp_path / "r"), tmp_path=tmp_path)
    assert linted.returncode == 1
    assert "my-rule.yaml:4: error: [unfinished] TODO left in title" in linted.stdout
    again = run("rules", "new", "my-rule", "--category", "server", "--dir", str(tmp_path / "r"), tmp_path=tmp_path)
    assert again.returncode == 2 and "exists already" in again.stderr


def test_docs_of_a_user_folder(tmp_path: Path) -> None:
    out = tmp_path / "pages"
    made = run("rules", "docs", "--rules", str(_override(tmp_path)), "-o", str(out), tmp_path=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "MINE" in (out / f"{RULE}.md").read_text()


def test_a_user_rule_that_overrides_a_shipped_one_is_told(tmp_path: Path) -> None:
    mine = _override(tmp_path)
    env = {"LLAMADIAG_RULES_PATH": str(mine)}
    explained = run("explain", str(SAMPLES / "seed-ticket.txt"), "-f", "json", tmp_path=tmp_path, env=env)
    note = f"user rule {mine / 'speculative' / SHIPPED.name} overrides the shipped rule '{RULE}'"
    assert note in explained.stderr
    finding = json.loads(explained.stdout)["findings"][0]
    assert finding["rule_id"] == RULE and finding["title"].startswith("MINE")
    assert finding["source_file"] == str(mine / "speculative" / SHIPPED.name)
    listed = run("rules", "list", "-f", "json", tmp_path=tmp_path, env=env)
    entry = next(r for r in json.loads(listed.stdout) if r["id"] == RULE)
    assert entry["overrides"] and entry["source_file"].endswith(f"mine/speculative/{SHIPPED.name}")
    by_option = run("rules", "list", "--rules", str(mine), tmp_path=tmp_path)
    assert "overrides the shipped rule" in by_option.stderr and "(overrides the shipped rule)" in by_option.stdout


def test_findings_name_their_rule_file(tmp_path: Path) -> None:
    explained = run("explain", str(SAMPLES / "seed-ticket.txt"), "-f", "json", tmp_path=tmp_path)
    assert json.loads(explained.stdout)["findings"][0]["source_file"] == f"rules/speculative/{RULE}.yaml"


def test_schema_names_itself_and_the_published_copy_is_current(tmp_path: Path) -> None:
    schema = json.loads(run("rules", "schema", tmp_path=tmp_path).stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema" and schema["$id"]
    assert json.loads((ROOT / "docs" / "rule-schema.json").read_text()) == schema


def test_a_checkout_whose_rules_are_not_the_installed_ones_is_told_once(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "rules", checkout / "rules", ignore=shutil.ignore_patterns("__pycache__"))
    (checkout / "pyproject.toml").write_text('[project]\nname = "llamadiag"\n')
    same = run("rules", "list", "-f", "json", tmp_path=tmp_path, cwd=checkout)
    assert "differ from the installed ones" not in same.stderr  # equal rules: nothing to say
    edited = checkout / "rules" / "speculative" / SHIPPED.name
    edited.write_text(edited.read_text().replace("title: ", "title: EDITED ", 1))
    first = run("rules", "list", "-f", "json", tmp_path=tmp_path, cwd=checkout)
    assert "differ from the installed ones" in first.stderr and "pip install -e ." in first.stderr
    assert "differ from the installed ones" not in run("rules", "list", tmp_path=tmp_path, cwd=checkout).stderr
    edited.write_text(edited.read_text().replace("EDITED", "EDITED AGAIN", 1))
    assert "differ from the installed ones" in run("rules", "list", tmp_path=tmp_path, cwd=checkout).stderr


def test_plain_list_prints_no_control_characters_of_a_user_rule(tmp_path: Path) -> None:
    folder = tmp_path / "hostile" / "speculative"
    folder.mkdir(parents=True)
    text = SHIPPED.read_text().replace("title: ", 'title: "\\e[2J\\tRED" # ', 1)
    (folder / SHIPPED.name).write_text(text)
    listed = run("rules", "list", "--rules", str(tmp_path / "hostile"), tmp_path=tmp_path)
    row = next(line for line in listed.stdout.splitlines() if line.startswith(RULE))
    assert "\x1b" not in listed.stdout and row.split("\t")[4] == "?[2J?RED"
