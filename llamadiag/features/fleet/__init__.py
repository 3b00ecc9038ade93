"""`llamadiag fleet`: many logs, one per instance, diagnosed on a local process pool or a Dask
cluster and reduced into one report (docs/fleet.md).

    from llamadiag.features import fleet
    tasks, bad = fleet.expand(["logs/"])
    summary = fleet.run(tasks, fleet.SerialBackend())  # or fleet.PoolBackend(fleet.WorkerPool(2))
    report = fleet.build_report(summary, api.load_knowledge())
"""

from llamadiag.features.fleet.graph import Backend, PoolBackend, Progress, SerialBackend, run
from llamadiag.features.fleet.report import FleetReport, build_report, redacted
from llamadiag.features.fleet.sources import LogTask, SourceError, expand
from llamadiag.features.fleet.summary import EMPTY, Summary, combine
from llamadiag.features.fleet.workerpool import WorkerLost, WorkerPool

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
