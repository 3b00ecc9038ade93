"""`llamadiag probe URL` and `explain LOG --server URL`.

The live tests start the REAL llama-server (the CPU build of tests/realserver/build.py, cached
under ${XDG_CACHE_HOME:-~/.cache}/llamadiag/llama-server/<commit>/) on 127.0.0.1 with a free port
and a tiny random-weight model; without that binary they are skipped with one reason. The error
cases need no llama-server: a closed port, Python's http.server in a thread, a socket that never
answers, a non-loopback address.
"""

from __future__ import annotations

import glob
import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from llamadiag import api
from llamadiag.engine.facts import VERSION_KEYS
from llamadiag.knowledge.formatmodel import ProbeSpec, ProbeTimeouts
from llamadiag.knowledge.formats import builtin_format
from llamadiag.source.probe import ProbeError, probe, resolve

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed-b11503-default.log"
PINNED_COMMIT, PINNED_BUILD = "0c1e57098", 11312


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "COLUMNS": "160"}
    full.pop("LLAMA_API_KEY", None)  # a key of the developer's own server must not leak in
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "llamadiag", *args], capture_output=True, text=True, env=full, timeout=120
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fast_spec(seconds: float = 0.5) -> ProbeSpec:
    spec = builtin_format(ProbeSpec)
    return spec.model_copy(update={"timeouts": ProbeTimeouts(connect_s=seconds, read_s=seconds, total_s=4 * seconds)})


# -- the knowledge ------------------------------------------------------------------------------


def test_probe_yaml_names_only_known_facts(knowledge: api.Knowledge) -> None:
    """Every fact probe.yaml fills is defined under rules/facts/ (or is a version field)."""
    spec = builtin_format(ProbeSpec)
    defined = {f.name for f in knowledge.facts}
    unknown = {m.fact for m in spec.facts} - defined - set(VERSION_KEYS)
    assert not unknown
    names = {e.name for e in spec.endpoints}
    assert {m.endpoint for m in spec.facts} <= names
    assert re.fullmatch(spec.version.regex, "b11312-0c1e57098")
    assert re.fullmatch(spec.version.regex, "b10715-mix-86bd2d3")


def test_resolve_paths() -> None:
    data = {"data": [{"id": "a", "n": {"x": 1}}, {"id": "b"}], "k.with.dots": 2}
    assert resolve(data, "data/*/id") == (["a", "b"], True)
    assert resolve(data, "data/#") == ([2], False)
    assert resolve(data, "data/0/n/x") == ([1], False)
    assert resolve(data, "k.with.dots") == ([2], False)
    assert resolve(data, "data/5/id") == ([], False)
    assert resolve([{"a": True}, {"a": False}], "#") == ([2], False)


