"""ASGI middleware around the desk: who may ask (Host, Origin, an optional token), body size
cap and read time-out, security headers, an access log of paths only, and no traceback ever
reaching a user or the log with pasted text in it."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
TooLargeBody = Callable[[Scope, int | None], tuple[str, bytes]]  # (content type, body) for a 413

DRAIN_LIMIT = 256 << 20  # past this a declared over-large upload is cut off rather than read to its end
BODY_TIMEOUT = 30.0  # seconds for a whole request body: a byte a second cannot hold a connection
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
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


class _TooSlow(Exception):
    pass


class Guard:
    """Wraps the app: refuses requests from elsewhere (Host, Origin, token), reads at most
    `max_bytes` of a body into memory within `body_timeout` seconds before the app sees it.

    `hosts`: the Host header values the desk answers to (its bound address; None: any, for a
    desk bound to a non-loopback address, which needs `token`). `token`: when set, every
    request but /healthz must carry it (`Authorization: Bearer TOKEN`, or HTTP Basic with the
    token as password, which a browser asks for)."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        too_large: TooLargeBody,
        hosts: frozenset[str] | None = None,
        token: str | None = None,
        body_timeout: float = BODY_TIMEOUT,
    ) -> None:
        self.app, self.max_bytes, self.too_large = app, max_bytes, too_large
        self.hosts = frozenset(h.lower() for h in hosts) if hosts is not None else None
        self.token = token or None
        self.body_timeout = body_timeout

    def refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """(status, message, extra headers) when this request may not be answered, else None."""
        headers = {name.lower(): value for name, value in scope.get("headers", [])}
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if self.hosts is not None and host not in self.hosts:
            # DNS rebinding: a page of another site whose name now points at this address
            return 421, "this desk answers only requests for its own address (Host header refused)", []
        origin = headers.get(b"origin")
        site = headers.get(b"sec-fetch-site", b"")
        # Under the desk's own `Referrer-Policy: no-referrer` a browser sends `Origin: null` even for
        # its own form; `Sec-Fetch-Site: same-origin`, which no page can set, vouches for it then.
        own_null = origin == b"null" and site == b"same-origin"
        foreign = (
            origin is not None
            and not own_null
            and origin.decode("latin-1").lower() not in (f"http://{host}", f"https://{host}")
        )
        if scope["method"] not in SAFE_METHODS and (site == b"cross-site" or foreign):
            return 403, "a request from another site's page is refused (Origin)", []
        if self.token is not None and scope["path"] != "/healthz" and not self._authorised(headers):
            challenge = [(b"www-authenticate", b'Basic realm="llamadiag desk", charset="UTF-8"')]
            return 401, "this desk needs its token: Authorization: Bearer TOKEN (or the token as password)", challenge
        return None

    def _authorised(self, headers: dict[bytes, bytes]) -> bool:
        assert self.token is not None
        scheme, _, value = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        given = value.strip()
        if scheme.lower() == "basic":
            try:
                given = base64.b64decode(given, validate=True).decode("utf-8").partition(":")[2]
            except (binascii.Error, UnicodeDecodeError):
                return False
        elif scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(given.encode(), self.token.encode())

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

        refused = self.refusal(scope)
        if refused is not None:
            code, message, extra = refused
            await _respond(send_wrapped, code, "application/json", json.dumps({"error": message}).encode(), extra)
            access_log.info(
                '%s "%s %s" %s', _client(scope), _printable(scope["method"]), _printable(scope["path"]), code
            )
            return
        try:
            replay = await self._buffer(scope, receive)
        except _TooLarge as exc:
            size = exc.args[0]
            ctype, body = self.too_large(scope, size)
            await _respond(send_wrapped, 413, ctype, body)
        except _TooSlow:
            message = f"the request body did not arrive within {self.body_timeout:.0f} s"
            await _respond(send_wrapped, 408, "application/json", json.dumps({"error": message}).encode())
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
        """The whole body, read within the cap and the time-out, handed to the app in one message.

        A declared Content-Length over the cap is read to its end (up to DRAIN_LIMIT), so that the
        client, still sending, sees the 413; a chunked body is read only up to the cap."""
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > DRAIN_LIMIT:
            raise _TooLarge(int(declared))
        if scope["method"] in SAFE_METHODS and declared is None:
            return receive
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + self.body_timeout
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.001))
            except TimeoutError:
                raise _TooSlow() from None
            if message["type"] == "http.disconnect":
                return receive
            size += len(message.get("body", b""))
            if size <= self.max_bytes:
                chunks.append(message.get("body", b""))
            elif chunks:
                chunks = []  # over the cap: keep nothing
            if size > self.max_bytes and declared is None:
                raise _TooLarge(None)  # chunked: reading stops at the cap
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


async def _respond(
    send: Send, status: int, ctype: str, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", f"{ctype}; charset=utf-8".encode()), (b"content-length", str(len(body)).encode())]
    headers += extra or []
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
