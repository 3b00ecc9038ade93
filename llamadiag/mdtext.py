"""Markdown primitives shared by the renderers and the bug-report draft (whose fields are Markdown).

Bottom of the package like `lines`: it imports nothing of llamadiag.
"""

from __future__ import annotations

from typing import Any


def esc(text: Any) -> str:
    """Prose from a log: `<` would open an HTML tag (and hide `<user>`); keep it literal."""
    return str(text).replace("<", "\\<")


def link(label: Any, url: str) -> str:
    """A markdown link whose text cannot open a tag or close the brackets, and whose address
    cannot close the parentheses (a title such as `<arch>.context_length` stays literal)."""
    text = esc(label).replace("[", "\\[").replace("]", "\\]")
    target = url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return f"[{text}]({target})"


def fence(text: str, lang: str = "text") -> str:
    """A fenced code block that a ``` inside the text cannot close."""
    body = text.replace("```", "`\u200b``")
    return f"```{lang}\n{body}\n```"


def code(command: str) -> str:
    """Inline code, with longer ticks when the command holds one."""
    ticks = "``" if "`" in command else "`"
    return f"{ticks}{command}{ticks}"
