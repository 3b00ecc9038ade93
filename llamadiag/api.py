"""The one public way into the engine: diagnose a log file, a stream or a text.

Everything that needs a diagnosis (the command line, the support desk, lookup) calls these
functions; so can a notebook, a chat bot or a CI step. See docs/api.md.

    from llamadiag import api
    diagnosis = api.diagnose("server.log", cmdline="llama-server -m m.gguf --mmproj mm.gguf")
    for finding in diagnosis.report.findings:
        print(finding.rule_id, finding.confidence, finding.diagnosis)

The knowledge (the shipped rules, plus `rules` folders) is loaded once, checked (a rule whose
own examples fail is refused and listed in `Knowledge.errors`) and cached on disk.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from llamadiag.engine.facts import FactValue, ServerFacts, parse_version
from llamadiag.engine.findings import Finding, Report
from llamadiag.engine.reportdata import dump
from llamadiag.knowledge.loader import Knowledge
from llamadiag.knowledge.loader import load_knowledge as raw_knowledge
from llamadiag.source.blocks import read_byte_blocks
from llamadiag.source.reader import BLOCK, InputError, ReadReport, read_bytes

if TYPE_CHECKING:
    from llamadiag.engine import ranges as ranges_t
    from llamadiag.engine.unmatched import UnmatchedCollector  # --unmatched and the fleet's pieces only
    from llamadiag.source.probe import ProbeResult

__all__ = [
    "Diagnosis",
    "Finding",
    "InputError",
    "Knowledge",
    "Piece",
    "Report",
    "ServerFacts",
    "diagnose",
    "diagnose_stream",
    "diagnose_text",
    "dump",
    "join_pieces",
    "load_knowledge",
    "plan_pieces",
    "probe_server",
    "scan_piece",
    "usable_cores",
    "version_fields",
]


@dataclass
class Diagnosis:
    """The outcome of one diagnosis.

    `report` is the JSON contract of docs/json-output.md as a pydantic model. `input_error`
    is set when the input broke off after some data (a truncated archive): the report holds
    what was read, and the caller should say so. `last_run_facts` are the evaluated facts of
    the last server run, with the line each came from (lookup ranks rules with them).
    """

    report: Report
    input_error: str | None = None
    last_run_facts: dict[str, FactValue] = field(default_factory=dict)


def load_knowledge(rules: Sequence[Path] = (), *, checked: bool = True) -> Knowledge:
    """The knowledge: shipped rules, user rule folders and `rules` (which override by id).

    Checked (the default), a rule whose own examples or patterns fail is refused and listed in
    `errors`, and the result is cached on disk; unchecked, every rule that parses is kept (what
    `rules test` and `rules lint` need to show the failures).
    """
    from llamadiag.ruletools.checked import checked_knowledge  # the rule self-test runs the engine

    return checked_knowledge(list(rules)) if checked else raw_knowledge(list(rules))


def version_fields(text: str, knowledge: Knowledge) -> dict[str, str]:
    """What a `llama-server --version` output says (build, commit, compiler ...); empty when it
    holds no version line of any known era."""
    return parse_version(text, knowledge.versions)


def probe_server(url: str, *, api_key: str | None = None, allow_remote: bool = False) -> ProbeResult:
    """Ask a running llama-server what it is (GET /health, /props, /slots, /metrics, /v1/models;
    never a prompt). `.facts` are its facts, `.server_facts` what `diagnose(server_facts=...)`
    takes. Raises `source.probe.ProbeError` (one line) when it cannot; see docs/probe.md."""
    from llamadiag.source.probe import probe

    return probe(url, api_key=api_key, allow_remote=allow_remote)


def diagnose(
    source: str | Path,
    *,
    knowledge: Knowledge | None = None,
    cmdline: str | None = None,
    version_text: str | None = None,
    build: int | None = None,
    unmatched: bool = False,
    on_block: Callable[[int], None] | None = None,
    server_facts: ServerFacts | None = None,
    jobs: int = 1,
    pieces: int | None = None,
    block: int = BLOCK,
) -> Diagnosis:
    """Diagnose a log file (plain or compressed, UTF-8 or UTF-16), or standard input for "-".

    `cmdline`, `version_text` and `build` fill in what the log does not say. `server_facts` are
    what a live server said (`source.probe.probe(url).server_facts`): they fill what the log,
    the version text and the command line do not say, for the run the server is (the last one),
    each fact with its endpoint as source. `unmatched` also groups the warning and error lines
    no rule explains (`report.unmatched`). `on_block` is told how far into the file reading has
    come. Raises `InputError` for input that cannot be read.

    `jobs` > 1 scans a plain UTF-8 file of `SPLIT_MIN_BYTES` or more as `pieces` (default
    `jobs`) byte ranges split where server runs start, on that many processes, merged into the
    same report as one process gives (docs/performance.md, "Both cores"). Standard input,
    compressed and UTF-16 files, `unmatched` and `server_facts` are read by one process.

    `block` is how many bytes are read and analysed at a time: smaller bounds the memory a log
    takes while it is read (a fleet worker's peak), at no cost to the report.
    """
    if jobs > 1 and not unmatched and server_facts is None:
        knowledge = knowledge if knowledge is not None else load_knowledge()  # loaded once, split or not
        split = _diagnose_split(str(source), knowledge, cmdline, version_text, build, on_block, jobs, pieces)
        if split is not None:
            return split
    read = ReadReport(str(source))
    blocks = read_byte_blocks(str(source), read, block, on_block)
    return _run(
        blocks, read, _file_info, knowledge, cmdline, version_text, build, unmatched, file=True, server=server_facts
    )


SPLIT_MIN_BYTES = 32 << 20  # smaller files take about as long to split as to scan


def usable_cores() -> int:
    """The cores this process may run on (what `jobs="auto"` means to a command)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _diagnose_split(
    source: str,
    k: Knowledge,
    cmdline: str | None,
    version_text: str | None,
    build: int | None,
    on_block: Callable[[int], None] | None,
    jobs: int,
    pieces: int | None,
) -> Diagnosis | None:
    """`diagnose` on byte ranges in several processes; None when the file is not split."""
    from llamadiag.engine import ranges
    from llamadiag.engine.analyze import report_of
    from llamadiag.source.ranges import merge_reads, read_range, splittable_size

    size = splittable_size(source)
    if size is None or size < max(SPLIT_MIN_BYTES, 1):
        return None
    spans = plan_pieces(source, k, pieces or jobs)
    if not spans:
        return None
    options = ranges.ScanOptions(cmdline, version_text, build)
    scan = ranges.scan_ranges(k, source, spans, read_range, options, jobs, on_block)
    read = merge_reads(source, list(scan.reads))
    return Diagnosis(report_of(k, scan.result(), _file_info(read), read.notes()), read.error, scan.last_facts)


@dataclass
class Piece:
    """One byte range of a plain log scanned on its own (`scan_piece`), unmatched lines included:
    what `join_pieces` merges in order into the log's diagnosis (the fleet's split leaves)."""

    scan: ranges_t.RangeScan
    unmatched: UnmatchedCollector


def plan_pieces(source: str, knowledge: Knowledge, pieces: int) -> list[tuple[int, int]]:
    """Byte ranges of `source` split where server runs start, about `pieces` of them; empty when
    the file cannot be read in ranges (compressed, UTF-16, not a regular file) or no run starts
    near a split point."""
    from llamadiag.engine import ranges
    from llamadiag.source.ranges import splittable_size, window

    size = splittable_size(source)
    if size is None or pieces < 2:
        return []
    spans = ranges.plan(knowledge, size, pieces, lambda offset, limit: window(source, offset, limit))
    return spans if len(spans) > 1 else []


def scan_piece(source: str, start: int, end: int, knowledge: Knowledge) -> Piece:
    """Scan the byte range [start, end) of `source` (one of `plan_pieces`), grouping unmatched lines."""
    from llamadiag.engine import ranges
    from llamadiag.engine.unmatched import UnmatchedCollector
    from llamadiag.source.ranges import read_range

    collector = UnmatchedCollector([r.rule.id for r in knowledge.rules])
    base, blocks, read = read_range(source, start, end)
    scan = ranges.scan_range(
        knowledge,
        blocks,
        start=start,
        end=end,
        line_base=base,
        options=ranges.ScanOptions(),
        read=read,
        on_entry=collector.observe,
    )
    return Piece(scan, collector)


def join_pieces(source: str, pieces: Sequence[Piece], knowledge: Knowledge) -> Diagnosis | None:
    """The diagnosis of `source` (with unmatched lines) from its pieces in order, the same as
    `diagnose(source, unmatched=True)`; None when an edge does not prove an exact join (then
    diagnose the file whole). The pieces are not changed."""
    import copy

    from llamadiag.engine import ranges
    from llamadiag.engine.analyze import report_of
    from llamadiag.source.ranges import merge_reads

    whole = pieces[0].scan
    collector = copy.deepcopy(pieces[0].unmatched)
    for piece in pieces[1:]:
        if not ranges.fits(whole, piece.scan) or not collector.join(piece.unmatched):
            return None
        whole = ranges.combine(whole, piece.scan)
    read = merge_reads(source, list(whole.reads))
    report = report_of(knowledge, whole.result(), _file_info(read), read.notes())
    report.unmatched = collector.templates(report)
    return Diagnosis(report, read.error, whole.last_facts)


def diagnose_stream(
    stream: BinaryIO,
    *,
    name: str = "<stream>",
    knowledge: Knowledge | None = None,
    cmdline: str | None = None,
    version_text: str | None = None,
    build: int | None = None,
    unmatched: bool = False,
    server_facts: ServerFacts | None = None,
) -> Diagnosis:
    """Diagnose an open binary stream to its end (for a live stream, see `llamadiag watch`)."""
    return diagnose_text(
        stream.read(),
        name=name,
        knowledge=knowledge,
        cmdline=cmdline,
        version_text=version_text,
        build=build,
        unmatched=unmatched,
        server_facts=server_facts,
    )


def diagnose_text(
    text: str | bytes,
    *,
    name: str = "pasted log",
    knowledge: Knowledge | None = None,
    cmdline: str | None = None,
    version_text: str | None = None,
    build: int | None = None,
    unmatched: bool = False,
    server_facts: ServerFacts | None = None,
) -> Diagnosis:
    """Diagnose text held in memory (a ticket paste, a rule example), with the same checks as a
    file: binary refused, compression and encoding sniffed, over-long lines cut."""
    data = text.encode("utf-8", errors="replace") if isinstance(text, str) else text
    read = ReadReport(name)
    blocks = read_bytes(data, read)
    return _run(
        blocks, read, _paste_info, knowledge, cmdline, version_text, build, unmatched, file=False, server=server_facts
    )


def _file_info(read: ReadReport) -> dict[str, object]:
    return {
        "name": read.name,
        "lines": read.lines,
        "bytes": read.bytes_read,
        "compression": read.compression,
        "encoding": read.encoding,
    }


def _paste_info(read: ReadReport) -> dict[str, object]:
    return {"name": read.name, "lines": read.lines, "bytes": read.bytes_read, "encoding": read.encoding}


def _run(
    blocks: Iterable[bytes] | Iterable[list[str]],
    read: ReadReport,
    info: Callable[[ReadReport], dict[str, object]],
    knowledge: Knowledge | None,
    cmdline: str | None,
    version_text: str | None,
    build: int | None,
    unmatched: bool,
    file: bool,
    server: ServerFacts | None = None,
) -> Diagnosis:
    def describe() -> tuple[dict[str, object], list[str]]:
        notes = read.notes()
        if file and read.lines == 0:
            notes.append("the input is empty: nothing to diagnose")
        return info(read), notes

    from llamadiag.engine.diagnose import diagnose_blocks  # the analyzer: only when diagnosing

    report, last = diagnose_blocks(
        knowledge if knowledge is not None else load_knowledge(),
        blocks,
        cmdline=cmdline,
        version_text=version_text,
        build=build,
        unmatched=unmatched,
        describe=describe,
        server_facts=server,
    )
    return Diagnosis(report, read.error, last)
