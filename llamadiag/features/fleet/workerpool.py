"""The fleet's local process pool: worker processes started fresh (`worker.py`), not forked.

A forked worker (the stdlib pool's default on Linux) starts with every page of the command: the
command line's modules, the rule checker, the knowledge as loaded, and counts them in its RSS. A
spawned one (`multiprocessing`'s spawn or forkserver) re-runs the command's main script, which
imports the command line again. These workers run `python -m llamadiag.features.fleet.worker`
and import only what the calls sent to them need (docs/fleet.md, peak RSS per worker).

A pool thread per worker feeds it one call at a time from a shared queue, so a free worker takes
the next call (the order calls were submitted in). A worker that dies under a call fails that
call only (`WorkerLost`); a fresh worker takes its place for the calls left. The workers ignore
Ctrl-C: the pool ends them (leaving it on an exception kills them; else their stdin closes).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import llamadiag

_Call = tuple[cf.Future[Any], Callable[..., Any], tuple[Any, ...]]


class WorkerLost(cf.BrokenExecutor):
    """The worker running a call ended (killed, crashed) or its pipe broke."""


class _Worker:
    """One worker process and the pipes to it."""

    def __init__(self) -> None:
        # the worker imports the same llamadiag as this process, and the modules of the calls
        # from where this process finds them (its sys.path, as multiprocessing hands it over)
        here = str(Path(llamadiag.__file__).resolve().parent.parent)
        path = os.pathsep.join([here, *(p for p in sys.path if p)])
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llamadiag.features.fleet.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": path},
        )
        self.setups_done = 0

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
        """Run one call on the worker; OSError or EOFError when the worker is gone, a pickling
        error (before anything is sent) when the call does not pickle."""
        assert self.process.stdin is not None and self.process.stdout is not None
        data = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        self.process.stdin.write(data)
        self.process.stdin.flush()
        ok, value = pickle.load(self.process.stdout)
        return ok, value

    def close(self, kill: bool = False) -> None:
        """End the worker: stdin closed (it then exits), or killed."""
        if kill:
            self.process.kill()
        elif self.process.stdin is not None:
            with contextlib.suppress(OSError):  # already gone
                self.process.stdin.close()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class WorkerPool:
    """A pool of `processes` fresh worker processes with `submit` like a `concurrent.futures`
    executor; `run_on_all` prepares every worker (also one started later) before its next call.

    Used as a context manager: leaving it waits for the calls submitted, or cancels them when
    leaving on an exception."""

    def __init__(self, processes: int) -> None:
        self._calls: queue.Queue[_Call | None] = queue.Queue()
        self._setups: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self._lock = threading.Lock()
        self._closing = False
        self._workers: list[_Worker | None] = [_Worker() for _ in range(processes)]
        self._threads = [
            threading.Thread(target=self._feed, args=(n,), name=f"fleet-worker-{n}", daemon=True)
            for n in range(processes)
        ]
        for t in self._threads:
            t.start()

    @property
    def pids(self) -> list[int]:
        """The process ids of the workers now running."""
        return [w.process.pid for w in self._workers if w is not None]

    def run_on_all(self, fn: Callable[..., Any], *args: Any) -> None:
        """Have every worker run `fn(*args)` before its next call (e.g. hand it the knowledge)."""
        with self._lock:
            self._setups.append((fn, args))

    def submit(self, fn: Callable[..., Any], *args: Any) -> cf.Future[Any]:
        """`fn(*args)` on the next free worker; `fn` and the arguments must pickle."""
        future: cf.Future[Any] = cf.Future()
        self._calls.put((future, fn, args))
        return future

    def shutdown(self, cancel: bool = False) -> None:
        """Wait for the calls submitted (or cancel those not started) and end the workers."""
        self._closing = True
        if cancel:
            while True:
                try:
                    call = self._calls.get_nowait()
                except queue.Empty:
                    break
                if call is not None:
                    call[0].cancel()
            for w in self._workers:
                if w is not None:
                    w.close(kill=True)
        for _ in self._threads:
            self._calls.put(None)
        for t in self._threads:
            t.join()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.shutdown(cancel=kind is not None)

    def _feed(self, n: int) -> None:
        """Worker n's thread: its calls one at a time, until the pool shuts down."""
        while (call := self._calls.get()) is not None:
            future, fn, args = call
            if not future.set_running_or_notify_cancel():
                continue
            try:
                worker = self._started(n)
                self._prepare(worker)
                ok, value = worker.call(fn, args)
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                future.set_exception(self._lost(n, exc))
                continue
            except Exception as exc:  # the call did not pickle: nothing was sent, the worker is fine
                future.set_exception(exc)
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
        if (last := self._workers[n]) is not None:
            last.close()

    def _started(self, n: int) -> _Worker:
        """Worker n, started afresh if the last one was lost (unless the pool is closing)."""
        worker = self._workers[n]
        if worker is None:
            if self._closing:
                raise OSError("the pool is shutting down")
            worker = self._workers[n] = _Worker()
        return worker

    def _prepare(self, worker: _Worker) -> None:
        with self._lock:
            setups = self._setups[worker.setups_done :]
        for fn, args in setups:
            ok, value = worker.call(fn, args)
            if not ok:
                raise OSError(f"the worker's preparation failed: {type(value).__name__}: {value}")
            worker.setups_done += 1

    def _lost(self, n: int, exc: BaseException) -> WorkerLost:
        """The worker n died (or its pipe broke, or would not start): a fresh one takes the next call."""
        dead, self._workers[n] = self._workers[n], None
        code = None
        if dead is not None:
            dead.close(kill=True)
            code = dead.process.returncode
        return WorkerLost(f"a worker process ended (exit code {code}): {type(exc).__name__}: {exc}")
