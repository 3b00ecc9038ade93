"""Text normalisation shared by the reader, the envelope and the renderers.

The bottom of the package: it imports nothing of llamadiag, so every layer may use it.
"""

from __future__ import annotations

import re

# terminal escape sequences (CSI, OSC, two-byte ESC forms, 8-bit CSI)
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|\x9b[0-?]*[ -/]*[@-~]")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_line(line: str) -> str:
    """Drop CR line ends, keep the last redraw of in-line CR updates, drop NULs."""
    if line.endswith("\r"):
        line = line[:-1]
    if "\r" in line:
        parts = [p for p in line.split("\r") if p.strip()]
        line = parts[-1] if parts else ""
    if "\x00" in line:
        line = line.replace("\x00", "")
    return line

def strip_controls(text: str) -> str:
    """Remove terminal escape sequences and control characters (tabs kept)."""
    if "\x1b" in text or "\x9b" in text:
        text = ANSI.sub("", text)
    return CONTROL.sub("", text.replace("\t", "    ")) if CONTROL.search(text) else text
