"""Generate a realistic, large llama-server log for benchmarks (deterministic per seed).

A log is a sequence of server sessions (each a restart), in several styles:
  default   b11.7k default verbosity: progress lines, timings, draft acceptance
  lv4       the same server at -lv 4: slot selection, prompt cache, HTTP status lines
  journald  default-style lines behind `journalctl` prefixes
  ansi      default style with colour escape sequences (a terminal capture)
  legacy    a b5400 docker -t log: old multi-line timing blocks, /metrics polling
  raw       the legacy style without any prefix (a plain redirect)
Each session starts with a real startup block from sample_logs/, then thousands of
requests; every INJECT_EVERY requests a failure is spliced in, cycling through the
positive examples of every shipped rule, so every rule category fails now and then.

    python bench/gen.py --size 200M --out bench/out/bench-200M.log [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
INJECT_EVERY = 1500
STYLES = ("default", "lv4", "journald", "ansi", "legacy", "raw", "default", "lv4")


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def _head(name: str, until: str, extra: int = 1) -> list[str]:
    lines = (SAMPLES / name).read_text().splitlines()
    end = next(i for i, line in enumerate(lines) if until in line)
    return lines[: end + 1 + extra]


class Clock:
    """llama's relative `M.SS.mmm.uuu` stamp, and wall-clock stamps for wrappers."""

    def __init__(self, rng: random.Random) -> None:
        self.t = 90.0
        self.rng = rng

    def tick(self, seconds: float) -> None:
        self.t += seconds * (0.5 + self.rng.random())

    def llama(self) -> str:
        us = int(self.t * 1e6)
        return f"{us // 60_000_000}.{us // 1_000_000 % 60:02d}.{us // 1000 % 1000:03d}.{us % 1000:03d}"

    def rfc3339(self) -> str:
        s = int(self.t)
        return f"2025-05-21T{9 + s // 3600 % 14:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{int(self.t * 1e9) % 10**9:09d}Z"

    def syslog(self) -> str:
        s = int(self.t)
        return f"Nov 29 {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


def _timing(name: str, ms: float, tokens: int, tps: float) -> str:
    return (
        f"{name} = {ms:10.2f} ms / {tokens:5d} tokens ({ms / tokens:8.2f} ms per token, {tps:8.2f} tokens per second)"
    )


def request_default(r: random.Random, c: Clock, task: int, lv4: bool) -> list[str]:
    slot = r.randrange(4)
    n_prompt = r.randint(40, 4000)
    n_gen = r.randint(60, 900)
    tg = r.uniform(18, 40)
    pp = r.uniform(250, 900)
    gen_draft = int(n_gen * r.uniform(0.8, 1.2))
    acc = int(gen_draft * r.uniform(0.4, 0.8))
    p = f"id  {slot} | task {task} | "
    out: list[str] = []

    def add(level: str, body: str, dt: float = 0.0001) -> None:
        c.tick(dt)
        out.append(f"{c.llama()} {level} {body}")

    if lv4:
        for s in range(4):
            add("I", f"slot get_availabl: id  {s} | task -1 |  - skipping, slot is empty")
    add("I", f"slot get_availabl: id  {slot} | task -1 | selected slot by LRU, t_last = -1", 30)
    if lv4:
        add("I", "srv  get_availabl: updating prompt cache")
        add("I", "srv          load:  - looking for better prompt, base f_keep = -1.000, sim = 0.000")
        add("I", "srv  get_availabl: prompt cache update took 0.04 ms")
    add("I", f"slot launch_slot_: {p}processing task, is_child = 0")
    if lv4:
        add("I", f"slot   operator(): {p}new prompt, n_ctx_slot = 131072, n_keep = 0, task.n_tokens = {n_prompt}")
        add("I", f"slot init_sampler: {p}init sampler, took 0.06 ms, tokens: text = {n_prompt}, total = {n_prompt}", 1)
        add("I", f"srv  log_server_r: done request: POST /v1/chat/completions 10.0.0.{r.randrange(2, 250)} 200")
    for done in range(100, n_gen, 100):
        tg_3s = tg * r.uniform(0.95, 1.05)
        add("I", f"slot print_timing: {p}n_gen = {done:6d}, tg = {tg:6.2f} t/s, tg_3s = {tg_3s:6.2f} t/s", 3)
    pms = n_prompt / pp * 1000
    gms = n_gen / tg * 1000
    add("I", f"slot print_timing: {p}{_timing('prompt eval time', pms, n_prompt, pp)}", 2)
    add("I", f"slot print_timing: {p}       {_timing('eval time', gms, n_gen, tg)}")
    add("I", f"slot print_timing: {p}      total time = {pms + gms:10.2f} ms / {n_prompt + n_gen:5d} tokens")
    add("I", f"slot print_timing: {p}   graphs reused = {r.randint(50, 300):10d}")
    rate, mean = acc / gen_draft, r.uniform(2, 3.2)
    drafts = f"({acc:5d} accepted / {gen_draft:5d} generated), mean len = {mean:5.2f}"
    add("I", f"slot print_timing: {p}draft acceptance = {rate:.5f} {drafts}")
    if lv4:
        add("I", f"slot print_timing: {p}     acc per pos = (0.873, 0.636, 0.445)")
        stats = f"#calls(b,g,a) = {task:4d} {n_gen:6d} {n_gen:6d}, #gen tokens = {gen_draft:6d}, #acc tokens = {acc:5d}"
        add("I", f"spec common_specu: statistics        draft-mtp: {stats}")
    add("I", f"slot      release: {p}stop processing: n_tokens = {n_prompt + n_gen}, truncated = 0")
    if lv4:
        add("I", "srv  update_slots: all slots are idle")
    return out


