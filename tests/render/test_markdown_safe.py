"""Shareable markdown, rendered as a viewer renders it: no raw HTML from log text or stand-ins,
and the stand-ins visible (#13 point 1: `C:\\Users\\<user>` became a hidden HTML tag)."""

from __future__ import annotations

import pytest

from llamadiag import api
from llamadiag.features.redact import redact_report
from llamadiag.render.markdown import report_markdown
from tests.paths import DATA, SAMPLES
from tests.render.mdhtml import raw_html, shown_text

HOME_PATHS = {  # logs with a user's home folder, and the redacted path a reader must see
    SAMPLES / "server-port-in-use-b5060-windows.log": r"C:\Users\USER\models",
    SAMPLES / "backends-cuda-no-kernel-image-b4589.log": "/home/USER/",
    SAMPLES / "nearmiss-spec-text-only.log": "/home/USER/",
    DATA / "verbose-secrets.log": "/home/USER/",
}


@pytest.mark.parametrize("log", sorted(HOME_PATHS), ids=lambda p: p.name)
def test_redacted_markdown_has_no_raw_html(log) -> None:
    report, summary = redact_report(api.diagnose(log, unmatched=True).report)
    md = report_markdown(report, summary.line())
    assert raw_html(md) == []
    assert HOME_PATHS[log] in shown_text(md) and "in paths" in shown_text(md)


@pytest.mark.parametrize("log", sorted((SAMPLES / "real").glob("*.log")), ids=lambda p: p.name)
def test_markdown_of_every_real_log_has_no_raw_html(log) -> None:
    # reference titles quote source text such as `--override-kv <arch>.context_length`: a link's
    # text must not open a tag any more than the prose beside it
    report, summary = redact_report(api.diagnose(log).report)
    assert raw_html(report_markdown(report, summary.line())) == []
