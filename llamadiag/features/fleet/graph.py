"""The fleet's task graph and the three ways to run it.

One function (`run`) builds the graph for every way of running: a leaf per log
(`perlog.summarize`) and a balanced tree of `summary.combine` nodes over the leaves in task
order. A plain log above `split_above` bytes is instead a leaf per byte range
(`perlog.summarize_piece`) and a per-log join of them in order (`perlog.summarize_split`: exact,
or the log read whole), which takes the log's place in the tree. The leaves are handed to the
backend biggest first (`submission_order`; a range by its own size): a pool or cluster then ends
with the small logs, instead of one worker still busy with a big log while the others idle.
A `Backend` only says how a node is computed:

- `SerialBackend`: in this process, one log after the other (`--processes 1`);
- `PoolBackend`: a local process pool (the embedded default, no extra dependency: a
  `workerpool.WorkerPool` of lean workers); the merges run in this process as the leaves arrive
  (a merge costs microseconds);
- `DaskBackend` (`dask_backend.py`): leaves and merges are Dask tasks on a `distributed` cluster.

Because the merge is associative and commutative, the report is byte for byte the same in all.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from llamadiag import api
from llamadiag.features.fleet.perlog import (
    join_summary,
    knowledge_for,
    remember_knowledge,
    summarize,
    summarize_piece,
    summarize_split,
)
from llamadiag.features.fleet.sources import LogTask, is_url
from llamadiag.features.fleet.summary import EMPTY, LogError, Summary, combine, combine_all
from llamadiag.features.fleet.workerknowledge import for_workers, worker_formats
from llamadiag.features.fleet.workerpool import WorkerPool

Span = tuple[int, int]  # a byte range [start, end) of a log


class Node(Protocol):
    """A value that a backend computes: `result()` waits for it."""

    def result(self) -> Summary:
        """The summary this node stands for."""
        ...


class Backend(Protocol):
    """How the graph's nodes are computed."""

    def share_knowledge(self, rules: tuple[str, ...], knowledge: api.Knowledge) -> None:
        """Hand the command's knowledge to where the leaves run, before the first leaf."""
        ...

    def leaf(self, task: LogTask, rules: tuple[str, ...]) -> Any:
        """A node for one log's summary."""
        ...

    def piece(self, task: LogTask, span: Span, rules: tuple[str, ...]) -> Any:
        """A node for one byte range of a split log (`perlog.summarize_piece`)."""
        ...

    def join(self, task: LogTask, rules: tuple[str, ...], pieces: list[Any]) -> Any:
        """A node for a split log's summary: its pieces joined in order, else the log whole."""
        ...

    def merge(self, left: Any, right: Any) -> Any:
        """A node for the merge of two nodes."""
        ...

    def as_completed(self, leaves: list[Any]) -> Iterator[Any]:
        """The leaf nodes as they are done."""
        ...

    def result(self, node: Any) -> Summary:
        """Wait for a node and return its summary."""
        ...


class _Lazy:
    """A node computed in this process the first time its result is asked for."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self._fn, self._args = fn, args
        self._value: Any = None
        self._done = False

    def result(self) -> Any:
        if not self._done:
            self._value = self._fn(*(a.result() if hasattr(a, "result") else a for a in self._args))
            self._args, self._done = (), True
        return self._value


class SerialBackend:
    """Every node in this process, the logs one after the other."""

    def share_knowledge(self, rules: tuple[str, ...], knowledge: api.Knowledge) -> None:
        """This process's leaves use it."""
        remember_knowledge(rules, knowledge)

    def leaf(self, task: LogTask, rules: tuple[str, ...]) -> _Lazy:
        """A log summarised when asked."""
        return _Lazy(summarize, task, rules)

    def piece(self, task: LogTask, span: Span, rules: tuple[str, ...]) -> Any:
        """A byte range scanned when asked."""
        return _Lazy(summarize_piece, task, *span, rules)

    def join(self, task: LogTask, rules: tuple[str, ...], pieces: list[Any]) -> Any:
        """The pieces joined when asked (the log whole where they do not join)."""
        return _Lazy(summarize_split, task, rules, *pieces)

    def merge(self, left: Any, right: Any) -> _Lazy:
        """A merge computed when asked."""
        return _Lazy(combine, left, right)

    def as_completed(self, leaves: list[Any]) -> Iterator[Any]:
        """In task order; each is computed when its result is asked for."""
        yield from leaves

    def result(self, node: Any) -> Summary:
        """The node's summary."""
        return node.result()


class PoolBackend(SerialBackend):
    """Logs in a local process pool; merges in this process.

    The pool is a `WorkerPool` (what `llamadiag fleet` uses: lean workers started fresh, handed the
    shared knowledge before their first log) or a `concurrent.futures.ProcessPoolExecutor`, whose
    knowledge is kept in this process before the first leaf starts the pool's processes: forked
    (the start method on Linux before Python 3.14), they begin with it and load nothing; started
    otherwise, or already running, each loads it once itself."""

    def __init__(self, pool: WorkerPool | cf.ProcessPoolExecutor) -> None:
        self.pool = pool

    def share_knowledge(self, rules: tuple[str, ...], knowledge: api.Knowledge) -> None:
        """Handed to each worker of a `WorkerPool` (without the rules' report text: the report
        is rendered here); kept here for a forked pool."""
        if isinstance(self.pool, WorkerPool):
            self.pool.run_on_all(remember_knowledge, rules, for_workers(knowledge), worker_formats())
        else:
            remember_knowledge(rules, knowledge)

    def leaf(self, task: LogTask, rules: tuple[str, ...]) -> cf.Future[Summary]:  # type: ignore[override]
        """The log summarised in a pool process."""
        return self.pool.submit(summarize, task, rules)

    def piece(self, task: LogTask, span: Span, rules: tuple[str, ...]) -> Any:
        """A byte range scanned in a pool process."""
        return self.pool.submit(summarize_piece, task, *span, rules)

    def join(self, task: LogTask, rules: tuple[str, ...], pieces: list[Any]) -> Any:
        """The pieces joined here (milliseconds); where they do not join, the log whole in the pool."""

        def joined(*done: Any) -> Summary:
            summary = join_summary(task, rules, done)
            return summary if summary is not None else self.pool.submit(summarize, task, rules).result()

        return _Lazy(joined, *pieces)

    def as_completed(self, leaves: list[Any]) -> Iterator[Any]:
        """As the pool finishes them."""
        return cf.as_completed(leaves)


