"""A lean worker process of the fleet's local pool (`workerpool.WorkerPool`):
`python -m llamadiag.features.fleet.worker`.

Started fresh rather than forked from the command, it holds only what the per-log work imports
(the engine, through `llamadiag.api`), not the command line's modules (typer, rich, the rule
checker, matplotlib) nor its memory: its peak RSS is the per-log work's own (docs/fleet.md).

It reads calls from stdin and writes their outcomes to stdout, both pickled, one after the
other, until stdin closes: `(function, args)` in, `(True, value)` or `(False, exception)` out.
The pipes carry only what the command itself sends (never log text from elsewhere).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import Any, BinaryIO


def outcome(fn: Any, args: tuple[Any, ...]) -> bytes:
    """The pickled outcome of one call: its value, or the exception it raised (as a
    RuntimeError naming it where the exception itself does not pickle)."""
    try:
        out: tuple[bool, Any] = (True, fn(*args))
    except Exception as exc:
        out = (False, exc)
    try:
        return pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an unpicklable value or exception: its name still gets through
        return pickle.dumps((False, RuntimeError(f"{type(out[1]).__name__}: {out[1]} (not picklable: {exc})")))


def serve(calls: BinaryIO, results: BinaryIO) -> None:
    """Run the calls read from `calls` one by one, writing each outcome to `results`."""
    while True:
        try:
            fn, args = pickle.load(calls)
        except EOFError:  # the pool closed our stdin: done
            return
        results.write(outcome(fn, args))
        results.flush()


def main() -> None:
    """Serve on stdin/stdout; anything else printed (a warning, a C library) goes to stderr.
    Ctrl-C in the terminal reaches the whole process group: the pool, not the worker, acts on it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    results = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, results)


if __name__ == "__main__":
    main()
