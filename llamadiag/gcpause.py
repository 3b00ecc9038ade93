"""Garbage collection paused while long-lived objects are made in bulk.

At start-up `explain` imports its modules and unpickles the cached knowledge (~100,000 objects):
everything made then lives for the whole run, so the collections those allocations trigger find
nothing and cost milliseconds of a small log's start (docs/performance.md).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No automatic garbage collection inside the block; collection resumes after, as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
