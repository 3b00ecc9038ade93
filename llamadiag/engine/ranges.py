"""Both cores: one large log scanned as line-aligned byte ranges by several processes.

The map: each range is analysed on its own by a fresh `Analyzer` whose line numbers start
after the lines before the range; its result is a `RangeScan`, the grouped summary of its
runs (numbered from 0) plus what its two edges look like. The merge: `combine(a, b)` of two
adjacent scans renumbers `b`'s runs to follow `a`'s and merges the summaries with
`grouping.combine`; it is associative (the same map/merge a fleet of logs runs).

Exactness is checked, not assumed. A range is split where a server run starts (the first line
of the start-up block: a pasted command line, version output, the start line), so each range
holds whole runs. The merge of `a` and `b` is valid only when both edges prove it:

- `a` closes cleanly: after releasing its held entry, nothing is left that a following line
  could extend or join (no queued preamble, no lines of a program embedding llama.cpp waiting,
  no router child being spawned, one stream without instance) and its run has seen output
  after its start line, so the next start line begins a new run;
- `b` opens cleanly: its first line is no continuation, no elision and no embedding program's
  line, and its first entries are start-up lines (buffered as a preamble) up to a start line,
  so its first run begins exactly where one process would begin it;
- `a` ends at `b`'s first byte and line.

Where an edge does not prove it, the two ranges are scanned again as one (`scan_ranges`):
slower, never different. Statistics (a reservoir sample per run) never cross a range, since
runs never do. Splitting inside a run would need the run's state at the edge (facts, open
partial matches, queued signature starts) and a mergeable sample; docs/performance.md says
what that would take.
"""

from __future__ import annotations

import multiprocessing
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from functools import reduce
from itertools import pairwise
from typing import Any

from llamadiag.engine.analyze import SEGMENT_KINDS, Analyzer
from llamadiag.engine.envelope import EnvelopeParser, Line
from llamadiag.engine.facts import FactValue
from llamadiag.engine.grouping import Summary, shift_runs
from llamadiag.engine.grouping import combine as combine_summaries
from llamadiag.engine.literals import LiteralIndex, Target, index_for
from llamadiag.knowledge.loader import Knowledge
from llamadiag.lines import clean_line

PREAMBLE_KINDS = frozenset({"preamble", "cmdline"})
PLAN_WINDOW = 8 << 20  # bytes searched after a planned split point for the start of a run

# (path, start, end) -> (lines before `start`, blocks of whole lines of [start, end), the
# reader's account of them, filled as the blocks are read): the source layer's range reader
RangeReader = Callable[[str, int, int], tuple[int, Iterator[bytes], Any]]


@dataclass(frozen=True)
class ScanOptions:
    """What every range's analyzer is given: the user's command line, version text, build."""

    cmdline: str | None = None
    version_text: str | None = None
    build: int | None = None
    engine: str | None = None


# a run still open at the end of a range: its instance and its summary (numbered from 0)
OpenRun = tuple[str | None, Summary]


@dataclass(frozen=True)
class RangeScan:
    """The partial result of a byte range [start, end): the summary of the runs that ended in it
    and, apart, of the runs still open at its end (each instance's current run, in the order
    they began), numbered from 0; its lines (first_line lines before it, last_line after it);
    the instances it saw, and how its edges look."""

    start: int
    end: int
    summary: Summary
    open: tuple[OpenRun, ...]
    first_line: int
    last_line: int
    opens_cleanly: bool
    closes_cleanly: bool
    instances: frozenset[str | None] = frozenset()
    last_facts: dict[str, FactValue] = field(default_factory=dict)
    reads: tuple[Any, ...] = ()  # the reader's account of each range, in order
    rescanned: int = 0  # edges that did not prove an exact join (their ranges were scanned again)

    @property
    def run_count(self) -> int:
        """Runs of the range, ended or open."""
        return self.summary.run_count + sum(s.run_count for _, s in self.open)

    def result(self) -> Summary:
        """The summary of the whole range as one process folds it at the end: the ended runs,
        then the open ones in the order they began."""
        return reduce(combine_summaries, [s for _, s in self.open], self.summary)


