#!/usr/bin/env python3
"""Run the scenarios against the real llama-server and write the corpus.

    python tests/realserver/capture.py                   # every scenario -> sample_logs/real/
    python tests/realserver/capture.py -s port-in-use    # only some
    python tests/realserver/capture.py --out DIR         # elsewhere (test_live.py does this)

For each scenario: make its tiny models, start the server on 127.0.0.1 and a free port with the
models folder as working directory, capture stdout+stderr (merged, in order) as the log, wait for
/health (bounded), send the requests (loopback, time-outs), stop the server (SIGTERM, then
SIGKILL), and record the provenance (build, commit, command line, recipes, requests, statuses).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import build  # noqa: E402
import scenarios as sc  # noqa: E402

ROOT = HERE.parent.parent
CORPUS = ROOT / "sample_logs" / "real"
BASE_ARGS = ["--host", "127.0.0.1", "--port", "{port}", "-t", "2"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(port: int, req: sc.Req) -> tuple[int, str]:
    data = req.raw if req.raw is not None else (json.dumps(req.body).encode() if req.body is not None else None)
    headers = {"Content-Type": "application/json", **req.headers}
    r = urllib.request.Request(f"http://127.0.0.1:{port}{req.path}", data=data, method=req.method, headers=headers)
    try:
        with urllib.request.urlopen(r, timeout=req.timeout_s) as resp:
            return resp.status, resp.read(400).decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read(400).decode("utf-8", "replace")
    except Exception as e:
        return 0, f"{type(e).__name__}: {e}"


def wait_health(proc: subprocess.Popen, port: int, timeout_s: float) -> str:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            return f"exited {proc.returncode}"
        code, _ = http(port, sc.Req("GET", "/health", timeout_s=2))
        if code == 200:
            return "ready"
        time.sleep(0.25)
    return "timeout"


def model_recipes(names: list[str]) -> dict[str, str]:
    import tinymodels

    described: dict[str, str] = {}
    current = None
    for ln in (tinymodels.__doc__ or "").splitlines():
        m = re.match(r"^  ([\w-]+)\s{2,}(.*)$", ln)
        if m:
            current = m.group(1)
            described[current] = m.group(2).strip()
        elif current and ln.startswith("      ") and ln.strip():
            described[current] += " " + ln.strip()
        else:
            current = None
    out = {}
    for n in names:
        if n in tinymodels.RECIPES:
            r = tinymodels.RECIPES[n]
            out[n] = (f"{r['arch']}, vocab ggml-vocab-{r['vocab']}.gguf, n_embd {r['n_embd']}, "
                      f"{r['n_head']} heads, n_ff {r['n_ff']}, {r['n_layer']} blocks, ctx {r['ctx']}, f16 random")
        else:
            out[n] = described.get(n, n)
    return out


def ensure_models(models: Path) -> None:
    """Write the tiny models with a Python that has numpy (this one, else python3)."""
    try:
        import numpy  # noqa: F401

        exe = sys.executable
    except ImportError:
        exe = "python3"
    subprocess.run([exe, str(HERE / "tinymodels.py"), "--out", str(models)], check=True,
                   stdout=subprocess.DEVNULL)


def run_scenario(s: sc.Scenario, exe: Path, models: Path, log_path: Path) -> dict:
    port = free_port()
    if s.router_dir:
        rdir = models / "router"
        rdir.mkdir(exist_ok=True)
        for n in s.router_dir:
            link = rdir / f"{n}.gguf"
            if not link.exists():
                link.symlink_to(models / f"{n}.gguf")
    for d in s.make_dirs:  # empty folders a scenario names (an empty --models-dir, -m on a folder)
        (models / d).mkdir(exist_ok=True)
    base = BASE_ARGS if s.host is None else [s.host if a == "127.0.0.1" else a for a in BASE_ARGS]
    argv = [a.replace("{port}", str(port)) for a in [*s.args, *base]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
    cache = tempfile.mkdtemp(prefix="llamadiag-cache-")
    env["LLAMA_CACHE"] = cache
    env["HF_HOME"] = cache
    blocker = None
    if s.occupy_port:
        blocker = socket.socket()
        blocker.bind(("127.0.0.1", port))
        blocker.listen(1)

    def limits() -> None:
        os.setsid()
        if s.ulimit_v_kb:
            b = s.ulimit_v_kb * 1024
            resource.setrlimit(resource.RLIMIT_AS, (b, b))
        if s.ulimit_l_kb:
            b = s.ulimit_l_kb * 1024
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (b, b))

    t0 = time.time()
    results = []
    with open(log_path, "wb") as logf:
        proc = subprocess.Popen([str(exe), *argv], cwd=models, stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, preexec_fn=limits)
        try:
            state = wait_health(proc, port, s.startup_timeout_s if s.ready else 30.0)
            if state == "ready":
                for req in s.requests:
                    if req.parallel > 1:
                        with cf.ThreadPoolExecutor(req.parallel) as pool:
                            got = list(pool.map(lambda r: http(port, r), [req] * req.parallel))
                    else:
                        got = [http(port, req)]
                    results.append({
                        "request": f"{req.method} {req.path}" + (f" x{req.parallel}" if req.parallel > 1 else ""),
                        "body": _short(req.body) if req.raw is None else req.raw.decode("utf-8", "replace"),
                        **({"headers": req.headers} if req.headers else {}),
                        "status": [g[0] for g in got],
                        "response": _shorten(got[0][1], 240),
                    })
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
            if blocker:
                blocker.close()
    shown = ["llama-server", *argv]
    if s.ulimit_v_kb:
        shown = ["ulimit", "-v", str(s.ulimit_v_kb), ";", *shown]
    if s.ulimit_l_kb:
        shown = ["ulimit", "-l", str(s.ulimit_l_kb), ";", *shown]
    return {
        "scenario": s.name,
        "build": build.BUILD_NUMBER,
        "commit": build.COMMIT,
        "sdist": f"{build.SDIST}=={build.SDIST_VERSION}",
        "command_line": " ".join(shown),
        "cwd": "the tiny-models folder (tests/realserver/tinymodels.py)",
        "models": model_recipes(s.recipes),
        "provokes": s.provokes,
        "startup": state,
        "exit_code": proc.returncode,
        "requests": results,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
        "wall_s": round(time.time() - t0, 1),
    }


def _shorten(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "..."


def _short(body):
    if body is None:
        return None
    text = json.dumps(body)
    return text if len(text) <= 300 else text[:280] + f"... ({len(text)} chars)"


_MASKS = [
    (re.compile(r"\x1b\[[0-9;]*m"), ""),
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"(?:/[\w.+-]+)+/?"), "<path>"),
    (re.compile(r"\b[0-9a-f]{7,40}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)*"), "N"),
]


def line_template(line: str) -> str:
    """A log line with colours, paths, hashes and numbers masked and padding collapsed: its shape."""
    for rx, rep in _MASKS:
        line = rx.sub(rep, line)
    return " ".join(line.split())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-s", "--scenario", action="append", help="only these scenarios (repeatable)")
    ap.add_argument("--out", type=Path, default=CORPUS, help="folder for the logs and provenance.yaml")
    args = ap.parse_args()
    exe = build.server_path()
    if not exe.exists():
        print(f"capture: no llama-server at {exe}; run tests/realserver/build.py first", file=sys.stderr)
        return 2
    models = build.build_dir() / "models"
    ensure_models(models)
    chosen = [sc.BY_NAME[n] for n in args.scenario] if args.scenario else sc.SCENARIOS
    args.out.mkdir(parents=True, exist_ok=True)
    prov_path = args.out / "provenance.yaml"
    import yaml

    prov = {}
    if prov_path.exists():
        prov = {p["scenario"]: p for p in (yaml.safe_load(prov_path.read_text()) or {}).get("logs", [])}
    for s in chosen:
        rec = run_scenario(s, exe, models, args.out / f"{s.name}.log")
        prov[s.name] = rec
        print(f"{s.name}: {rec['startup']}, exit {rec['exit_code']}, "
              f"statuses {[r['status'] for r in rec['requests']]}", flush=True)
    doc = {
        "about": "Provenance of the logs captured from the real llama-server (tests/realserver/capture.py).",
        "logs": [prov[k] for k in sorted(prov)],
    }
    prov_path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110))
    return 0


if __name__ == "__main__":
    sys.exit(main())
