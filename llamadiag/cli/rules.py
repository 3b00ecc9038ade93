"""`llamadiag rules ...`: list, show, test, lint and schema for the knowledge base."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from llamadiag import api
from llamadiag.cli.options import RulesOpt
from llamadiag.knowledge.loader import Knowledge
from llamadiag.knowledge.rulemodel import Rule
from llamadiag.render.terminal import safe
from llamadiag.ruletools.lint import lint as run_lint
from llamadiag.ruletools.selftest import run_examples


def _load(rules: list[Path] | None) -> Knowledge:
    """The rules as written, those whose examples fail included: these commands are how one finds them."""
    k = api.load_knowledge(rules or [], checked=False)
    for e in k.errors:
        typer.echo(f"rule error: {e}", err=True)
    return k


def list_rules(rules: RulesOpt = None) -> None:
    """All rules: id, category, severity, fixed in."""
    k = _load(rules)
    table = Table()
    for col in ("id", "category", "severity", "fixed in", "title"):
        table.add_column(col)
    for loaded in k.rules:
        r = loaded.rule
        table.add_row(
            r.id, r.category, r.severity.value, f"b{r.versions.fixed_in}" if r.versions.fixed_in else "-", r.title
        )
    Console(highlight=False).print(table)
    raise typer.Exit(2 if k.errors else 0)


def show(rule_id: str, rules: RulesOpt = None) -> None:
    """One rule as YAML-ish JSON, with its file."""
    k = _load(rules)
    loaded = k.rule(rule_id)
    if loaded is None:
        typer.echo(f"llamadiag: no rule {rule_id!r}", err=True)
        raise typer.Exit(2)
    typer.echo(f"# {loaded.path}")
    typer.echo(json.dumps(loaded.rule.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2))


def test(
    ids: Annotated[list[str] | None, typer.Argument(help="Only these rule ids.")] = None,
    bless: Annotated[
        bool, typer.Option("--bless", help="Rewrite corpus expectations to what the engine finds.")
    ] = False,
    rules: RulesOpt = None,
) -> None:
    """Run every rule's inline examples and the annotated corpus (sample_logs/) through the engine."""
    from llamadiag.ruletools.corpus import bless as bless_cases
    from llamadiag.ruletools.corpus import find_root, load_cases, run_cases, unlisted_logs

    k = _load(rules)
    failed = total = 0
    console = Console(highlight=False)
    for loaded in k.rules:
        if ids and loaded.rule.id not in ids:
            continue
        for result in run_examples(k, loaded):
            total += 1
            if not result.ok:
                failed += 1
                console.print(safe(f"FAIL {result.rule_id}: {result.name}: {result.detail}"))
    root = find_root()
    if root is None:
        console.print("corpus: not found (sample_logs/ and tests/expectations/ live in a checkout)")
    else:
        cases = run_cases(k, root, load_cases(root))
        if ids:
            cases = [
                c
                for c in cases
                if {r for r, _ in c.got} & set(ids) or {f["rule"] for f in c.entry.get("findings") or []} & set(ids)
            ]
        for case in cases:
            total += 1
            if case.problems:
                failed += 1
                console.print(safe(f"FAIL corpus {case.entry['log']}: {'; '.join(case.problems)}"))
        for name in unlisted_logs(root, cases if not ids else load_cases(root)):
            failed += 1
            console.print(safe(f"FAIL corpus {name}: no expectation entry"))
        if bless and failed:
            changed = bless_cases(cases)
            console.print(f"blessed: rewrote {changed} expectation(s); review the diff before committing")
            raise typer.Exit(0)
    console.print(f"{total - failed} passed, {failed} failed")
    raise typer.Exit(1 if failed else (2 if k.errors else 0))


def lint(rules: RulesOpt = None) -> None:
    """Check rules: patterns, captures, references, examples, verification."""
    k = _load(rules)
    issues = run_lint(k)
    for issue in issues:
        typer.echo(str(issue))
    errors = sum(1 for i in issues if i.severity == "error")
    typer.echo(f"{len(k.rules)} rules, {errors} errors, {len(issues) - errors} warnings")
    raise typer.Exit(1 if errors else (2 if k.errors else 0))


def schema(output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None) -> None:
    """The JSON Schema of rule files, generated from the pydantic models."""
    text = json.dumps(Rule.model_json_schema(by_alias=True), indent=2) + "\n"
    if output:
        output.write_text(text)
    else:
        typer.echo(text, nl=False)


def docs(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for the pages.")] = Path("docs/rules"),
    check: Annotated[bool, typer.Option("--check", help="Only report stale pages (exit 1).")] = False,
) -> None:
    """Generate docs/rules/<id>.md and an index table from the rule files."""
    from llamadiag.ruletools import docsgen

    k = _load(None)
    if check:
        pages = docsgen.generate(k)
        stale = [n for n, c in pages.items() if not (output / n).is_file() or (output / n).read_text() != c]
        for name in stale:
            typer.echo(f"stale: {output / name}")
        raise typer.Exit(1 if stale else 0)
    changed = docsgen.write(k, output)
    typer.echo(f"{len(changed)} page(s) written to {output}")
