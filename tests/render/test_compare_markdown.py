"""`compare -f markdown` is Markdown (tables, headings), not a rich table printed as text (#13 point 2)."""

from __future__ import annotations

from markdown_it import MarkdownIt

from tests.cli.test_cli import run
from tests.paths import SAMPLES
from tests.render.mdhtml import raw_html, shown_text


def test_compare_markdown_renders_as_tables_and_headings() -> None:
    before, after = SAMPLES / "seed-b11503-lv4.log", SAMPLES / "server-port-in-use-b5060-windows.log"
    out = run("compare", str(before), str(after), "--format", "markdown")
    md = out.stdout.decode()
    assert out.returncode == 1  # a new critical failure in AFTER
    assert "┃" not in md and "━" not in md  # no box drawing: that was rich's table
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    kinds = [t.type for t in tokens]
    assert kinds.count("table_open") == 2  # requests per run, throughput
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[:4] == ["Compare: BEFORE -> AFTER", "Requests per run", "Throughput", "New in AFTER"]
    assert any(h.startswith("NOT FIXED: Speculative draft") for h in headings)
    assert raw_html(md) == []
    text = shown_text(md)
    assert "port-already-in-use" in text and "generation tok/s" in text and "median" in text
