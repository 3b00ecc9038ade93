"""The desk's work in flight, bounded: a few diagnoses run at once, a few more wait, the rest
are answered at once with 503 and Retry-After instead of piling up threads and memory. A
waiting request whose client has gone is dropped when its turn comes (a running one finishes)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from llamadiag.desk.service import BadInput

T = TypeVar("T")
RETRY_AFTER = 2  # seconds, for a client told the desk is busy


def default_workers() -> int:
    """Diagnoses run at once: one per core (they are CPU-bound), at least two."""
    return max(2, min(os.cpu_count() or 2, 8))


class Busy(BadInput):
    """Every worker is busy and the queue is full: answered with 503 and Retry-After."""

    def __init__(self) -> None:
        super().__init__(f"the desk is busy; try again in {RETRY_AFTER} s", 503)


class ClientGone(BadInput):
    """The client disconnected while its request waited: the work is not done."""

    def __init__(self) -> None:
        super().__init__("the client went away before its turn", 499)


class WorkQueue:
    """At most `workers` jobs run on threads; at most `waiting` more wait for one; more are Busy."""

    def __init__(self, workers: int | None = None, waiting: int = 16) -> None:
        self.workers = workers or default_workers()
        self.capacity = self.workers + waiting
        self.limiter = anyio.CapacityLimiter(self.workers)
        self.limiter_for_thread = anyio.CapacityLimiter(self.workers)  # never waits: `limiter` is held
        self.admitted = 0  # running and waiting; changed only on the event loop's thread

    async def run(self, fn: Callable[..., T], *args: object, gone: Callable[[], Awaitable[bool]] | None = None) -> T:
        """Run `fn(*args)` on a worker thread when one is free; Busy when the queue is full,
        ClientGone when `gone()` says the client disconnected while it waited."""
        if self.admitted >= self.capacity:
            raise Busy()
        self.admitted += 1
        try:
            async with self.limiter:
                if gone is not None and await gone():
                    raise ClientGone()
                return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter_for_thread)
        finally:
            self.admitted -= 1
