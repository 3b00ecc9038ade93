"""The fleet on Dask (`distributed`, the `llamadiag[fleet]` extra): leaves and merges are tasks
of a cluster, either one that already runs (`--scheduler tcp://HOST:8786`) or a
`LocalCluster` of worker processes started here (`--workers N`).

The workers import llamadiag and read the logs themselves, so the paths must be ones they see
(shared storage, or fsspec URLs such as `s3://`; docs/fleet.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llamadiag.features.fleet.perlog import remember_knowledge, summarize, summarize_piece, summarize_split
from llamadiag.features.fleet.sources import LogTask
from llamadiag.features.fleet.summary import Summary, combine
from llamadiag.features.fleet.workerknowledge import for_workers, worker_formats

# A Dask worker samples its task thread's stack every 10 ms for the dashboard's profile page. On
# the engine's pure-Python work that sampler (a thread taking the GIL 100 times a second) cost as
# much CPU as the work itself on a loaded machine (docs/fleet.md, figures), so the LocalCluster
# started here runs without it; an existing cluster (`--scheduler`) keeps its own configuration.
# Its workers also keep short histories of what only Dask's own debugging and dashboard read: the
# state machine's last transitions and events (1000 of each by default, about 0.7 MiB per worker
# once a fleet has run that many) and the system monitor's samples (two a second, kept for an
# hour by default: 2 MiB per worker by then); every MiB counts against the 64 MiB a fleet
# worker is meant to stay under (docs/fleet.md, "Memory per worker").
WORKER_LOG_LENGTH = 100
MONITOR_SAMPLES = 120  # a minute
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.low-level-log-length": WORKER_LOG_LENGTH,
    "distributed.admin.system-monitor.log-length": MONITOR_SAMPLES,
}


class DaskBackend:
    """Nodes as Dask futures on `client`; merges run on the workers next to their inputs."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def share_knowledge(self, rules: tuple[str, ...], knowledge: Any) -> None:
        """Sent to every worker of the cluster now (about 1 MB pickled): the workers neither load
        nor check the rules, and need not see the `--rules` folders; a worker that joins later
        loads them itself. Without the rules' report text: the report is rendered here."""
        self.client.run(remember_knowledge, rules, for_workers(knowledge), worker_formats())

    def leaf(self, task: LogTask, rules: tuple[str, ...]) -> Any:
        """The log summarised on a worker."""
        return self.client.submit(summarize, task, rules, pure=False)

    def piece(self, task: LogTask, span: tuple[int, int], rules: tuple[str, ...]) -> Any:
        """A byte range of a split log scanned on a worker."""
        return self.client.submit(summarize_piece, task, *span, rules, pure=False)

    def join(self, task: LogTask, rules: tuple[str, ...], pieces: list[Any]) -> Any:
        """The pieces joined on a worker (the log whole there where they do not join)."""
        return self.client.submit(summarize_split, task, rules, *pieces, pure=False)

    def merge(self, left: Any, right: Any) -> Any:
        """The merge of two futures, on a worker."""
        return self.client.submit(combine, left, right, pure=False)

    def as_completed(self, leaves: list[Any]) -> Iterator[Any]:
        """As the cluster finishes them."""
        from distributed import as_completed

        return iter(as_completed(leaves))

    def result(self, node: Any) -> Summary:
        """The node's summary, brought here."""
        return node.result()


def dashboard_link(client: Any) -> str | None:
    """The cluster's dashboard address, when it serves one."""
    try:
        link = client.dashboard_link
    except Exception:  # no dashboard (bokeh missing) or an old scheduler
        return None
    return str(link) if link else None


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[Any]:
    """A client of the cluster at `scheduler`, or of a LocalCluster of `workers` processes
    (one thread each: the engine is pure Python, threads would share one core)."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise RuntimeError("--workers and --scheduler need Dask: pip install 'llamadiag[fleet]'") from exc
    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    with (
        dask.config.set(LOCAL_CLUSTER_CONFIG),  # the nannies hand their config to the workers they start
        LocalCluster(n_workers=workers or 1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        yield client
