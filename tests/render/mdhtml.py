"""Markdown as a reader's viewer shows it (markdown-it-py, CommonMark, raw HTML allowed as
GitHub allows it): the raw HTML a text would carry, and the text a reader sees."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token


def _tokens(md: str) -> list[Token]:
    out: list[Token] = []
    stack = MarkdownIt("commonmark").enable("table").parse(md)
    while stack:
        t = stack.pop(0)
        out.append(t)
        stack[:0] = t.children or []
    return out


def raw_html(md: str) -> list[str]:
    """Raw HTML (tags) that a markdown text would hand to the browser; comments are allowed."""
    return [
        t.content
        for t in _tokens(md)
        if t.type in ("html_inline", "html_block") and not t.content.lstrip().startswith("<!--")
    ]


def shown_text(md: str) -> str:
    """The text a reader sees once the markdown is rendered (code and prose), one piece a line."""
    return "\n".join(t.content for t in _tokens(md) if t.type in ("text", "code_inline", "code_block", "fence"))
