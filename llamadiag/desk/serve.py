"""Serving the desk with uvicorn, with a time limit on request headers.

uvicorn waits for a request's headers as long as bytes keep coming (and for the first request
of a connection, even when none come): a client sending a byte a second could hold a
connection for minutes. Here a request's headers must be complete within HEADER_TIMEOUT
seconds of its first byte (or of the connection's opening), or the connection is closed. The
body's time limit is the guard's (guard.BODY_TIMEOUT).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0  # seconds


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers come too slowly."""

    header_timeout = HEADER_TIMEOUT
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock for the first request's headers."""
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        """Start the clock at a new request's first byte; stop it once its headers are in."""
        if self.cycle is None or self.cycle.response_complete:
            self._arm()
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock."""
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def serve(app: Any, sock: socket.socket, header_timeout: float = HEADER_TIMEOUT) -> None:
    """Run the app on a bound socket until interrupted; uvicorn's own access log stays off."""
    protocol = type("DeskProtocol", (TimedH11Protocol,), {"header_timeout": header_timeout})
    config = uvicorn.Config(app, http=protocol, access_log=False, log_level="warning", log_config=None, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