def fits(a: RangeScan, b: RangeScan) -> bool:
    """Whether `b` continues `a` exactly as one process would have read on (see module doc);
    runs of other instances left open by `a` must not go on in `b`."""
    others = {instance for instance, _ in a.open if instance is not None}
    return (
        a.end == b.start
        and a.last_line == b.first_line
        and a.closes_cleanly
        and b.opens_cleanly
        and others.isdisjoint(b.instances)
    )


def combine(a: RangeScan, b: RangeScan) -> RangeScan:
    """The scan of `a`'s range followed by `b`'s (they must `fit`): `b`'s runs renumbered after
    `a`'s; `a`'s open run of the unnamed stream ends where `b` starts one, so it is folded
    before `b`'s ended runs; runs of other instances stay open. Associative."""
    if not fits(a, b):
        raise ValueError(f"ranges {a.start}-{a.end} and {b.start}-{b.end} do not join exactly")
    offset = a.run_count
    ended = [s for instance, s in a.open if instance is None]
    folded = reduce(combine_summaries, [*ended, shift_runs(b.summary, offset)], a.summary)
    still_open = tuple((i, s) for i, s in a.open if i is not None)
    return RangeScan(
        start=a.start,
        end=b.end,
        summary=folded,
        open=still_open + tuple((i, shift_runs(s, offset)) for i, s in b.open),
        first_line=a.first_line,
        last_line=b.last_line,
        opens_cleanly=a.opens_cleanly,
        closes_cleanly=b.closes_cleanly,
        instances=a.instances | b.instances,
        last_facts=b.last_facts or a.last_facts,
        reads=a.reads + b.reads,
        rescanned=a.rescanned + b.rescanned,
    )


# -- the map: one range ---------------------------------------------------------------------
def scan_range(
    k: Knowledge,
    blocks: Iterable[bytes],
    *,
    start: int,
    end: int,
    line_base: int,
    options: ScanOptions,
    read: Any = None,
    on_entry: Callable[[Line, list[Target]], None] | None = None,
) -> RangeScan:
    """Analyse the blocks of one range (its first line is line `line_base + 1`). `on_entry`,
    when given, sees every entry (the analyzer then runs with `every_line`: unmatched lines)."""
    analyzer = Analyzer(
        k, options.cmdline, options.version_text, options.build, engine=options.engine, every_line=on_entry is not None
    )
    analyzer.line_number = line_base
    opening = _Opening(analyzer) if start > 0 else None
    hooks = [h for h in (opening.observe if opening is not None else None, on_entry) if h is not None]
    if hooks:
        analyzer.on_entry = hooks[0] if len(hooks) == 1 else lambda line, targets: [h(line, targets) for h in hooks]
    for block in blocks:
        if opening is not None and not opening.peeled:
            opening.first_physical(block, line_base + 1)
        analyzer.feed_bytes(block)
    closes = _closes_cleanly(analyzer)
    analyzer.final_summary([])  # flushes; a range without any entry gets its one run here
    open_runs = tuple((run.instance, analyzer.run_summary(run)) for run in analyzer.runs)
    last = analyzer.run_facts(analyzer.runs[-1]) if analyzer.runs else {}
    return RangeScan(
        start=start,
        end=end,
        summary=analyzer.summary,
        open=open_runs,
        instances=frozenset(analyzer.streams),
        first_line=line_base,
        last_line=analyzer.line_number,
        opens_cleanly=opening is None or (opening.started and opening.clean),
        closes_cleanly=closes,
        last_facts=last,
        reads=(read,),
    )


