"""`llamadiag fleet`: many logs, one per instance, diagnosed on a local process pool or a Dask
cluster and reduced into one report (docs/fleet.md).

    from llamadiag.features import fleet
    tasks, bad = fleet.expand(["logs/"])
    summary = fleet.run(tasks, fleet.SerialBackend())  # or fleet.PoolBackend(fleet.WorkerPool(2))
    report = fleet.build_report(summary, api.load_knowledge())

The names below are imported from their modules when first used: a worker (pool or Dask)
unpickles `perlog.summarize`, which imports this package, and should then hold only the per-log
work, not the report model, the graph or the pool, which are the command's (1.2 MiB per worker;
docs/fleet.md, memory per worker).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llamadiag.features.fleet.graph import Backend, PoolBackend, Progress, SerialBackend, run
    from llamadiag.features.fleet.report import FleetReport, build_report, redacted
    from llamadiag.features.fleet.sources import LogTask, SourceError, expand
    from llamadiag.features.fleet.summary import EMPTY, Summary, combine
    from llamadiag.features.fleet.workerpool import WorkerLost, WorkerPool

_MODULE_OF = {
    **dict.fromkeys(("Backend", "PoolBackend", "Progress", "SerialBackend", "run"), "graph"),
    **dict.fromkeys(("FleetReport", "build_report", "redacted"), "report"),
    **dict.fromkeys(("LogTask", "SourceError", "expand"), "sources"),
    **dict.fromkeys(("EMPTY", "Summary", "combine"), "summary"),
    **dict.fromkeys(("WorkerLost", "WorkerPool"), "workerpool"),
}

__all__ = [
    "EMPTY",
    "Backend",
    "FleetReport",
    "LogTask",
    "PoolBackend",
    "Progress",
    "SerialBackend",
    "SourceError",
    "Summary",
    "WorkerLost",
    "WorkerPool",
    "build_report",
    "combine",
    "expand",
    "redacted",
    "run",
]


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (PEP 562)."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
