"""`llamadiag desk`: serve the support desk (page + JSON API) on loopback.

The web stack is an optional extra; without it the command says how to install it.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys
from typing import Annotated

import typer

from llamadiag.cli.options import RulesOpt, err, fail, load, report_rule_errors
from llamadiag.render.terminal import safe

DEFAULT_MAX_MB = 5.0


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    """Bind here, so a busy port or a bad address is a one-line error, not a server traceback."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise fail(f"cannot use host {host!r}: {exc.strerror}") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror}; choose another --port") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def desk(
    host: Annotated[str, typer.Option("--host", help="Address to listen on; loopback unless you mean to share it.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port; 0 picks a free one.", min=0, max=65535)] = 8765,
    max_mb: Annotated[
        float, typer.Option("--max-mb", help="Largest request accepted, in MB (1 MB = 10^6 bytes).", min=0.01)
    ] = DEFAULT_MAX_MB,
    rules: RulesOpt = None,
    workers: Annotated[
        int, typer.Option("--workers", help="Diagnoses run at once (0: one per core).", min=0, max=32)
    ] = 0,
    queue: Annotated[
        int, typer.Option("--queue", help="Requests that wait for a worker; more are answered 503.", min=0)
    ] = 16,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="LLAMADIAG_DESK_TOKEN",
            help="Require this token (Authorization: Bearer TOKEN, or as the password a browser asks for); "
            "needed when --host is not loopback.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the support desk: paste a log or look up an error in a browser, or use its JSON API."""
    try:
        from llamadiag.desk.app import create_app
        from llamadiag.desk.serve import serve
        from llamadiag.desk.service import Desk
        from llamadiag.desk.work import WorkQueue
    except ImportError as exc:
        raise fail(f"the desk needs its extra ({exc.name} is missing): pip install 'llamadiag[desk]'") from None
    loopback = _is_loopback(host)
    if not loopback and not token:
        raise fail(
            f"--host {host} is not loopback: anyone who can reach it could use the desk; "
            "set --token (or LLAMADIAG_DESK_TOKEN)"
        )
    k = load(rules)
    report_rule_errors(k)
    sock = _bind(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    # a loopback desk answers only for its own address: a page whose name was rebound to
    # 127.0.0.1 sends its own name as Host; a non-loopback desk has the token instead
    hosts = _loopback_hosts(shown, bound_port) if loopback else None
    work = WorkQueue(workers or None, queue)
    app = create_app(Desk(k, int(max_mb * 1e6)), hosts=hosts, token=token, work=work)
    if not loopback:
        err.print(safe(f"llamadiag desk: listening on {host}, not loopback: requests need the token"))
    # Our own access log (method, path, status): uvicorn's would print query strings, i.e. pasted text.
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    typer.echo(f"llamadiag desk: serving on http://{shown}:{bound_port}/ (Ctrl+C to stop)", err=True)
    try:
        serve(app, sock)
    finally:
        sock.close()


def _loopback_hosts(shown: str, port: int) -> frozenset[str]:
    """The Host header values a loopback desk answers to."""
    names = {shown, "localhost", "127.0.0.1", "[::1]"}
    return frozenset({f"{n}:{port}" for n in names} | (names if port == 80 else set()))
