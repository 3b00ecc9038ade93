"""ASGI middleware around the desk: body size cap, security headers, an access log of
paths only, and no traceback ever reaching a user or the log with pasted text in it."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
TooLargeBody = Callable[[Scope, int | None], tuple[str, bytes]]  # (content type, body) for a 413

DRAIN_LIMIT = 256 << 20  # past this an over-large upload is cut off rather than read to its end
access_log = logging.getLogger("llamadiag.desk.access")

# No inline script or style, nothing from elsewhere, forms post only here, no framing.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),  # results hold pasted text: keep them out of the browser's disk cache
]


class _TooLarge(Exception):
    pass


class Guard:
    """Wraps the app: reads at most `max_bytes` of a body into memory before the app sees it."""

    def __init__(self, app: ASGIApp, max_bytes: int, too_large: TooLargeBody) -> None:
        self.app, self.max_bytes, self.too_large = app, max_bytes, too_large

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a request to the app with its body capped, add the security headers and log the access."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = {"code": 0}

        async def send_wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                names = {name for name, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in HEADERS if h[0] not in names]
            await send(message)

        try:
            replay = await self._buffer(scope, receive)
        except _TooLarge as exc:
            size = exc.args[0]
            ctype, body = self.too_large(scope, size)
            await _respond(send_wrapped, 413, ctype, body)
        else:
            try:
                await self.app(scope, replay, send_wrapped)
            except Exception as exc:  # the message may quote pasted text: log the type only
                access_log.error(
                    "error %s in %s %s", type(exc).__name__, _printable(scope["method"]), _printable(scope["path"])
                )
                if not status["code"]:
                    body = json.dumps({"error": f"internal error ({type(exc).__name__}); nothing was kept"}).encode()
                    await _respond(send_wrapped, 500, "application/json", body)
        access_log.info(
            '%s "%s %s" %s', _client(scope), _printable(scope["method"]), _printable(scope["path"]), status["code"]
        )

    async def _buffer(self, scope: Scope, receive: Receive) -> Receive:
        """The whole body, read within the cap, handed to the app in one message."""
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > DRAIN_LIMIT:
            raise _TooLarge(int(declared))
        if scope["method"] in ("GET", "HEAD", "OPTIONS") and declared is None:
            return receive
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return receive
            size += len(message.get("body", b""))
            if size <= self.max_bytes:
                chunks.append(message.get("body", b""))
            elif chunks:
                chunks = []  # over the cap: keep reading (so the client sees the answer), keep nothing
            if not message.get("more_body") or size > DRAIN_LIMIT:
                break
        if size > self.max_bytes:
            raise _TooLarge(size if size <= DRAIN_LIMIT else None)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        return replay


async def _respond(send: Send, status: int, ctype: str, body: bytes) -> None:
    headers = [(b"content-type", f"{ctype}; charset=utf-8".encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _printable(text: str) -> str:
    """Text for the log with control characters escaped (\\r, \\n, \\x1b ...): a request path
    cannot forge a log line or send escape sequences to the terminal; a backslash is doubled."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(
        ch if ch.isprintable() and ch != "\\" else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return _printable(f"{client[0]}") if client else "-"
