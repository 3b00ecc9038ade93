"""The desk's routes through Starlette's TestClient: page, form, JSON API, limits, bad input."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.paths import ROOT

pytest.importorskip("starlette", reason="the desk extra is not installed")
from starlette.testclient import TestClient

from llamadiag.desk.app import create_app
from llamadiag.desk.service import Desk
from llamadiag.knowledge.loader import Knowledge
from tests.cli.test_cli import SEED_CMD, SEED_SNIPPET  # the seed case's error lines and command line

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
    # a snippet with its version and command line: likely (never confirmed), with the build used
    assert "Likely" in r.text and "build b11503" in r.text


def test_near_miss_is_not_the_seed_case(client: TestClient) -> None:
    r = client.post("/api/explain", json={"log": NEAR_MISS})
    assert r.status_code == 200
    assert SEED_RULE not in [f["rule_id"] for f in r.json()["findings"]]


def test_pasted_markup_is_escaped(client: TestClient) -> None:
    hostile = SEED_SNIPPET.replace("failed to process", "<script>alert(1)</script> failed to process")
    r = client.post("/", data={"log": hostile, "cmdline": SEED_CMD + " --alias '<b>x</b>' -m '\"><img src=x>'"})
    assert r.status_code == 200
    assert "<script>alert(1)" not in r.text and "<img src=x" not in r.text and "<b>x</b>" not in r.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; failed to process speculative batch" in r.text  # in the evidence
    bad = client.post("/", data={"log": "", "version_text": "<script>alert(3)</script>\x00\x01\x02"})
    assert bad.status_code == 400 and "<script>alert(3)" not in bad.text  # echoed for correction, escaped


def test_redacted_before_rendering(client: TestClient) -> None:
    key = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e"
    cmdline = (
        f"llama-server -m /home/alice/models/glm.gguf --mmproj mmproj-F16.gguf --api-key {key} --spec-type draft-mtp"
    )
    page = client.post("/", data={"log": SEED_LOG, "cmdline": cmdline})
    api = client.post("/api/explain", json={"log": SEED_LOG, "cmdline": cmdline})
    assert page.status_code == api.status_code == 200
    for text in (page.text, api.text):
        assert key not in text and "/home/alice" not in text and "192.168.1.23" not in text
    assert "Redacted:" in page.text and "Best-effort: review before sharing." in page.text
    counts = api.json()["redaction"]["counts"]
    assert counts and all(n > 0 for n in counts.values())
    assert api.json()["findings"][0]["rule_id"] == SEED_RULE  # redaction did not change the diagnosis


# -- the JSON API ----------------------------------------------------------------------
def _cli_json(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "llamadiag", *args, "--format", "json"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )  # fmt: skip
    return json.loads(out.stdout)


def test_api_explain_is_the_json_of_explain(client: TestClient, tmp_path: Path) -> None:
    cmdline = SEED_CMD + " --api-key sk-live-4f9a8b7c6d5e4f3a2b1c0d9e"
    r = client.post("/api/explain", json={"log": SEED_LOG, "version_text": SEED_VERSION, "cmdline": cmdline})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    api = r.json()
    log = tmp_path / "server.log"
    log.write_text(SEED_LOG)
    expected = _cli_json("explain", str(log), "--version-text", SEED_VERSION, "--cmdline", cmdline)
    assert set(api) == set(expected)
    assert {k: v for k, v in api.items() if k != "input"} == {k: v for k, v in expected.items() if k != "input"}
    assert api["redaction"]["counts"]  # the same redaction as the CLI, and some was needed
    f = api["findings"][0]
    assert (f["rule_id"], f["confidence"], f["fixed_in"]) == (SEED_RULE, "confirmed", 11548)


def test_api_lookup_is_the_json_of_lookup(client: TestClient) -> None:
    query = "images fail with MTP b11502"
    api = client.get("/api/lookup", params={"q": query, "cmdline": SEED_CMD}).json()
    assert api == _cli_json("lookup", query, "--cmdline", SEED_CMD)
    assert api["results"][0]["rule_id"] == SEED_RULE


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


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_api_explain_deeply_nested_json_is_a_400(client: TestClient, depth: int) -> None:
    for body in ("[" * depth + "]" * depth, '{"log": ' + '{"a": ' * depth + "1" + "}" * depth + "}"):
        r = client.post("/api/explain", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400 and "nested too deeply" in r.json()["error"]


def test_api_lookup(client: TestClient) -> None:
    r = client.get("/api/lookup", params={"q": "decode: failed to process speculative batch"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    data = r.json()
    best = data["results"][0]
    assert best["rule_id"] == SEED_RULE and best["why"]
    assert {"rule_id", "title", "score", "why", "references", "fixed_in", "affects_build"} <= set(best)
    assert "redaction" in data


def test_api_lookup_with_build_and_flags(client: TestClient) -> None:
    """Before anything fails: which known issues affect this build with these flags?"""
    params = {"q": "", "build": "b11502", "cmdline": "llama-server -m m.gguf --mmproj p.gguf --spec-type draft-mtp"}
    best = client.get("/api/lookup", params=params).json()["results"][0]
    assert (best["rule_id"], best["affects_build"], best["fixed_in"]) == (SEED_RULE, True, 11548)
    fixed = client.get("/api/lookup", params=params | {"build": "11721"}).json()["results"]
    assert next(r for r in fixed if r["rule_id"] == SEED_RULE)["affects_build"] is False


def test_api_lookup_bad_queries(client: TestClient) -> None:
    for params, message in [
        ({"q": "   "}, "the query is empty"),
        ({"q": "!!! ??? ..."}, "no letters or digits"),
        ({"q": "x", "build": "eleven"}, "is not a build number"),
        ({"q": "\x00\x01\x02\x03"}, "looks like binary data"),
    ]:
        r = client.get("/api/lookup", params=params)
        assert r.status_code == 400 and message in r.json()["error"], (params, r.text)


def test_lookup_on_the_page(client: TestClient) -> None:
    r = client.get("/", params={"q": "#30204"})
    assert r.status_code == 200
    assert f"<code>{SEED_RULE}</code>" in r.text and "Why it matches" in r.text
    assert 'href="https://github.com/ggml-org/llama.cpp/pull/30257"' in r.text
    assert 'id="md-lookup"' in r.text
    bad = client.get("/", params={"q": "?!"})
    assert bad.status_code == 400 and "the query could not be read" in bad.text


def test_the_search_box_repeats_the_query_redacted(client: TestClient) -> None:
    secrets = ["sk-live-4f9a8b7c6d5e4f3a2b1c0d9e", "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "192.168.1.23",
               "alice@example.com", "gpu7.corp.example.net"]  # fmt: skip
    q = (
        f"srv log_server_request: request: POST /v1/chat 192.168.1.23 500 Authorization: {secrets[1]} "
        f"X-Api-Key: {secrets[0]} from alice@example.com Host: gpu7.corp.example.net failed to process speculative batch"
    )
    for status, query in ((200, q), (400, q + "\x01" * 100)):  # answered, and refused as binary
        r = client.get("/", params={"q": query})
        assert r.status_code == status
        box = r.text.split('id="q"', 1)[1].split(">", 1)[0]
        for secret in secrets:
            assert secret not in r.text, secret
        assert 'value="' in box and "speculative batch" in box  # the rest of the query is kept


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
    assert r.status_code == 413 and "the command line is 78.1 KiB; it may be at most 64.0 KiB" in r.json()["error"]


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


def test_control_characters_in_a_path_are_escaped_in_the_access_log(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="llamadiag.desk.access")
    forged = "/x%0D%0A127.0.0.1%20%22GET%20/admin%22%20200%1B%5B2J%07%5C"
    assert client.get(forged).status_code == 404
    (message,) = [r.getMessage() for r in caplog.records if "/x" in r.getMessage()]
    assert not any(ch in message for ch in "\r\n\x1b\x07")
    assert "/x\\r\\n127.0.0.1" in message and "\\x1b[2J\\x07\\\\" in message


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


def test_busy_port_is_a_one_line_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "llamadiag", "desk", "--port", str(port)],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
        )  # fmt: skip
    assert out.returncode == 2
    assert (
        out.stderr.strip()
        == f"llamadiag: cannot listen on 127.0.0.1:{port}: Address already in use; choose another --port"
    )
