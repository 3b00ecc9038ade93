"""Ask a running llama-server what it is: `llamadiag probe URL`, `explain LOG --server URL`.

GET requests only, to the endpoints rules/formats/probe.yaml lists (/health, /props, /slots,
/metrics, /v1/models); nothing that generates text, and in router mode nothing that would load a
model (only models already loaded are asked with ?model=ID). Which answer field gives which fact,
how `build_info` is read and how an answer is known to be llama-server's are all in that file;
this module is the HTTP client (stdlib http.client, the layer under urllib: it allows separate
connect and read time-outs and ignores proxy variables) and a generic JSON-path mapper.

Loopback only unless `allow_remote`; every request is bounded (connect, read, and a total for
the whole probe); what goes wrong is a `ProbeError` with one line that says what to do.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from llamadiag.engine.facts import FactValue, ServerFacts
from llamadiag.knowledge.formatmodel import ProbeFact, ProbeSpec, ProbeWhen
from llamadiag.knowledge.formats import builtin_format
from llamadiag.knowledge.patterns import compile_pattern

MISSING = object()


class ProbeError(Exception):
    """The probe could not read the server; the message is one line that says why and what to do."""


@dataclass
class Answer:
    """One endpoint's answer: status, parsed body (JSON, or metrics by name), or why there is none."""

    name: str
    path: str
    status: int | None = None
    reason: str = ""
    content_type: str = ""
    server: str = ""
    ms: float = 0.0
    data: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """A 200 answer that could be read."""
        return self.status == 200 and self.error is None


@dataclass
class ModelProbe:
    """A model of a router: its status, the child's port (its log prefix) and its facts."""

    id: str
    status: str
    port: str | None = None
    answers: dict[str, Answer] = field(default_factory=dict)
    facts: dict[str, FactValue] = field(default_factory=dict)


@dataclass
class ProbeResult:
    """What the server said: every answer, the facts (each with its endpoint), router models, notes."""

    url: str
    answers: dict[str, Answer]
    facts: dict[str, FactValue]
    models: list[ModelProbe] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def server_facts(self) -> ServerFacts:
        """The facts by instance, as `api.diagnose(server_facts=...)` takes them: the server's own
        under None, each loaded router model's under its child's port."""
        out: ServerFacts = {None: dict(self.facts)}
        for m in self.models:
            if m.port and m.facts:
                out[m.port] = dict(m.facts)
        return out

    def to_json(self) -> dict[str, Any]:
        """The probe as plain data (docs/probe.md)."""

        def facts(fs: dict[str, FactValue]) -> dict[str, Any]:
            return {k: {"value": v.value, "source": v.source} for k, v in sorted(fs.items())}

        def answers(a: dict[str, Answer]) -> list[dict[str, Any]]:
            return [
                {"endpoint": x.name, "path": x.path, "status": x.status, "ms": round(x.ms, 1), "error": x.error}
                for x in a.values()
            ]

        return {
            "url": self.url,
            "endpoints": answers(self.answers),
            "facts": facts(self.facts),
            "models": [
                {
                    "id": m.id,
                    "status": m.status,
                    "port": m.port,
                    "endpoints": answers(m.answers),
                    "facts": facts(m.facts),
                }
                for m in self.models
            ],
            "notes": self.notes,
        }


# -- the URL -----------------------------------------------------------------------------------


@dataclass
class Target:
    """The server to ask: where it listens, and a path prefix when a proxy serves it under one."""

    scheme: str
    host: str
    port: int
    prefix: str  # a path prefix (a server behind a proxy under /llama/)

    @property
    def base(self) -> str:
        """The server's address as a URL (scheme, host, port, path prefix)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.prefix}"


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine without a name lookup: localhost or a loopback address."""
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_url(url: str, allow_remote: bool = False) -> Target:
    """The server address of `url` (http:// is assumed; the port defaults to 8080, llama-server's).

    Raises ProbeError for a URL that is not http(s), and for a host that is not loopback unless
    `allow_remote` (a probe sends the API key and reads the server's configuration).
    """
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https"):
        raise ProbeError(f"{url}: only http:// and https:// URLs can be probed")
    if not parts.hostname:
        raise ProbeError(f"{url}: no host in the URL (e.g. http://127.0.0.1:8080)")
    try:
        port = parts.port or (443 if parts.scheme == "https" and ":" not in parts.netloc else 8080)
    except ValueError as exc:
        raise ProbeError(f"{url}: {exc}") from exc
    if not allow_remote and not is_loopback(parts.hostname):
        raise ProbeError(
            f"{url}: {parts.hostname} is not a loopback address; probing another machine needs --allow-remote "
            "(the probe sends your API key there and reads the server's settings)"
        )
    return Target(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))