def test_server_version_edge_cases() -> None:
    """A gitless build_info is unusable; a version line in the log beats the server's build."""
    from llamadiag.source.probe import Answer, extract

    spec = builtin_format(ProbeSpec)
    props = {"build_info": "b0-unknown", "default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}
    facts = extract(spec, {"props": Answer("props", "/props", 200, data=props)})
    assert facts["build"].value == "0" and facts["n_ctx_slot"].value == 4096
    d = api.diagnose_text("srv  llama_server: initializing ...\n", server_facts={None: facts})
    sources = d.report.runs[0].fact_sources
    assert sources["build"].source == "/props" and sources["version_usable"].value is False
    fork = extract(spec, {"props": Answer("props", "/props", 200, data={"build_info": "b10715-mix-86bd2d3"})})
    assert fork["fork"].value == "mix"
    logged = "build: 11503 (d41c07e2b) with GNU 13.2.0 for x86_64-linux-gnu\n"
    live = extract(spec, {"props": Answer("props", "/props", 200, data={"build_info": "b11312-0c1e57098"})})
    d = api.diagnose_text(logged, server_facts={None: live})
    assert d.report.runs[0].fact_sources["build"].value == 11503
    assert any("differs from the log on build (11503 in the log, 11312 from /props)" in n for n in d.report.notes)


# -- error cases without a server ------------------------------------------------------------------


def test_refused_port_cli() -> None:
    port = free_port()  # bound, then closed: nothing listens
    out = run("probe", f"http://127.0.0.1:{port}")
    assert out.returncode == 2
    lines = [x for x in out.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "connection refused" in lines[0] and "llama-server running" in lines[0], out.stderr


def test_non_loopback_needs_allow_remote() -> None:
    with pytest.raises(ProbeError, match="--allow-remote"):
        probe("http://192.0.2.7:8080")
    out = run("explain", str(SEED), "--server", "http://example.com:8080")
    assert out.returncode == 2 and "--allow-remote" in out.stderr and out.stdout == ""
    with pytest.raises(ProbeError, match="only http"):
        probe("ftp://127.0.0.1/")


class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "html"
    methods: list[str] = []

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.methods.append(self.command)
        if self.mode == "html":
            self._send(404, "text/html", b"<html><body>Not here</body></html>")
        elif self.mode == "json":
            self._send(200, "application/json", b'{"status": "ok", "hello": "world"}')
        elif self.mode == "proxy":
            self._send(502, "text/html", b"<html>502 Bad Gateway</html>", server="nginx/1.25")
        elif self.mode == "loading":  # what llama-server's /health says while it loads a model
            self._send(
                503, "application/json", b'{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}'
            )
        elif self.mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "/login")
            self.send_header("Content-Length", "0")
            self.end_headers()

    def _send(self, status: int, ctype: str, body: bytes, server: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if server:
            self.send_header("Server", server)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def plain_server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("H", (_Handler,), {"methods": []})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", handler
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("html", "not llama-server"),
        ("json", "JSON without llama-server's fields"),
        ("proxy", "a proxy answered"),
        ("redirect", "redirects to /login"),
        ("loading", "503 Service Unavailable: Loading model: the server is still loading the model"),
    ],
)
def test_not_llama_server(plain_server: tuple[str, type[_Handler]], mode: str, expected: str) -> None:
    url, handler = plain_server
    handler.mode = mode
    with pytest.raises(ProbeError, match=re.escape(expected)) as info:
        probe(url, spec=fast_spec())
    assert "\n" not in str(info.value)
    assert set(handler.methods) == {"GET"}


def test_not_llama_server_cli(plain_server: tuple[str, type[_Handler]]) -> None:
    url, handler = plain_server
    handler.mode = "html"
    out = run("probe", url)
    assert out.returncode == 2
    assert "not llama-server" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_slow_server_times_out() -> None:
    """A server that accepts the connection and never answers: the read time-out ends it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        started = time.monotonic()
        with pytest.raises(ProbeError, match="read time-out"):
            probe(url, spec=fast_spec(0.5))
        assert time.monotonic() - started < 3
    finally:
        listener.close()


def test_trickling_server_hits_the_total_bound() -> None:
    """A server that sends a byte every 0.2 s never trips the read time-out; the total bound ends it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def trickle() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            while not stop.wait(0.2):
                try:
                    conn.sendall(b" ")
                except OSError:
                    return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        started = time.monotonic()
        with pytest.raises(ProbeError, match="longer than 2 s in all"):
            probe(f"http://127.0.0.1:{listener.getsockname()[1]}", spec=fast_spec(0.5))
        assert time.monotonic() - started < 4
    finally:
        stop.set()
        listener.close()


# -- the real llama-server ------------------------------------------------------------------------


def _find_binary() -> Path | None:
    if os.environ.get("LLAMADIAG_LLAMA_SERVER"):
        path = Path(os.environ["LLAMADIAG_LLAMA_SERVER"])
        return path if path.is_file() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    found = sorted(glob.glob(os.path.join(base, "llamadiag", "llama-server", "*", "*", "build", "bin", "llama-server")))
    return Path(found[-1]) if found else None


def _tiny_model(binary: Path, tmp: Path) -> Path | None:
    """The tiny llama model made by tests/realserver/tinymodels.py (beside the build, or made now)."""
    made = binary.parents[2] / "models" / "llama-spm.gguf"
    if made.is_file():
        return made
    try:
        sys.path.insert(0, str(ROOT / "tests" / "realserver"))
        import tinymodels  # type: ignore[import-not-found]

        return Path(tinymodels.write_model("llama-spm", tmp / "llama-spm.gguf")[0])
    except Exception:  # not on this branch yet, or no numpy / gguf
        return None


