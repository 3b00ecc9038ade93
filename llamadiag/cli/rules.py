"""`llamadiag rules ...`: list, show, new, test, lint, schema and docs for the knowledge base.

Imports of the engine and of rich are inside the commands: `llamadiag rules --help` stays light.
"""

from __future__ import annotations

import json
import re
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from llamadiag.knowledge.loader import Knowledge, LoadedRule

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # tabs, newlines, escape sequences: never printed raw

# as in cli/options.py, which imports the engine: these commands import it only when they run
RulesOpt = Annotated[
    list[Path] | None, typer.Option("--rules", help="Extra rule folder (repeatable); overrides shipped rules by id.")
]


def _load(rules: list[Path] | None) -> Knowledge:
    """The rules as written, those whose examples fail included: these commands are how one finds
    them. Load errors and the overrides of shipped rules by --rules folders are told on stderr (the
    folders of $LLAMADIAG_RULES_PATH and ~/.config are told by every command: cli/__init__.py)."""
    from llamadiag import api

    k = api.load_knowledge(rules or [], checked=False)
    for e in k.errors:
        typer.echo(f"rule error: {e}", err=True)
    extra = [r.resolve() for r in rules or []]
    for loaded in k.rules:
        note = loaded.overrides_note()
        if note and any(loaded.path.resolve().is_relative_to(folder) for folder in extra):
            typer.echo(f"llamadiag: note: {note}", err=True)
    return k


class ListFormat(str, Enum):
    """The output formats of `rules list`."""

    table = "table"
    json = "json"
    plain = "plain"


def _row(loaded: LoadedRule) -> dict[str, Any]:
    r = loaded.rule
    return {
        "id": r.id,
        "category": r.category,
        "severity": r.severity.value,
        "fixed_in": r.versions.fixed_in,
        "title": r.title,
        "source_file": loaded.source_file(),
        "overrides": str(loaded.overrides) if loaded.overrides else None,
    }


def list_rules(
    rules: RulesOpt = None,
    fmt: Annotated[
        ListFormat | None,
        typer.Option("--format", "-f", help="table on a terminal, plain (tab-separated, never cut) in a pipe; json."),
    ] = None,
) -> None:
    """All rules: id, category, severity, fixed in, title and source file."""
    k = _load(rules)
    rows = [_row(loaded) for loaded in k.rules]
    fmt = fmt or (ListFormat.table if sys.stdout.isatty() else ListFormat.plain)
    if fmt is ListFormat.json:
        typer.echo(json.dumps(rows, indent=2))
    else:
        cols = ("id", "category", "severity", "fixed in", "title", "source file")
        cells = [
            [
                row["id"],
                row["category"],
                row["severity"],
                f"b{row['fixed_in']}" if row["fixed_in"] else "-",
                row["title"],
                row["source_file"] + (" (overrides the shipped rule)" if row["overrides"] else ""),
            ]
            for row in rows
        ]
        if fmt is ListFormat.plain:
            for line in [list(cols), *cells]:
                typer.echo("\t".join(CONTROL.sub("?", cell) for cell in line))  # user rule text is untrusted
        else:
            from rich.console import Console
            from rich.table import Table

            from llamadiag.render.terminal import safe

            table = Table()
            for col in cols:
                table.add_column(col, overflow="fold")
            for line in cells:
                table.add_row(*(safe(c) for c in line))
            Console(highlight=False).print(table)
    raise typer.Exit(2 if k.errors else 0)


class ShowFormat(str, Enum):
    """The output formats of `rules show`."""

    yaml = "yaml"
    json = "json"