def request_legacy(r: random.Random, c: Clock, task: int) -> list[str]:
    n_prompt, n_gen = r.randint(40, 3000), r.randint(60, 1200)
    pp, tg = r.uniform(400, 3000), r.uniform(40, 70)
    pms, gms = n_prompt / pp * 1000, n_gen / tg * 1000
    out = []
    for _ in range(r.randrange(3)):  # monitoring polls between requests
        c.tick(15)
        out.append(f"srv  log_server_r: request: GET /{r.choice(('health', 'metrics'))} 172.19.0.4 200")
    c.tick(10)
    out += [
        f"slot      release: id  0 | task {task} | stop processing: n_past = {n_prompt + n_gen}, truncated = 0",
        f"slot print_timing: id  0 | task {task} | ",
        _timing("prompt eval time", pms, n_prompt, pp),
        "       " + _timing("eval time", gms, n_gen, tg),
        f"      total time = {pms + gms:10.2f} ms / {n_prompt + n_gen:5d} tokens",
        f"srv  log_server_r: request: POST /v1/chat/completions 172.19.0.7 {r.choice((200,) * 30 + (500, 400))}",
    ]
    return out


def _strip_docker(line: str) -> str:
    return line.split(" ", 1)[1] if line[:4].isdigit() and "T" in line[:11] else line


def failures() -> list[list[str]]:
    """The positive examples of every shipped rule, in rule order."""
    sys.path.insert(0, str(ROOT))
    from llamadiag.knowledge.loader import load_knowledge

    out = []
    for loaded in load_knowledge().rules:
        for ex in loaded.rule.examples:
            if ex.expect != "none":
                out.append(ex.log.rstrip("\n").splitlines())
                break
    return out


def session(
    style: str, r: random.Random, n_requests: int, inject: Callable[[], list[str]], every: int = INJECT_EVERY
) -> list[str]:
    """One server run, as physical lines (without newlines)."""
    c = Clock(r)
    legacy = style in ("legacy", "raw")
    if legacy:
        head = _head("templates-chatml-fallback-b5400-docker.log", "HTTP server is listening", 2)
        head = [_strip_docker(line) for line in head]
    elif style == "lv4":
        head = _head("seed-b11721-fixed-lv4.log", "all slots are idle", 0)
    else:
        head = _head("seed-b11721-fixed-default.log", "listening on http", 1)
    body = list(head)
    task = 0
    for i in range(n_requests):
        body += request_legacy(r, c, task) if legacy else request_default(r, c, task, style == "lv4")
        task += r.randint(1, 200)
        if every > 0 and i % every == every // 2 and style in ("default", "lv4", "raw"):  # 0: a healthy log
            body += inject()
    if style == "legacy":
        return [f"{Clock(r).rfc3339()} {line}" for line in body]
    if style == "journald":
        prefix = f"{c.syslog()} gpu1 llama-server[{r.randint(1000, 99999)}]: "
        return [prefix + line for line in body]
    if style == "ansi":
        return [_colour(line) for line in body]
    return body


def _colour(line: str) -> str:
    stamp, _, rest = line.partition(" ")
    if rest[:2] in ("W ", "E "):
        return f"\x1b[90m{stamp}\x1b[0m \x1b[{'33' if rest[0] == 'W' else '31'}m{rest}\x1b[0m"
    return f"\x1b[90m{stamp}\x1b[0m {rest}"


def generate(size: int, out: Path, seed: int = 1, inject_every: int = INJECT_EVERY) -> int:
    r = random.Random(seed)
    pool = failures()
    turn = [0]

    def inject() -> list[str]:
        turn[0] += 1
        return pool[turn[0] % len(pool)]

    written = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="\n", buffering=1 << 20) as f:
        k = 0
        while written < size - 200:
            lines = session(STYLES[k % len(STYLES)], r, r.randint(2000, 12000), inject, inject_every)
            text = "\n".join(lines) + "\n"
            if written + len(text) > size:  # the last session ends at the size asked for
                text = text[: text.rfind("\n", 0, size - written) + 1]
            f.write(text)
            written += len(text.encode())
            k += 1
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="200M", help="target size (K, M, G suffixes)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--inject-every", type=int, default=INJECT_EVERY, help="requests between spliced-in failures (0: a healthy log)"
    )
    args = ap.parse_args()
    n = generate(parse_size(args.size), args.out, args.seed, inject_every=args.inject_every)
    print(f"{args.out}: {n / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