BINARY = _find_binary()
LIVE_SKIP = (
    None
    if BINARY is not None
    else "real llama-server not built (python tests/realserver/build.py builds it into ~/.cache/llamadiag/llama-server/)"
)
live = pytest.mark.skipif(LIVE_SKIP is not None, reason=LIVE_SKIP or "")


class Server:
    def __init__(self, url: str, log: Path, proc: subprocess.Popen[bytes], version: str) -> None:
        self.url, self.log, self.proc, self.version = url, log, proc, version


def _start(tmp: Path, name: str, *args: str) -> Iterator[Server]:
    assert BINARY is not None
    model = _tiny_model(BINARY, tmp)
    if model is None:
        pytest.skip("no tiny model: tests/realserver/tinymodels.py (numpy, gguf) could not make llama-spm.gguf")
    version = subprocess.run([str(BINARY), "--version"], capture_output=True, text=True, timeout=30)
    port = free_port()
    log = tmp / f"{name}.log"
    argv = [str(BINARY), "--host", "127.0.0.1", "--port", str(port), "-t", "1", *args]
    argv = [a if a != "{model}" else str(model) for a in argv]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama-server exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama-server did not become healthy in 60 s:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield Server(url, log, proc, version.stdout + version.stderr)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _start(tmp_path_factory.mktemp("srv"), "default", "-m", "{model}", "-c", "1024", "-np", "2", "--metrics")


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _start(tmp_path_factory.mktemp("key"), "keyed", "-m", "{model}", "-c", "512", "--api-key", "s3cret-key")


def _expected_build(srv: Server) -> int:
    m = re.search(r"build (\d+), commit (\w+)", srv.version)
    assert m, srv.version
    build = int(m.group(1))
    if m.group(2) == PINNED_COMMIT:
        assert build == PINNED_BUILD
    return build


@live
def test_probe_real_server_json(server: Server) -> None:
    out = run("probe", server.url, "--format", "json", "--no-redact")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    facts = {k: v["value"] for k, v in data["facts"].items()}
    sources = {k: v["source"] for k, v in data["facts"].items()}
    assert facts["build"] == str(_expected_build(server))
    assert sources["build"] == "/props" and sources["model_path"] == "/props"
    assert facts["model_path"].endswith("llama-spm.gguf")
    assert facts["n_ctx_slot"] == 512 and facts["n_slots"] == 2  # -c 1024 over -np 2
    assert facts["spec_type"] == "none" and facts["has_mmproj"] is False
    assert facts["n_ctx_train"] == 4096 and sources["n_ctx_train"] == "/v1/models"
    assert facts["slots_processing"] == 0 and sources["slots_processing"] == "/slots"
    assert sources["tokens_predicted_total"] == "/metrics"
    assert {e["endpoint"]: e["status"] for e in data["endpoints"]} == {
        "health": 200,
        "props": 200,
        "slots": 200,
        "metrics": 200,
        "models": 200,
    }


@live
def test_probe_real_server_terminal(server: Server) -> None:
    out = run("probe", server.url.removeprefix("http://"))
    assert out.returncode == 0, out.stderr
    build = _expected_build(server)
    assert f"b{build}-" in out.stdout and "from /props" in out.stdout and "n_ctx_slot" in out.stdout


@live
def test_explain_server_fills_a_default_log(server: Server) -> None:
    """The server's own default-verbosity log has no build line: the build comes from /props."""
    assert "common_params_print_info: build" not in server.log.read_text()
    plain = json.loads(run("explain", str(server.log), "-f", "json", "--no-redact").stdout)
    assert "build" not in plain["runs"][0]["fact_sources"]
    out = run("explain", str(server.log), "--server", server.url, "-f", "json", "--no-redact")
    assert out.returncode in (0, 1), out.stderr
    data = json.loads(out.stdout)
    sources = data["runs"][0]["fact_sources"]
    assert sources["build"] == {"value": _expected_build(server), "line": None, "source": "/props"}
    assert sources["commit"]["source"] == "/props" and sources["version_usable"]["value"] is True
    assert sources["model_path"]["source"] == "log"  # the log's own line wins
    assert sources["server_models"]["source"] == "/v1/models"
    assert any("from the live server: build" in n for n in data["notes"])
    assert not any("differs from the log" in n for n in data["notes"])  # the log is this server's


