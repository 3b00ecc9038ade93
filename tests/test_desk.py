"""The desk's routes through Starlette's TestClient: page, form, JSON API, limits, bad input."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the desk extra is not installed")
from starlette.testclient import TestClient
from test_cli import SEED_CMD, SEED_SNIPPET  # the seed case's error lines and command line

from llamadiag.desk.app import create_app
from llamadiag.desk.service import Desk
from llamadiag.knowledge import Knowledge

ROOT = Path(__file__).resolve().parent.parent
SEED_LOG = (ROOT / "sample_logs" / "seed-b11503-lv4.log").read_text()
NEAR_MISS = (ROOT / "sample_logs" / "nearmiss-positions-parallel-slots.log").read_text()
SEED_VERSION = "version: 11503 (d41c07e2b)\nbuilt with GNU 14.2.0 for Linux x86_64"
SEED_RULE = "spec-vision-draft-position-gap"


@pytest.fixture(scope="module")
def client(knowledge: Knowledge) -> TestClient:
    return TestClient(create_app(Desk(knowledge, 5_000_000)))


@pytest.fixture(scope="module")
def small(knowledge: Knowledge) -> TestClient:
    """A desk with a 100 kB cap, to reach the limit without megabytes of test data."""
    return TestClient(create_app(Desk(knowledge, 100_000)))


# -- the page -----------------------------------------------------------------------------
def test_page_has_the_form_and_strict_headers(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    for name in ("log", "version_text", "cmdline", "q"):
        assert f'name="{name}"' in r.text
    assert 'method="post"' in r.text  # a plain form: no JavaScript needed
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "<script>" not in r.text and "style=" not in r.text  # nothing inline that the CSP would block
    assert r.headers["cache-control"] == "no-store" and r.headers["x-content-type-options"] == "nosniff"
    assert client.get("/static/desk.css").status_code == 200
    assert client.get("/healthz").text == "ok"


def test_form_post_renders_the_report(client: TestClient) -> None:
    r = client.post("/", data={"log": SEED_LOG})
    assert r.status_code == 200
    html = r.text
    assert "Speculative draft (MTP / EAGLE3) loses position sync on image requests" in html
    assert "still ends at position 17 while the verification batch starts at 942" in html
    assert "Fixed in b11548 by PR #30257; you run b11503: upgrade." in html
    assert 'href="https://github.com/ggml-org/llama.cpp/pull/30257"' in html
    assert '<ul class="verification">' in html and '<ol class="steps">' in html
    assert 'id="md-reply"' in html and "# llamadiag diagnosis" in html  # the markdown, ready to copy


def test_form_uses_version_and_cmdline_fields(client: TestClient) -> None:
    r = client.post("/", data={"log": SEED_SNIPPET, "version_text": SEED_VERSION, "cmdline": SEED_CMD})
    assert r.status_code == 200
    assert "Confirmed" in r.text and "build b11503" in r.text


def test_near_miss_is_not_the_seed_case(client: TestClient) -> None:
    r = client.post("/api/explain", json={"log": NEAR_MISS})
    assert r.status_code == 200
    assert SEED_RULE not in [f["rule_id"] for f in r.json()["findings"]]


def test_pasted_markup_is_escaped(client: TestClient) -> None:
    hostile = (
        SEED_SNIPPET + '0.41.772.040 E srv  update_slots: <script>alert(1)</script> "><img src=x onerror=alert(2)>\n'
    )
    r = client.post("/", data={"log": hostile, "cmdline": "llama-server --alias '<b>x</b>'"})
    assert r.status_code == 200
    assert "<script>alert(1)" not in r.text and "<img src=x" not in r.text and "<b>x</b>" not in r.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text


# -- the JSON API ----------------------------------------------------------------------
def test_api_explain_is_the_json_of_explain(client: TestClient, tmp_path: Path) -> None:
    body = {"log": SEED_SNIPPET, "version_text": SEED_VERSION, "cmdline": SEED_CMD}
    r = client.post("/api/explain", json=body)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    api = r.json()
    log = tmp_path / "server.log"
    log.write_text(SEED_SNIPPET)
    cli = subprocess.run(
        [sys.executable, "-m", "llamadiag", "explain", str(log), "--format", "json",
         "--version-text", SEED_VERSION, "--cmdline", SEED_CMD],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )  # fmt: skip
    expected = json.loads(cli.stdout)
    assert set(api) == set(expected)
    assert api["findings"] == expected["findings"] and api["runs"] == expected["runs"]
    f = api["findings"][0]
    assert (f["rule_id"], f["confidence"], f["fixed_in"]) == (SEED_RULE, "confirmed", 11548)


def test_api_explain_bad_input_is_a_clear_400(client: TestClient) -> None:
    cases = [
        (b"not json", "the body is not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"text": "x"}', "unknown field(s) 'text': the fields are log, version_text, cmdline"),
        (b'{"log": 5}', "field 'log' must be a string, not int"),
        (b'{"log": "  \\n ", "cmdline": ""}', "nothing to diagnose"),
        (json.dumps({"log": "\x00\x01\x02\x03\x04\x05\x06\x07" * 2000}).encode(), "binary data, not a text log"),
        (json.dumps({"version_text": "\x00\x01\x02\x03"}).encode(), "version output looks like binary data"),
    ]
    for body, message in cases:
        r = client.post("/api/explain", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, body
        assert message in r.json()["error"], (body, r.json())


def test_api_lookup(client: TestClient) -> None:
    r = client.get("/api/lookup", params={"q": "decode: failed to process speculative batch"})
    assert r.status_code == 200
    results = r.json()["results"]
    assert results[0]["rule_id"] == SEED_RULE
    assert {"rule_id", "title", "score", "why", "references", "fixed_in", "affects_build"} <= set(results[0])
    empty = client.get("/api/lookup", params={"q": "   "})
    assert empty.status_code == 400 and "empty query" in empty.json()["error"]


def test_lookup_on_the_page(client: TestClient) -> None:
    r = client.get("/", params={"q": "failed to process speculative batch"})
    assert r.status_code == 200
    assert SEED_RULE in r.text and 'id="md-lookup"' in r.text


# -- limits ----------------------------------------------------------------------------
def test_ten_megabytes_is_a_413_with_a_message(client: TestClient) -> None:
    big = "0.00.000.001 I srv  load_model: " + "x" * 10_000_000
    api = client.post("/api/explain", json={"log": big})
    assert api.status_code == 413
    assert api.json()["error"].startswith("request too large: 10.0 MB, the desk accepts up to 5.0 MB")
    form = client.post("/", data={"log": big})
    assert form.status_code == 413 and form.headers["content-type"].startswith("text/html")
    assert "request too large: 10.0 MB" in form.text and 'name="log"' in form.text  # the page, with the form


def test_limit_holds_without_content_length(small: TestClient) -> None:
    def chunks():  # a chunked upload declares no size
        for _ in range(30):
            yield b"x" * 10_000

    r = small.post("/api/explain", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "request too large" in r.json()["error"]
    under = small.post("/api/explain", json={"log": SEED_SNIPPET})
    assert under.status_code == 200


def test_side_fields_are_capped(client: TestClient) -> None:
    r = client.post("/api/explain", json={"cmdline": "llama-server " + "-c 4096 " * 10_000})
    assert r.status_code == 413 and "the command line is 78 KiB; it may be at most 64 KiB" in r.json()["error"]


# -- privacy and robustness --------------------------------------------------------------
def test_nothing_pasted_reaches_disk_or_log(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    marker = "PASTE-MARKER-7f3a"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where Starlette would spool an upload
    caplog.set_level(logging.INFO, logger="llamadiag.desk.access")
    big_text = (SEED_SNIPPET + marker + "\n") * 3_000  # over 1 MB: past Starlette's in-memory spool size
    assert client.post("/", data={"log": big_text}).status_code == 200
    assert client.post("/", files={"log": ("server.log", big_text.encode())}).status_code == 400
    assert client.post("/api/explain", json={"log": big_text}).status_code == 200
    assert client.get("/", params={"q": marker}).status_code == 200
    assert not any(marker.encode() in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert caplog.records and not any(marker in r.getMessage() for r in caplog.records)
    assert '"GET /" 200' in caplog.text  # the path, without its query


def test_a_crash_is_a_clean_500_without_the_message(
    knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    desk = Desk(knowledge, 100_000)

    def boom(fields: dict[str, str]) -> None:
        raise ValueError(f"secret {fields['log']}")

    monkeypatch.setattr(desk, "explain", boom)
    client = TestClient(create_app(desk), raise_server_exceptions=False)
    r = client.post("/api/explain", json={"log": "hunter2"})
    assert r.status_code == 500 and r.json() == {"error": "internal error (ValueError); nothing was kept"}
    assert "hunter2" not in caplog.text and "Traceback" not in caplog.text
