"""One whole input through the analyzer: the single place a complete diagnosis is made.

`llamadiag.api` calls it with blocks from the reader (a file, a stream, a paste); the rule
self-test calls it with a rule's inline examples. The engine reads nothing itself: blocks are
handed in, either UTF-8 byte blocks of whole lines or lists of decoded lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.facts import FactValue, ServerFacts
from llamadiag.engine.findings import Report
from llamadiag.knowledge.loader import Knowledge

# after the last block: the input's description for the report and the reader's notes
Describe = Callable[[], tuple[dict[str, Any] | None, list[str]]]


def diagnose_blocks(
    k: Knowledge,
    blocks: Iterable[bytes] | Iterable[list[str]],
    *,
    cmdline: str | None = None,
    version_text: str | None = None,
    build: int | None = None,
    unmatched: bool = False,
    describe: Describe | None = None,
    server_facts: ServerFacts | None = None,
) -> tuple[Report, dict[str, FactValue]]:
    """The report of a whole input, and the evaluated facts of its last run. `server_facts`
    (what a live server said, by instance) fill what the log does not say."""
    analyzer = Analyzer(k, cmdline, version_text, build, every_line=unmatched, server_facts=server_facts)
    collector = None
    if unmatched:
        from llamadiag.engine.unmatched import UnmatchedCollector  # --unmatched only

        collector = UnmatchedCollector([r.rule.id for r in k.rules])
    if collector is not None:
        analyzer.on_entry = collector.observe
    for block in blocks:
        if isinstance(block, bytes):
            analyzer.feed_bytes(block)
        else:
            analyzer.feed(block)
    info, notes = describe() if describe is not None else (None, [])
    report = analyzer.report(info, notes)
    last = analyzer.run_facts(analyzer.runs[-1]) if analyzer.runs else {}
    del analyzer  # its scanning state is not needed any more: free it before the report is used
    if collector is not None:
        report.unmatched = collector.templates(report)
    return report, last
