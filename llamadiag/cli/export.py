"""`llamadiag rules export`: the rules' signatures for standard tools.

`--format grep` (or `--grep`) writes one POSIX extended regex per line, for
`LC_ALL=C grep -E -f FILE`: every entry of every signature of every loaded rule, translated
(lookarounds dropped, so each matches a superset of its rule's lines). The benchmark compares
`explain` with grep over exactly this list; people also use it to pre-filter huge logs.

`--format sigma` writes Sigma rules (validated with pySigma), `--format loki` a Loki ruler alert
group converted from them by pySigma-backend-loki (both need `llamadiag[fleet]`); rules that
cannot be exported are listed on stderr with the reason (docs/fleet.md).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from llamadiag.cli.options import RulesOpt, err, fail, load
from llamadiag.render.terminal import safe
from llamadiag.ruletools.export import signature_eres


class ExportFormat(str, Enum):
    """What `rules export` writes."""

    grep = "grep"
    sigma = "sigma"
    loki = "loki"


def export(
    grep: Annotated[bool, typer.Option("--grep", help="Same as --format grep.")] = False,
    fmt: Annotated[
        ExportFormat | None,
        typer.Option("--format", "-f", help="grep: POSIX EREs; sigma: Sigma rules; loki: a Loki ruler group."),
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    docs_url: Annotated[
        str, typer.Option("--docs-url", help="Where docs/rules/ is served: rules and alerts link their page there.")
    ] = "docs/rules",
    loki_label: Annotated[
        list[str] | None,
        typer.Option("--loki-label", help='KEY=VALUE of the Loki stream selector (repeatable; default {job=~".+"}).'),
    ] = None,
    rules: RulesOpt = None,
) -> None:
    """Export the signatures of the rules for other tools (grep, Sigma, Loki)."""
    chosen = ExportFormat.grep if grep else fmt
    if chosen is None:
        err.print("llamadiag: say what to export: --format grep|sigma|loki")
        raise typer.Exit(2)
    k = load(rules)
    if chosen is ExportFormat.grep:
        eres, problems = signature_eres(k)
        text = "".join(f"{e}\n" for e in eres)
    else:
        text, problems = _sigma_or_loki(k, chosen, docs_url, loki_label or [])
    for problem in problems:
        err.print(safe(f"llamadiag: not exported: {problem}"))
    if output:
        output.write_text(text)
    else:
        typer.echo(text, nl=False)
    raise typer.Exit(2 if k.errors else 0)


def _sigma_or_loki(k: object, fmt: ExportFormat, docs_url: str, labels: list[str]) -> tuple[str, list[str]]:
    try:
        import sigma  # noqa: F401
    except ImportError as exc:
        raise fail("Sigma and Loki export need pySigma: pip install 'llamadiag[fleet]'") from exc
    from llamadiag.ruletools.loki import loki_ruler
    from llamadiag.ruletools.sigma import sigma_export

    selector = {}
    for label in labels:
        key, sep, value = label.partition("=")
        if not sep or not key:
            raise fail(f"--loki-label wants KEY=VALUE, not {label!r}")
        selector[key] = value
    export = sigma_export(k, docs_url)  # type: ignore[arg-type]
    problems = [f"{rule_id}: {why}" for rule_id, why in export.skipped]
    text = export.yaml() if fmt is ExportFormat.sigma else loki_ruler(export, docs_url, selector)
    return text, problems
