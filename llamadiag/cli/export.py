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

from llamadiag.cli.options import RulesOpt, load
from llamadiag.ruletools.export import signature_eres


def export(
    grep: Annotated[bool, typer.Option("--grep", help="POSIX EREs for `LC_ALL=C grep -E -f`, one per line.")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    rules: RulesOpt = None,
) -> None:
    """Export the signatures of the rules for other tools (--grep)."""
    if not grep:
        typer.echo("llamadiag: say what to export: --grep", err=True)
        raise typer.Exit(2)
    k = load(rules)
    eres, problems = signature_eres(k)
    for problem in problems:
        typer.echo(f"llamadiag: not exported: {problem}", err=True)
    text = "".join(f"{e}\n" for e in eres)
    if output:
        output.write_text(text)
    else:
        typer.echo(text, nl=False)
    raise typer.Exit(2 if k.errors else 0)