@dataclass
class Progress:
    """Told of each log as it is done (its task and summary), in completion order."""

    on_log: Callable[[LogTask, Summary], None] = lambda _t, _s: None


def build_tree(leaves: list[Any], merge: Callable[[Any, Any], Any]) -> Any:
    """A balanced tree of merges over the leaves, in their order (None when there are none)."""
    level = leaves
    while len(level) > 1:
        nxt = [merge(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0] if level else None


def submission_order(tasks: list[LogTask]) -> list[int]:
    """The task indexes, biggest log first (unknown sizes last, then in task order): the longest
    leaves start first, so the last ones to finish are short (the tail of a run with mixed sizes)."""
    return sorted(range(len(tasks)), key=lambda i: (-(tasks[i].size or 0), i))


def plan_splits(
    tasks: list[LogTask], split_above: int, knowledge: api.Knowledge | None, rules: tuple[str, ...] = ()
) -> dict[int, list[Span]]:
    """The byte ranges of each log to split (by task index): a plain local log above
    `split_above` bytes (0: none) in about `size / split_above` pieces (at least 2), cut where
    server runs start (`api.plan_pieces`). Logs that cannot be split stay whole."""
    chosen = [
        i
        for i, t in enumerate(tasks)
        if split_above > 0 and t.member is None and not is_url(t.url) and (t.size or 0) > split_above
    ]
    if not chosen:
        return {}
    k = knowledge if knowledge is not None else knowledge_for(rules)
    out = {}
    for i in chosen:
        size = tasks[i].size or 0
        try:
            spans = api.plan_pieces(tasks[i].url, k, max(2, round(size / split_above)))
        except Exception:  # unreadable: the whole-log leaf reports it
            spans = []
        if spans:
            out[i] = spans
    return out


def run(
    tasks: list[LogTask],
    backend: Backend,
    rules: tuple[str, ...] = (),
    progress: Progress | None = None,
    knowledge: api.Knowledge | None = None,
    split_above: int = 0,
) -> Summary:
    """Summarise every log on the backend and merge the summaries; the same graph on every backend.

    `knowledge` (the command's, loaded for `rules`) is handed to the workers first, so that each
    does not load and check the rules again; without it each worker loads them once itself.

    A plain log above `split_above` bytes (0: never) is several leaves, one per byte range
    (`plan_splits`), and a per-log join of them in order; the join is exact or falls back to the
    log whole (`perlog.summarize_split`), so the report does not change.

    A leaf that fails on the backend itself (a pool process killed by the kernel, a lost Dask
    worker) becomes that log's error; the merge tree is then skipped and the leaves merged here,
    which gives the same summary since the merge is associative."""
    progress = progress or Progress()
    if knowledge is not None and tasks:
        backend.share_knowledge(rules, knowledge)
    splits = plan_splits(tasks, split_above, knowledge, rules)
    units: list[tuple[int, Span | None]] = []
    for i in range(len(tasks)):
        units += [(i, span) for span in splits[i]] if i in splits else [(i, None)]

    def size(unit: tuple[int, Span | None]) -> int:
        i, span = unit
        return span[1] - span[0] if span is not None else tasks[i].size or 0

    # biggest first (a big log's pieces among the others by their own size), then in task order
    submitted = {
        u: backend.leaf(tasks[u[0]], rules) if u[1] is None else backend.piece(tasks[u[0]], u[1], rules)
        for u in sorted(units, key=lambda u: (-size(u), u[0]))
    }
    leaves = [submitted[u] for u in units]  # in task order, a split log's pieces in file order
    task_of = {id(leaf): u[0] for leaf, u in zip(leaves, units, strict=True)}
    log_nodes = [
        backend.join(tasks[i], rules, [submitted[(i, s)] for s in splits[i]]) if i in splits else submitted[(i, None)]
        for i in range(len(tasks))
    ]
    left = {i: len(splits.get(i, [None])) for i in range(len(tasks))}
    root = build_tree(log_nodes, backend.merge)  # the merge tree in task order, as before
    done: list[Summary] = []
    for leaf in backend.as_completed(leaves):
        i = task_of[id(leaf)]
        left[i] -= 1
        if left[i]:
            continue  # a split log is done with its last piece
        try:
            summary = backend.result(log_nodes[i])
        except Exception as exc:  # the worker died under this log: the rest goes on
            summary = Summary((), (LogError(tasks[i].name, f"the worker failed: {type(exc).__name__}: {exc}"),), 1)
        done.append(summary)
        progress.on_log(tasks[i], summary)
    if root is None:
        return EMPTY
    if len(done) == len(tasks) and not any(e.error.startswith("the worker failed:") for s in done for e in s.errors):
        return backend.result(root)
    return combine_all(done)