# -- HTTP ---------------------------------------------------------------------------------------


class _Client:
    """GET requests to one server, each bounded, all together bounded by the total time-out."""

    def __init__(self, target: Target, spec: ProbeSpec, api_key: str | None) -> None:
        self.target = target
        self.spec = spec
        self.api_key = api_key
        self.deadline = time.monotonic() + spec.timeouts.total_s

    def _left(self, limit: float) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ProbeError(
                f"{self.target.base}: the probe took longer than {self.spec.timeouts.total_s:g} s in all "
                "(the server answers very slowly: busy or overloaded?)"
            )
        return min(limit, left)

    def get(self, name: str, path: str) -> Answer:
        """One GET; transport failures raise ProbeError, HTTP answers of any status return."""
        t = self.target
        answer = Answer(name, path)
        started = time.monotonic()
        conn: http.client.HTTPConnection
        connect_s = self._left(self.spec.timeouts.connect_s)
        if t.scheme == "https":
            conn = http.client.HTTPSConnection(t.host, t.port, timeout=connect_s, context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(t.host, t.port, timeout=connect_s)
        where = t.base + path
        try:
            try:
                conn.connect()
            except TimeoutError as exc:
                raise ProbeError(
                    f"{t.base}: no connection within {connect_s:g} s (connect time-out): the host is down "
                    "or a firewall drops the packets"
                ) from exc
            assert conn.sock is not None
            conn.sock.settimeout(self._left(self.spec.timeouts.read_s))
            headers = {"User-Agent": self.spec.user_agent, "Accept": "application/json, text/plain"}
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            conn.request("GET", t.prefix + path, headers=headers)
            resp = conn.getresponse()
            answer.status, answer.reason = resp.status, resp.reason
            answer.content_type = resp.getheader("Content-Type", "") or ""
            answer.server = resp.getheader("Server", "") or ""
            location = resp.getheader("Location")
            body = self._read(resp, where)
        except ProbeError:
            raise
        except ConnectionRefusedError as exc:
            raise ProbeError(
                f"{t.base}: connection refused: no server listens there (is llama-server running, "
                "with this --host and --port?)"
            ) from exc
        except TimeoutError as exc:
            raise ProbeError(
                f"{where}: connected, but no answer within {self.spec.timeouts.read_s:g} s (read time-out): "
                "the server is hung or busy, or this port is not an HTTP server"
            ) from exc
        except socket.gaierror as exc:
            raise ProbeError(f"{t.base}: cannot resolve {t.host}: {exc.strerror or exc}") from exc
        except ssl.SSLError as exc:
            raise ProbeError(
                f"{t.base}: TLS failed ({exc.reason or exc}); llama-server speaks plain http:// unless built with SSL"
            ) from exc
        except (http.client.BadStatusLine, http.client.RemoteDisconnected) as exc:
            raise ProbeError(f"{where}: the answer is not HTTP ({type(exc).__name__}): not llama-server") from exc
        except (http.client.HTTPException, OSError) as exc:
            raise ProbeError(f"{where}: {getattr(exc, 'strerror', None) or exc}") from exc
        finally:
            conn.close()
        answer.ms = (time.monotonic() - started) * 1000
        if answer.status is not None and 300 <= answer.status < 400:
            answer.error = f"redirects to {location or '?'}"
            return answer
        endpoint = next(e for e in self.spec.endpoints if e.name == name)
        text = body.decode("utf-8", "replace")
        if endpoint.kind == "prometheus" and answer.status == 200:
            answer.data = parse_metrics(text)
            return answer
        try:
            answer.data = json.loads(text) if text.strip() else None
        except ValueError:
            kind = answer.content_type.split(";")[0] or "no content type"
            answer.error = f"answered {kind}, not JSON"
            return answer
        if answer.status != 200:
            answer.error = error_message(answer)
        return answer

    def _read(self, resp: http.client.HTTPResponse, where: str) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            self._left(self.spec.timeouts.read_s)
            chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > self.spec.max_body_bytes:
                raise ProbeError(
                    f"{where}: the answer is over {self.spec.max_body_bytes // 1048576} MiB: not llama-server"
                )
            chunks.append(chunk)


def error_message(answer: Answer) -> str:
    """The status of a failed answer, with llama-server's own error message when it sent one."""
    message = ""
    data = answer.data
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        message = str(data["error"].get("message", ""))
    elif isinstance(data, dict) and isinstance(data.get("error"), str):
        message = data["error"]
    return f"{answer.status} {answer.reason}" + (f": {message}" if message else "")


def parse_metrics(text: str) -> dict[str, float | int]:
    """Prometheus text format: each sample line without labels, by metric name."""
    out: dict[str, float | int] = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or "{" in line:
            continue
        name, _, raw = line.partition(" ")
        try:
            value = float(raw.split()[0])
        except (ValueError, IndexError):
            continue
        out[name] = int(value) if value.is_integer() else value
    return out


# -- mapping answers to facts ---------------------------------------------------------------------


def resolve(data: Any, path: str) -> tuple[list[Any], bool]:
    """The values at a '/'-separated path (`*` every list item, `#` a list's length, a number an
    item); the second value says whether the path fanned out over a list."""
    nodes = [data]
    fanned = False
    for part in path.split("/") if path else []:
        nxt: list[Any] = []
        for node in nodes:
            if part == "*" and isinstance(node, list):
                nxt.extend(node)
                fanned = True
            elif part == "#" and isinstance(node, list):
                nxt.append(len(node))
            elif part.isdigit() and isinstance(node, list):
                if int(part) < len(node):
                    nxt.append(node[int(part)])
            elif isinstance(node, dict) and part in node:
                nxt.append(node[part])
        nodes = nxt
    return nodes, fanned


def _when(when: ProbeWhen | None, answers: dict[str, Answer]) -> bool:
    if when is None:
        return True
    answer = answers.get(when.endpoint)
    if answer is None or not answer.ok:
        return False
    values, _ = resolve(answer.data, when.path)
    if not values:
        return when.missing
    return not when.missing and values[0] == when.equals


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def map_fact(m: ProbeFact, answers: dict[str, Answer]) -> Any:
    """The value one mapping gives from the answers, or MISSING."""
    answer = answers.get(m.endpoint)
    if answer is None or not answer.ok or not _when(m.when, answers):
        return MISSING
    values, _ = resolve(answer.data, m.path)
    out: list[Any] = []
    for value in values:
        if value is None or any(_same(value, s) for s in m.skip):
            continue
        if m.split and isinstance(value, str):
            value = value.split(m.split)[0].strip()
        if m.values is not None:
            key = str(value).lower()
            if key not in m.values:
                continue
            value = m.values[key]
        out.append(value)
    if m.aggregate == "any":
        return any(bool(v) for v in out) if values else MISSING
    if m.aggregate == "count_true":
        return sum(1 for v in out if v is True) if values else MISSING
    if m.aggregate == "list":
        return out if out else MISSING
    return out[0] if out else MISSING


def extract(spec: ProbeSpec, answers: dict[str, Answer]) -> dict[str, FactValue]:
    """Every fact the answers give, each with the path of the answer it came from. The first
    mapping of a fact wins; list facts collect the values of all their mappings."""
    facts: dict[str, FactValue] = {}
    version = answers.get(spec.version.endpoint)
    if version is not None and version.ok:
        raw, _ = resolve(version.data, spec.version.path)
        m = compile_pattern(spec.version.regex).search(str(raw[0]).strip()) if raw else None
        if m is not None:
            for key, value in m.groupdict().items():
                if value is not None:
                    facts[key] = FactValue(value, None, version.path)
    for mapping in spec.facts:
        value = map_fact(mapping, answers)
        if value is MISSING:
            continue
        source = answers[mapping.endpoint].path
        current = facts.get(mapping.fact)
        if current is None:
            facts[mapping.fact] = FactValue(value, None, source)
        elif isinstance(current.value, list) and isinstance(value, list):
            current.value.extend(v for v in value if v not in current.value)
    return facts


def looks_like_llama_server(spec: ProbeSpec, answer: Answer) -> bool:
    """Whether an answer carries a field only llama-server's answer has (probe.yaml identify)."""
    return isinstance(answer.data, dict) and any(f in answer.data for f in spec.identify.fields)


# -- the probe -----------------------------------------------------------------------------------


def probe(
    url: str,
    *,
    api_key: str | None = None,
    allow_remote: bool = False,
    spec: ProbeSpec | None = None,
) -> ProbeResult:
    """Read a running llama-server's endpoints and map what they say to facts.

    Raises ProbeError (one line) for a server that is down, slow, not llama-server (HTML, a
    proxy's error page, JSON without llama-server's fields), that wants an API key, or a URL
    that is not loopback without `allow_remote`.
    """
    spec = spec or builtin_format(ProbeSpec)
    if api_key is None:  # as the server itself would take it
        api_key = next((os.environ[name] for name in spec.api_key_env if os.environ.get(name)), None)
    target = parse_url(url, allow_remote)
    client = _Client(target, spec, api_key)
    answers: dict[str, Answer] = {}
    notes: list[str] = []
    for endpoint in spec.endpoints:
        if endpoint.per_model and _is_router(spec, answers):
            continue  # a router answers these only for one model: asked per loaded model below
        answer = client.get(endpoint.name, endpoint.path)
        answers[endpoint.name] = answer
        if endpoint.name == spec.identify.endpoint or endpoint.required:
            _check_identity(spec, target, answer, api_key)
        elif not answer.ok:
            if answer.status in (401, 403):
                raise ProbeError(_auth_message(target, answer, api_key))
            if answer.status == 503 and isinstance(answer.data, dict) and "error" in answer.data:
                raise ProbeError(
                    f"{target.base}{answer.path}: {error_message(answer)}: the server is still loading "
                    "the model; probe again when /health answers 200"
                )
            notes.append(f"{answer.path}: {answer.error or answer.status}")
    result = ProbeResult(target.base, answers, extract(spec, answers), notes=notes)
    if _is_router(spec, answers):
        _router_models(spec, client, result)
    return result


def _is_router(spec: ProbeSpec, answers: dict[str, Answer]) -> bool:
    r = spec.router
    gate = answers.get(r.when_endpoint)
    if gate is None or not gate.ok:
        return False
    role, _ = resolve(gate.data, r.when_path)
    return bool(role) and role[0] == r.when_equals


def _auth_message(target: Target, answer: Answer, api_key: str | None) -> str:
    where = f"{target.base}{answer.path}"
    if api_key:
        return f"{where}: {error_message(answer)}: the server refused the API key: --api-key is wrong"
    return f"{where}: {error_message(answer)}: the server needs an API key: pass --api-key KEY"


def _check_identity(spec: ProbeSpec, target: Target, answer: Answer, api_key: str | None) -> None:
    where = f"{target.base}{answer.path}"
    by = f" (server: {answer.server})" if answer.server else ""
    if answer.status in (401, 403):
        raise ProbeError(_auth_message(target, answer, api_key))
    if answer.status is not None and 300 <= answer.status < 400:
        raise ProbeError(f"{where}: {answer.error}{by}: a proxy or login page in front; give the server's own address")
    if answer.status == 503 and isinstance(answer.data, dict) and "error" in answer.data:
        raise ProbeError(f"{where}: {error_message(answer)}: the server is still loading; probe again in a moment")
    if answer.status in (502, 503, 504):
        raise ProbeError(
            f"{where}: {answer.status} {answer.reason}{by}: a proxy answered; "
            "the llama-server behind it is down or slow"
        )
    if answer.error and "not JSON" in answer.error:
        raise ProbeError(f"{where}: {answer.error}{by}: not llama-server (another web server, or a proxy/login page)")
    if answer.status != 200:
        raise ProbeError(f"{where}: {answer.error or answer.status}{by}: not llama-server, or a proxy in front of it")
    if not looks_like_llama_server(spec, answer):
        fields = ", ".join(spec.identify.fields)
        raise ProbeError(
            f"{where}: JSON without llama-server's fields ({fields}){by}: not llama-server, or a proxy that "
            "rewrites its answers"
        )


def _router_models(spec: ProbeSpec, client: _Client, result: ProbeResult) -> None:
    r = spec.router
    listing = result.answers.get(r.endpoint)
    if listing is None or not listing.ok:
        return
    entries, _ = resolve(listing.data, r.models)
    for entry in entries[0] if entries and isinstance(entries[0], list) else []:
        ids, _ = resolve(entry, r.id)
        status, _ = resolve(entry, r.status)
        args, _ = resolve(entry, r.args)
        model = ModelProbe(str(ids[0]) if ids else "?", str(status[0]) if status else "?")
        argv = args[0] if args and isinstance(args[0], list) else []
        for i, arg in enumerate(argv[:-1]):
            if arg in r.port_flag and str(argv[i + 1]) != "0":  # 0: not started yet
                model.port = str(argv[i + 1])
        result.models.append(model)
        if model.status not in r.loaded:
            continue  # asking it with ?model= would load it
        answers: dict[str, Answer] = {}
        for endpoint in spec.endpoints:
            if endpoint.per_model:
                answer = client.get(endpoint.name, f"{endpoint.path}?model={quote(model.id, safe='')}")
                answers[endpoint.name] = answer
                if not answer.ok:
                    result.notes.append(f"{answer.path}: {answer.error or answer.status}")
        answers[r.endpoint] = Answer(r.endpoint, f"{listing.path}", 200, data={r.models: [entry]})
        model.answers = answers
        model.facts = extract(spec, answers)