@live
def test_seed_case_confirmed_with_server(server: Server) -> None:
    """A default-verbosity seed log reaches confirmed with the build from the live server."""
    before = json.loads(run("explain", str(SEED), "-f", "json").stdout)
    assert [f["confidence"] for f in before["findings"]] == ["likely"]
    out = run("explain", str(SEED), "--server", server.url, "-f", "json")
    assert out.returncode == 1  # an error-severity finding
    data = json.loads(out.stdout)
    seed = data["findings"][0]
    assert seed["rule_id"] == "spec-vision-draft-position-gap" and seed["confidence"] == "confirmed"
    assert seed["facts_used"]["build"]["source"] == "/props"
    assert f"you run b{_expected_build(server)}" in seed["version_status"]
    assert any("differs from the log" in n and "spec_type" in n for n in data["notes"])
    rich = run("explain", str(SEED), "--server", server.url)
    assert "CONFIRMED" in rich.stdout and "(from /props)" in rich.stdout


@live
def test_api_key_needed_wrong_and_right(keyed_server: Server) -> None:
    missing = run("probe", keyed_server.url)
    assert missing.returncode == 2 and "needs an API key: pass --api-key" in missing.stderr
    wrong = run("probe", keyed_server.url, "--api-key", "nope")
    assert wrong.returncode == 2 and "--api-key is wrong" in wrong.stderr
    right = run("probe", keyed_server.url, "-f", "json", env={"LLAMA_API_KEY": "s3cret-key"})
    assert right.returncode == 0, right.stderr
    assert "s3cret-key" not in right.stdout
    assert json.loads(right.stdout)["facts"]["n_slots"]["source"] == "/props"
    explained = run("explain", str(keyed_server.log), "--server", keyed_server.url, "--api-key", "s3cret-key")
    assert explained.returncode in (0, 1), explained.stderr


@live
def test_router_models(tmp_path: Path) -> None:
    """A router: its models are listed; one that is not loaded stays unloaded; a loaded one (the
    test loads it, not the probe) is asked with ?model= and its facts go to its child's run."""
    assert BINARY is not None
    model = _tiny_model(BINARY, tmp_path)
    if model is None:
        pytest.skip("no tiny model")
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.gguf").symlink_to(model)
    gen = _start(tmp_path, "router", "--models-dir", str(models), "-c", "512")
    srv = next(gen)
    try:
        result = probe(srv.url)
        assert result.facts["router_mode"].value is True and result.facts["router_mode"].source == "/props"
        assert result.facts["router_models_available"].value == 1
        assert "model_alias" not in result.facts  # a router's own alias names no model
        assert set(result.answers) == {"health", "props", "models"}  # the rest only per loaded model
        assert not result.notes
        assert [(m.id, m.status, m.facts) for m in result.models] == [("tiny", "unloaded", {})]
        assert [m.status for m in probe(srv.url).models] == ["unloaded"]  # the probe loaded nothing

        load = urllib.request.Request(
            srv.url + "/models/load", data=b'{"model": "tiny"}', headers={"Content-Type": "application/json"}
        )
        urllib.request.urlopen(load, timeout=30).close()
        deadline = time.monotonic() + 60
        while (loaded := probe(srv.url)).models[0].status != "loaded":
            assert time.monotonic() < deadline, "the router did not load the model"
            time.sleep(0.3)
        tiny = loaded.models[0]
        assert tiny.port and tiny.facts["model_path"].value.endswith("tiny.gguf")
        assert tiny.facts["model_path"].source == "/props?model=tiny"
        assert tiny.facts["build"].source == "/props?model=tiny"
        assert tiny.port in loaded.server_facts

        time.sleep(0.5)  # the child's start-up lines reach the router's log
        data = json.loads(run("facts", str(srv.log), "--server", srv.url, "-f", "json", "--no-redact").stdout)["runs"]
        child = [r for r in data if r["instance"] == tiny.port]
        assert child, [r["instance"] for r in data]
        assert child[-1]["fact_sources"]["build"]["source"] == "/props?model=tiny"
        router = [r for r in data if r["instance"] is None][-1]
        assert router["fact_sources"]["build"]["source"] == "/props"
        assert router["facts"]["router_mode"] is True
    finally:
        gen.close()
