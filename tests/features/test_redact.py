"""Redaction on realistic verbose logs: keys, tokens, prompt bodies, client IPs, host and user names."""

from __future__ import annotations

import json
import re
from pathlib import Path

from llamadiag.features.redact import Redactor
from tests.cli.test_cli import run
from tests.paths import DATA, SAMPLES
from tests.render.mdhtml import raw_html, shown_text

VERBOSE = DATA / "verbose-secrets.log"
SECRETS = [
    "sk-live-7f3a9c1e5b2d4f6a8c0e",  # --api-key in llama-swap's start command, then a Bearer header
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "hunter2",  # proxy password in an env dump
    "****9c1e",  # llama-server's own masked key tail
    "alice",  # /home/alice and the proxy user
    "192.168.1.23",
    "10.8.0.14",
    "gpu-box-7",  # journald host
    "John Doe",  # prompt and response text
    "Dr. Alice Meyer",
    "iVBORw0KGgo",  # base64 image
]


def test_verbose_log_text_is_redacted_consistently() -> None:
    text = VERBOSE.read_text()
    r = Redactor()
    r.learn(text)
    out = r.text(text)
    for secret in SECRETS:
        assert secret not in out, secret
    # diagnosis needs these: loopback and bind-all, parameters, sizes, model basename, build, timestamps
    for kept in (
        "127.0.0.1",
        "0.0.0.0:8080",
        '"max_tokens":512',
        '"temperature":0.2',
        '"prompt_tokens":950',
        '"model":"glm"',
        '"stream":false',
        "GLM-5.3-Flash-UD-IQ2_XXS-00001-of-00004.gguf",
        "build 11503",
        "Nov 28 10:11:20",
        "Y = 942",
    ):
        assert kept in out, kept
    # prompt values keep their length, keys stay
    assert '"content":"[REDACTED 58 chars]"' in out
    # the same client IP gets the same stand-in every time, another IP another one
    clients = re.findall(r"POST /v1/chat/completions (\S+) (\d+)", out)
    assert [c for c, _ in clients] == ["ip-priv-1", "ip-priv-2", "ip-priv-1"]
    lines = out.splitlines()
    hosts = {re.match(r"Nov 28 \S+ (\S+) ", line).group(1) for line in lines}
    assert hosts == {"host-1"}
    summary = r.summary()
    assert summary.counts["IP address"] == 3 and summary.distinct["IP address"] == 2
    assert summary.counts["prompt/response text"] >= 4 and summary.counts["hf-token"] == 1
    line = summary.line()
    assert line.startswith("Redacted: ") and "IP addresses (2 distinct)" in line and "review before sharing" in line


def test_placeholders_and_numbers_are_not_secrets() -> None:
    r = Redactor()
    text = 'header "Authorization: Bearer KEY", --api-key $LLAMA_API_KEY, api_keys: 2 keys loaded, EOS token = 2'
    assert r.text(text) == text
    assert r.summary().counts == {}
    assert r.summary().line().startswith("Redaction on: nothing sensitive")


def test_time_prefixes_versions_and_cpp_scopes_are_not_addresses() -> None:
    r = Redactor()
    text = "0.41.172.110 I srv decode at 10:10:30, driver 535.104.05, std::vector, HIP 6.3.42133-0"
    assert r.text(text) == text


def test_windows_and_mac_home_folders() -> None:
    r = Redactor()
    out = r.text(r"loading 'C:\Users\Bob\models\q.gguf' and \"C:\\Users\\Bob\\x\" and /Users/carol/m.gguf")
    assert "Bob" not in out and "carol" not in out and out.count("USER") == 3 and "q.gguf" in out


def test_explain_json_and_markdown_are_redacted_by_default() -> None:
    for fmt in ("json", "markdown"):
        out = run("explain", str(VERBOSE), "--format", fmt)
        text = out.stdout.decode()
        assert "spec-vision-draft-position-gap" in text, out.stderr
        for secret in ("alice", "9c1e", "gpu-box-7"):
            assert secret not in text, (fmt, secret)
        assert b"warning" not in out.stderr
    data = json.loads(run("explain", str(VERBOSE), "--format", "json").stdout)
    assert data["redaction"]["enabled"] is True and data["redaction"]["counts"]["user name in paths"] >= 1
    assert data["runs"][0]["facts"]["model_path"].startswith("/home/USER/")
    assert data["runs"][0]["facts"]["api_key_tail"] == "[REDACTED:api-key]"
    md = run("explain", str(VERBOSE), "--format", "markdown").stdout.decode()
    assert md.rstrip().splitlines()[-1].count("Redacted: ") == 1


