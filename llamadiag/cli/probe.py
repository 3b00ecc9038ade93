"""probe: ask a running llama-server what it is (build, model, context, slots, modalities ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from llamadiag.cli.options import AllowRemoteOpt, ApiKeyOpt, NoRedactOpt, ViewFormat, fail, redactor_for

if TYPE_CHECKING:
    from llamadiag.source.probe import ProbeResult


def probe_server(url: str, api_key: str | None, allow_remote: bool) -> ProbeResult:
    """Probe `url` for a command: a failure is one line on stderr and exit 2."""
    from llamadiag import api
    from llamadiag.source.probe import ProbeError

    try:
        return api.probe_server(url, api_key=api_key or None, allow_remote=allow_remote)
    except ProbeError as exc:
        raise fail(str(exc)) from exc


def probe_cmd(
    url: Annotated[str, typer.Argument(help="The server, e.g. http://127.0.0.1:8080 (http:// and :8080 assumed).")],
    fmt: Annotated[ViewFormat, typer.Option("--format", "-f", help="Output format (rich or json).")] = ViewFormat.rich,
    api_key: ApiKeyOpt = None,
    allow_remote: AllowRemoteOpt = False,
    no_redact: NoRedactOpt = False,
) -> None:
    """Ask a running llama-server what it is: GET /health, /props, /slots, /metrics, /v1/models.

    Never sends a prompt; bounded time-outs; loopback only unless --allow-remote.
    """
    result = probe_server(url, api_key, allow_remote)
    if fmt is ViewFormat.json:
        from llamadiag.render.probe import probe_json

        redactor = redactor_for(no_redact)
        if api_key:
            redactor.add_secret(api_key)
        typer.echo(probe_json(result, redactor))
    else:
        from llamadiag.render.probe import print_probe

        print_probe(Console(highlight=False), result)
    raise typer.Exit(0)