class _Opening:
    """Watches a range's first entries: do they begin a run as they would after a finished one?"""

    def __init__(self, analyzer: Analyzer) -> None:
        self.a = analyzer
        self.peeled = False
        self.clean = True
        self.done = False
        self.started = False  # a start line was seen (lines the scanner counts without an entry
        # never reach `observe`, but they count in the run's `since_start`, checked there)

    def first_physical(self, block: bytes, number: int) -> None:
        """The range's first line must stand on its own: no continuation, cut mark or line of an
        embedding program, which would attach to the entry the range before ends with."""
        self.peeled = True
        nl = block.find(b"\n")
        raw = block[: nl if nl >= 0 else len(block)].decode("utf-8", "replace")
        env = self.a.envelope
        line, is_cont = env.peel(number, clean_line(raw))
        if line is None or is_cont or env.elision(line.text)[0] or not env.transparent.isdisjoint(line.wrappers):
            self.clean = False

    def observe(self, line: Line, targets: Iterable[Target]) -> None:
        """Called before each entry (Analyzer.on_entry) until the first start line."""
        if self.done:
            return
        a = self.a
        kinds = {t.kind for t in targets if t.kind in SEGMENT_KINDS and t.pattern.search(line.text)}
        if "start" in kinds:
            self.done = self.started = True
            stream = a.streams.get(None)
            self.clean = (
                self.clean
                and stream is not None
                and line.instance is None
                and a.run_count == 1
                and len(a.streams) == 1
                and not stream.run.has_start
                and stream.run.since_start == 0
                and not stream.run.gaps
            )
        elif line.instance is not None or not kinds & PREAMBLE_KINDS:
            # an entry one process would have given to the run before the range
            self.done = True
            self.clean = False


def _closes_cleanly(a: Analyzer) -> bool:
    """After releasing the held entry (as the next range's first line would), is the analyzer
    in a state where a following start line begins a new run and nothing joins across?
    (Runs of other instances may stay open: `fits` checks that the next range does not go on
    with them.)"""
    a.release_held()
    stream = a.streams.get(None)
    return (
        stream is not None
        and not stream.preamble
        and not a.bridge_queue
        and not a.child_argv
        and a._argv_port is None
        and stream.run.has_start
        and stream.run.since_start > 0
    )


# -- planning: where to split ---------------------------------------------------------------
class SplitPlanner:
    """Finds the line where a server run starts (its start-up block's first line) near an offset."""

    def __init__(self, k: Knowledge) -> None:
        self.envelope = EnvelopeParser(k.envelope)
        self.index: LiteralIndex = index_for(k)
        # a line can start a run only if it holds the literal of a start pattern: searched for
        # in the raw bytes first, so only those lines (and the lines right before them) are peeled
        starts = [lit for lit, ts in self.index.by_literal.items() if any(t.kind == "start" for t in ts)]
        self.start_literals = re.compile(
            b"|".join(re.escape(lit.encode()) for lit in sorted(starts, key=len, reverse=True)) or b"(?!x)x"
        )

    def kinds(self, raw: bytes) -> set[str]:
        """The segmentation kinds of one physical line standing on its own (empty: none, or it
        cannot begin a range)."""
        env = self.envelope
        line, is_cont = env.peel(1, clean_line(raw.decode("utf-8", "replace")))
        if line is None or is_cont or line.instance is not None or not env.transparent.isdisjoint(line.wrappers):
            return set()
        targets = self.index.targets(line.text)
        return {t.kind for t in targets if t.kind in SEGMENT_KINDS and t.pattern.search(line.text)}

    def run_start(self, data: bytes) -> int | None:
        """The offset in `data` (whole lines from a line start) of the first line of the first
        complete start-up block: its pasted command line or version output, if any, then its
        start line. A block that may have begun before `data` is skipped."""
        pos = 0
        while True:
            m = self.start_literals.search(data, pos)
            if m is None:
                return None
            begin = data.rfind(b"\n", 0, m.start()) + 1
            end = data.find(b"\n", m.start())
            end = len(data) if end < 0 else end
            pos = end + 1
            if "start" not in self.kinds(data[begin:end]):
                continue
            while begin > 0:  # back over the start-up lines before it (command line, version ...)
                before = data.rfind(b"\n", 0, begin - 1) + 1
                if not self.kinds(data[before : begin - 1]):
                    return begin
                begin = before
            # the block reaches back to the start of `data`: it may have begun earlier