def show(
    rule_id: str,
    rules: RulesOpt = None,
    fmt: Annotated[ShowFormat, typer.Option("--format", "-f", help="yaml (with its file as a comment) or json.")] = (
        ShowFormat.yaml
    ),
) -> None:
    """One rule as YAML (or JSON), with its file."""
    from llamadiag.knowledge.rulemodel import DERIVED

    k = _load(rules)
    loaded = k.rule(rule_id)
    if loaded is None:
        typer.echo(f"llamadiag: no rule {rule_id!r}", err=True)
        raise typer.Exit(2)
    data = loaded.rule.model_dump(mode="json", by_alias=True, exclude_none=True)
    # the partial signatures the model derives are not in the file
    data["signatures"] = [s for s in data["signatures"] if DERIVED not in s["name"]]
    if fmt is ShowFormat.json:
        typer.echo(json.dumps({"source_file": loaded.source_file(), **data}, indent=2))
    else:
        import yaml

        typer.echo(f"# {loaded.source_file()}")
        typer.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), nl=False)


def new(
    rule_id: Annotated[str, typer.Argument(help="The new rule's id (lowercase words joined by hyphens).")],
    category: Annotated[str, typer.Option("--category", "-c", help="Its category: the folder it goes in.")],
    folder: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Rule folder to write into (default: rules/ of the llamadiag checkout you are in, "
            "else rules/ in the user config folder).",
        ),
    ] = None,
) -> None:
    """Write a skeleton rule file to fill in."""
    from llamadiag.ruletools.skeleton import SkeletonError, default_folder, write_skeleton

    try:
        path = write_skeleton(rule_id, category, folder or default_folder(Path.cwd()))
    except SkeletonError as exc:
        typer.echo(f"llamadiag: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"wrote {path}")
    typer.echo("Replace every TODO (rules lint lists those left), then: llamadiag rules lint; llamadiag rules test")


def test(
    ids: Annotated[list[str] | None, typer.Argument(help="Only these rule ids.")] = None,
    bless: Annotated[
        bool, typer.Option("--bless", help="Rewrite corpus expectations to what the engine finds.")
    ] = False,
    rules: RulesOpt = None,
) -> None:
    """Run every rule's inline examples and the annotated corpus (sample_logs/) through the engine."""
    from rich.console import Console

    from llamadiag.render.terminal import safe
    from llamadiag.ruletools.corpus import bless as bless_cases
    from llamadiag.ruletools.corpus import find_root, load_cases, run_cases, unlisted_logs
    from llamadiag.ruletools.selftest import run_examples

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
    from llamadiag.ruletools.lint import lint as run_lint

    k = _load(rules)
    issues = run_lint(k)
    for issue in issues:
        typer.echo(str(issue))
    found = sum(1 for i in issues if i.severity == "error")
    # a file that does not load is an error of the rule set too (printed above as "rule error")
    unloaded = f" ({len(k.errors)} of them files that do not load)" if k.errors else ""
    typer.echo(f"{len(k.rules)} rules, {found + len(k.errors)} errors{unloaded}, {len(issues) - found} warnings")
    raise typer.Exit(1 if found else (2 if k.errors else 0))


def schema(output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None) -> None:
    """The JSON Schema of rule files, generated from the pydantic models."""
    from llamadiag.ruletools.docsgen import rule_schema

    text = json.dumps(rule_schema(), indent=2) + "\n"
    if output:
        output.write_text(text)
    else:
        typer.echo(text, nl=False)


def docs(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for the pages.")] = Path("docs/rules"),
    check: Annotated[bool, typer.Option("--check", help="Only report stale pages (exit 1).")] = False,
    rules: RulesOpt = None,
) -> None:
    """Generate docs/rules/<id>.md and an index table from the rule files."""
    from llamadiag.ruletools import docsgen

    k = _load(rules)
    if check:
        pages = docsgen.generate(k, user=bool(rules))
        stale = [n for n, c in pages.items() if not (output / n).is_file() or (output / n).read_text() != c]
        for name in stale:
            typer.echo(f"stale: {output / name}")
        raise typer.Exit(1 if stale else 0)
    changed = docsgen.write(k, output, user=bool(rules))  # --rules: the pages of those rules too
    typer.echo(f"{len(changed)} page(s) written to {output}")
