"""`llamadiag rules export`: the rules' signatures for standard tools.

`--grep` writes one POSIX extended regex per line, for `LC_ALL=C grep -E -f FILE`:
every entry of every signature of every loaded rule, translated (lookarounds dropped,
so each matches a superset of its rule's lines). The benchmark compares `explain` with
grep over exactly this list; people also use it to pre-filter huge logs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from llamadiag.cli_rules import RulesOpt, rules_app
from llamadiag.knowledge import Knowledge
from llamadiag.patterntree import Untranslatable, to_ere


def signature_eres(k: Knowledge) -> tuple[list[str], list[str]]:
    """(EREs in rule order without repeats, problems for entries that have none)."""
    out: dict[str, None] = {}
    problems = []
    for loaded in k.rules:
        for sig in loaded.rule.signatures:
            for entry in sig.entries:
                try:
                    out[to_ere(entry.regex)] = None
                except Untranslatable as exc:
                    problems.append(f"{loaded.rule.id}: {entry.regex!r}: {exc}")
    return list(out), problems


@rules_app.command("export")
def export(
    grep: Annotated[bool, typer.Option("--grep", help="POSIX EREs for `LC_ALL=C grep -E -f`, one per line.")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    rules: RulesOpt = None,
) -> None:
    """Export the signatures of the rules for other tools (--grep)."""
    from llamadiag.session import checked_knowledge

    if not grep:
        typer.echo("llamadiag: say what to export: --grep", err=True)
        raise typer.Exit(2)
    k = checked_knowledge(rules or [])
    eres, problems = signature_eres(k)
    for problem in problems:
        typer.echo(f"llamadiag: not exported: {problem}", err=True)
    text = "".join(f"{e}\n" for e in eres)
    if output:
        output.write_text(text)
    else:
        typer.echo(text, nl=False)
    raise typer.Exit(2 if k.errors else 0)