def plan(
    k: Knowledge, size: int, pieces: int, window: Callable[[int, int], tuple[int, bytes]]
) -> list[tuple[int, int]]:
    """Byte ranges covering [0, size), split at run starts near equal fractions of the file;
    fewer (or one) where no run starts near a fraction. `window(offset, limit)` gives the
    offset of the first line start at or after `offset` and the whole lines from there, up
    to `limit` bytes."""
    planner = SplitPlanner(k)
    cuts: list[int] = []
    for i in range(1, pieces):
        target = size * i // pieces
        if cuts and target <= cuts[-1]:
            continue
        base, data = window(target, min(PLAN_WINDOW, size // pieces))
        found = planner.run_start(data)
        if found is not None and 0 < base + found < size and (not cuts or base + found > cuts[-1]):
            cuts.append(base + found)
    edges = [0, *cuts, size]
    return list(pairwise(edges))


# -- the pool -------------------------------------------------------------------------------
_WORKER: tuple[Knowledge, RangeReader, ScanOptions] | None = None


def _init_worker(k: Knowledge, reader: RangeReader, options: ScanOptions) -> None:
    global _WORKER
    _WORKER = (k, reader, options)


def _scan_task(path: str, start: int, end: int) -> RangeScan:
    assert _WORKER is not None, "worker not initialised"
    k, reader, options = _WORKER
    base, blocks, read = reader(path, start, end)
    return scan_range(k, blocks, start=start, end=end, line_base=base, options=options, read=read)


def scan_ranges(
    k: Knowledge,
    path: str,
    spans: list[tuple[int, int]],
    reader: RangeReader,
    options: ScanOptions,
    jobs: int,
    on_done: Callable[[int], None] | None = None,
) -> RangeScan:
    """Scan the byte ranges of `path` on `jobs` processes and merge them in order. Adjacent
    ranges whose edges do not prove an exact join are scanned again as one range, until all
    join; the result is the scan one process gives. `on_done(bytes)` after each range."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    done_bytes = 0
    with ProcessPoolExecutor(
        max_workers=max(1, min(jobs, len(spans))),
        mp_context=context,
        initializer=_init_worker,
        initargs=(k, reader, options),
    ) as pool:

        def run(batch: list[tuple[int, int]], progress: bool) -> list[RangeScan]:
            nonlocal done_bytes
            futures = [pool.submit(_scan_task, path, s, e) for s, e in batch]
            out = []
            for (s, e), future in zip(batch, futures, strict=True):
                out.append(future.result())
                done_bytes += e - s
                if progress and on_done is not None:
                    on_done(done_bytes)
            return out

        scans = run(spans, True)
        rescanned = 0
        while True:
            groups, whole = _rejoin(scans)
            if whole is not None:
                break
            again = [i for i, g in enumerate(groups) if len(g) > 1]
            rescanned += sum(len(groups[i]) - 1 for i in again)
            fresh = run([(groups[i][0].start, groups[i][-1].end) for i in again], False)
            redone = dict(zip(again, fresh, strict=True))
            scans = [redone[i] if i in redone else g[0] for i, g in enumerate(groups)]
    return replace(whole, rescanned=rescanned)


def _rejoin(scans: list[RangeScan]) -> tuple[list[list[RangeScan]], RangeScan | None]:
    """Adjacent scans grouped where an edge does not fit (each group is scanned again as one),
    and the scans combined when every edge fits. Each edge is checked against all the scans
    before it combined (runs they left open must not go on); after a failed edge, only against
    the scan right before it, until the groups are scanned again and checked anew."""
    groups = [[scans[0]]]
    whole: RangeScan | None = scans[0]
    for scan in scans[1:]:
        if fits(whole if whole is not None else groups[-1][-1], scan):
            groups.append([scan])
            whole = combine(whole, scan) if whole is not None else None
        else:
            groups[-1].append(scan)
            whole = None
    return groups, whole
