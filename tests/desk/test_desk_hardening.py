"""The desk against hostile clients: slow bytes, other sites' pages, no token, endless chunked bodies."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from tests.paths import ROOT

pytest.importorskip("starlette", reason="the desk extra is not installed")
from starlette.testclient import TestClient

from llamadiag.desk.app import create_app
from llamadiag.desk.guard import Guard
from llamadiag.desk.service import Desk, size_message
from llamadiag.knowledge.loader import Knowledge
from tests.cli.test_cli import SEED_SNIPPET


@pytest.fixture(scope="module")
def desk(knowledge: Knowledge) -> Desk:
    return Desk(knowledge, 100_000)


def test_host_header_must_be_the_desks_own_address(desk: Desk) -> None:
    client = TestClient(create_app(desk, hosts=frozenset({"127.0.0.1:8765", "localhost:8765"})))
    assert client.get("/").status_code == 421  # Host: testserver, as a rebound name would send
    rebound = client.get("/api/lookup", params={"q": "#30204"}, headers={"host": "evil.example:8765"})
    assert rebound.status_code == 421 and "Host" in rebound.json()["error"]
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200


def test_cross_site_posts_are_refused(desk: Desk) -> None:
    client = TestClient(create_app(desk))
    body = {"log": SEED_SNIPPET}
    for headers in ({"origin": "http://evil.example"}, {"origin": "null"}, {"sec-fetch-site": "cross-site"}):
        r = client.post("/api/explain", json=body, headers=headers)
        assert r.status_code == 403 and "another site" in r.json()["error"], headers
        form = client.post("/", data=body, headers={**headers, "content-type": "text/plain"})
        assert form.status_code == 403
    assert client.post("/api/explain", json=body, headers={"origin": "http://testserver"}).status_code == 200
    assert client.post("/api/explain", json=body).status_code == 200  # curl sends no Origin
    # the desk's own form under its no-referrer policy: Origin null, vouched for by the browser
    own = {"origin": "null", "sec-fetch-site": "same-origin"}
    assert client.post("/", data=body, headers=own).status_code == 200
    sandboxed = {"origin": "null", "sec-fetch-site": "cross-site"}  # a sandboxed foreign page
    assert client.post("/", data=body, headers=sandboxed).status_code == 403


def test_a_token_is_required_when_set(desk: Desk) -> None:
    client = TestClient(create_app(desk, token="s3cret-token"))
    refused = client.get("/")
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Basic")
    assert client.get("/", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/", headers={"authorization": "Bearer s3cret-token"}).status_code == 200
    basic = base64.b64encode(b"anyone:s3cret-token").decode()
    assert client.get("/", headers={"authorization": f"Basic {basic}"}).status_code == 200
    assert client.get("/healthz").status_code == 200


def test_non_loopback_needs_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if k != "LLAMADIAG_DESK_TOKEN"} | {"PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "llamadiag", "desk", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2 and "set --token (or LLAMADIAG_DESK_TOKEN)" in out.stderr


def _call(guard: Guard, messages: list[dict[str, Any]], delay: float = 0.0, **headers: str) -> tuple[int, int, bytes]:
    """Run one request through the guard; (status, messages read, body)."""
    read = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal read
        await asyncio.sleep(delay)
        read += 1
        return messages[read - 1] if read <= len(messages) else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "method": "POST", "path": "/api/explain", "client": ("127.0.0.1", 1),
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }  # fmt: skip
    asyncio.run(guard(scope, receive, send))
    return sent[0]["status"], read, b"".join(m.get("body", b"") for m in sent[1:])


def test_a_chunked_body_is_read_only_up_to_the_limit(desk: Desk) -> None:
    guard = create_app(desk)
    chunks = [{"type": "http.request", "body": b"x" * 10_000, "more_body": True} for _ in range(1000)]
    status, read, body = _call(guard, chunks)
    assert status == 413 and read == 11  # 110 kB read of a 10 MB upload, then the answer
    assert b"more than 0.1 MB, the desk accepts up to 0.1 MB" in body


def test_a_slow_body_times_out(desk: Desk) -> None:
    guard = create_app(desk)
    guard.body_timeout = 0.5
    chunks = [{"type": "http.request", "body": b"x", "more_body": True} for _ in range(100)]
    started = time.monotonic()
    status, read, body = _call(guard, chunks, delay=0.1)
    assert status == 408 and read < 10 and time.monotonic() - started < 5
    assert b"did not arrive within" in body


def test_size_messages_never_show_the_size_equal_to_the_limit() -> None:
    assert size_message(5_000_001, 5_000_000).startswith(
        "request too large: 5,000,001 bytes, the desk accepts up to 5,000,000 bytes."
    )
    assert size_message(10_000_000, 5_000_000).startswith("request too large: 10.0 MB, the desk accepts up to 5.0 MB")


def test_slow_headers_close_the_connection(desk: Desk) -> None:
    uvicorn = pytest.importorskip("uvicorn")
    from llamadiag.desk.serve import TimedH11Protocol

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    port = sock.getsockname()[1]
    protocol = type("Fast", (TimedH11Protocol,), {"header_timeout": 0.5})
    config = uvicorn.Config(create_app(desk), http=protocol, log_level="warning", log_config=None, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as idle:  # sends nothing at all
            assert idle.recv(10) == b""
        with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
            started, closed = time.monotonic(), False
            for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100:
                try:
                    slow.send(bytes([byte]))
                except OSError:
                    closed = True
                    break
                time.sleep(0.05)
                if time.monotonic() - started > 3:
                    break
            if not closed:
                slow.settimeout(5)
                closed = slow.recv(10) == b""
            assert closed and time.monotonic() - started < 5
        with socket.create_connection(("127.0.0.1", port), timeout=10) as fine:  # a normal request still works
            fine.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert fine.recv(100).startswith(b"HTTP/1.1 200")
    finally:
        server.should_exit = True
        thread.join(10)


def test_the_queue_is_bounded_and_drops_work_whose_client_went_away() -> None:
    from llamadiag.desk.work import Busy, ClientGone, WorkQueue

    release = threading.Event()
    ran: list[str] = []

    def job(name: str) -> str:
        if name == "first":
            release.wait(30)
        ran.append(name)
        return name

    async def main() -> list[object]:
        queue = WorkQueue(workers=1, waiting=1)

        async def gone() -> bool:
            return True

        async def attempt(name: str, **kw: Any) -> object:
            try:
                return await queue.run(job, name, **kw)
            except (Busy, ClientGone) as exc:
                return exc.status

        first = asyncio.ensure_future(attempt("first"))
        await asyncio.sleep(0.2)
        second = asyncio.ensure_future(attempt("second", gone=gone))  # waits; its client leaves
        await asyncio.sleep(0.1)
        third = await attempt("third")  # one running, one waiting: full
        release.set()
        return [await first, await second, third]

    assert asyncio.run(main()) == ["first", 499, 503]
    assert ran == ["first"]