def test_no_redact_warns_and_keeps_everything() -> None:
    out = run("explain", str(VERBOSE), "--format", "json", "--no-redact")
    assert b"--no-redact" in out.stderr and b"warning" in out.stderr
    data = json.loads(out.stdout)
    assert data["redaction"]["enabled"] is False and "/home/alice/" in data["runs"][0]["facts"]["model_path"]


def test_sample_log_api_key_tail_and_client_ips() -> None:
    log = SAMPLES / "templates-chatml-fallback-b5400-docker.log"
    text = run("explain", str(log), "--format", "json").stdout.decode()
    assert "9c1e" not in text
    for ip in ("172.19.0.4", "172.19.0.7"):
        assert ip not in text


def test_report_draft_is_redacted() -> None:
    out = run("report", str(VERBOSE), "--force")  # a rule explains its failure: drafted on request
    text = out.stdout.decode()
    assert out.returncode == 0, out.stderr
    for secret in SECRETS:
        assert secret not in text, secret
    assert text.rstrip().splitlines()[-1].startswith("*Draft by llamadiag · Redacted: ")


# -- only the user's input is redacted, never the rule text (#13 point 1) ---------------------
PORT_WINDOWS = SAMPLES / "server-port-in-use-b5060-windows.log"


def test_rule_text_is_not_redacted_in_lookup() -> None:
    out = run("lookup", "port", "in", "use", "--format", "markdown")
    text = out.stdout.decode()
    assert "Check that --host is an address of this machine" in text, text
    assert 'hostname: H, port: P"' in text and "host-" not in text
    assert "Redaction on: nothing sensitive was recognised" in text  # no stand-in counted for rule text


def test_rule_text_is_not_redacted_in_explain_json() -> None:
    data = json.loads(run("explain", str(PORT_WINDOWS), "--format", "json").stdout)
    finding = data["findings"][0]
    assert finding["rule_id"] == "port-already-in-use"
    assert "hostname: H, port: P" in finding["summary"]
    assert "host name" not in data["redaction"]["counts"]
    assert finding["evidence"][0]["text"].endswith("hostname: 127.0.0.1, port: 8080")  # loopback kept


def test_a_user_value_quoted_by_rule_text_gets_its_stand_in(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(PORT_WINDOWS.read_text().replace("hostname: 127.0.0.1", "hostname: gpu-box.lan"))
    data = json.loads(run("explain", str(log), "--format", "json").stdout)
    text = json.dumps(data)
    assert "gpu-box" not in text
    finding = data["findings"][0]
    assert "could not bind host-1:8080" in finding["diagnosis"]
    assert "hostname: host-1, port: 8080" in finding["evidence"][0]["text"]
    assert "hostname: H, port: P" in finding["summary"]
    # a pasted line in lookup: the diagnosis quotes the paste's host, the rule's own text stays
    pasted = run("lookup", "main: couldn't bind HTTP server socket, hostname: gpu-box.lan, port: 8080", "-f", "json")
    result = json.loads(pasted.stdout)["results"][0]
    assert "gpu-box" not in pasted.stdout.decode() and "could not bind host-1:8080" in result["diagnosis"]


def test_known_only_leaves_rule_text_alone() -> None:
    r = Redactor()
    rule = "Check that --host is an address; hostname: H; curl http://HOST:PORT/health; ~/models of alice"
    assert r.known_only(rule) == rule
    r.text("srv load_model: loading '/home/alice/m.gguf' on gpu-box-7 via http://gpu-box-7:8080/")
    assert r.known_only("model /home/alice/m.gguf on gpu-box-7") == "model /home/USER/m.gguf on host-1"
    assert r.known_only("alice and gpu-box-77 stay") == "alice and gpu-box-77 stay"  # only whole values
    r.text(r"loading 'C:\Users\dana\m.gguf'")
    # a ruled-out reason quotes a fact with repr: the doubled backslashes hide no user name
    assert r.known_only(r"model_path is 'C:\\Users\\dana\\m.gguf'") == r"model_path is 'C:\\Users\\USER\\m.gguf'"


def test_windows_home_path_renders_in_markdown_as_the_stand_in() -> None:
    md = run("explain", str(PORT_WINDOWS), "--format", "markdown").stdout.decode()
    assert raw_html(md) == []  # `<user>` was a raw HTML tag: the viewer hid it
    assert r"model C:\Users\USER\models\Phi-3.5-mini-instruct-Q4_K_M.gguf" in shown_text(md)
    assert "dana" not in md
