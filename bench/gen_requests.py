"""A second, independent benchmark generator: request traffic as each era prints it.

bench/gen.py writes the per-request lines its author knew (timings, progress, draft
acceptance, HTTP status). This generator is written from the request-lifecycle table of
the log-format reference (../shared/reference/llama-server-log-format.md beside the checkout, §4, §10) and
from the real-binary logs in sample_logs/real/, so that a speed-up tuned to one of them
shows up as a slow shape in the other. Per request, as the era prints it:

- `Chat format: ...` (b4599-b9828 at INFO), slot selection (`- skipping, slot is empty`,
  by LCS similarity (b4007-b6722), by LCP similarity, by LRU), `launch_slot_`, the
  prompt-cache lines (`updating prompt cache`, `- looking for better prompt`,
  `- cache state: ...`, `- prompt 0x...: ... tokens, checkpoints: ...`, `prompt cache
  update took`), context checkpoints (created / restored / erasing old), the cache trim,
  prompt progress, generation progress (`n_decoded` / `n_gen ... tg_3s`), the timings as
  one multi-line block (<= b9229) or four prefixed lines, draft acceptance and the
  speculative statistics line, release, `all slots are idle`, and the HTTP status line
  (`request:` with `/health` polling before b7808, `done request:` after);
- an idle slot saved to the prompt cache (b9829+) now and then.

Shapes (`--shape`): the era of the server and the wrapper around its lines:

  b5060         no prefix (b3761-b8595 default), /health polling, lcs similarity
  b5060-prefix  the same with `--log-prefix --log-timestamps`
  b7003-docker  `docker logs -t` around a b7003 server, LCP similarity, checkpoints
  b9700-lv4     b9151-b9828 at -lv 4: prefix + timestamps on by default, Chat format
  b9700-iso     the same inside `journalctl -o short-iso`
  b11-lv4       b9829+ at -lv 4 (cmn/spec tags, `n_gen ... tg_3s`)
  b11-journald  b9829+ default verbosity inside `journalctl` short format
  mixed         sessions of every shape above in turn

Each session (a restart) opens with a real startup block taken from a sample log of its
era; every INJECT_EVERY requests a real failing log from sample_logs/real/ is spliced in
whole (a crash and restart). Deterministic per seed.

    python bench/gen_requests.py --size 200M --shape mixed --out bench/out/req-mixed-200M.log
"""

# ruff: noqa: E501  (each log line is written as one f-string, as it appears in a log)
from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen import parse_size  # noqa: E402  (the size syntax only; nothing of gen.py's lines)

ROOT = HERE.parent
SAMPLES = ROOT / "sample_logs"
INJECT_EVERY = 2500
ERAS = ("b5060", "b7003", "b9700", "b11")
SHAPES = {
    "b5060": ("b5060", "none", False),
    "b5060-prefix": ("b5060", "prefix", False),
    "b7003-docker": ("b7003", "docker", False),
    "b9700-lv4": ("b9700", "none", True),
    "b9700-iso": ("b9700", "iso", True),
    "b11-lv4": ("b11", "none", True),
    "b11-journald": ("b11", "journald", False),
}
# startup block of each era: (sample log, the line that ends the startup)
STARTUP = {
    "b5060": ("templates-chatml-fallback-b5400-docker.log", "starting the main loop"),
    "b7003": ("context-batch-positions-b7003-docker-t.log", "starting the main loop"),
    "b9700": ("speculative-near-miss-mtp-checkpoints-b9700.log", "all slots are idle"),
    "b11": ("real/healthy-lv4.log", "listening on http"),
}
DOCKER_TS = r"^\d{4}-\d\d-\d\dT[\d:.]+Z "


class Clock:
    """Seconds since the server started, printed as llama's relative stamp or a wall clock."""

    def __init__(self, rng: random.Random) -> None:
        self.t, self.rng = 30.0, rng

    def step(self, seconds: float) -> None:
        self.t += seconds * (0.3 + 1.4 * self.rng.random())

    def rel(self) -> str:
        us = int(self.t * 1e6)
        return f"{us // 60_000_000}.{us // 1_000_000 % 60:02d}.{us // 1000 % 1000:03d}.{us % 1000:03d}"

    def iso(self) -> str:
        s = int(self.t) + 8 * 3600
        return f"2026-08-28T{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}+08:00"

    def docker(self) -> str:
        s = int(self.t) + 9 * 3600
        frac = int(self.t * 1e9) % 10**9
        return f"2025-11-17T{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{frac:09d}Z"

    def syslog(self) -> str:
        s = int(self.t)
        return f"Aug 14 {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


class Server:
    """One server session of an era: what it prints per request (messages only; the
    level letter is returned with each so that the wrapper can add the prefix)."""

    def __init__(self, era: str, lv4: bool, rng: random.Random) -> None:
        self.era, self.lv4, self.r = era, lv4, rng
        self.slots = rng.choice((1, 2, 4, 4, 8))
        self.spec = era in ("b9700", "b11") and rng.random() < 0.6
        self.task = 0
        self.cached = [0] * self.slots  # prompt tokens each slot holds
        self.prompts = 0

    def request(self) -> Iterator[tuple[str, str]]:
        """(level, message) of one request, in order."""
        r, era, lv4 = self.r, self.era, self.lv4
        task, self.task = self.task, self.task + r.choice((1, 2, 2, 3))
        i = r.randrange(self.slots)
        n_prompt = r.randint(20, 9000)
        n_gen = r.randint(1, 1200)
        pp, tg = r.uniform(300, 2500), r.uniform(15, 140)
        old = era in ("b5060", "b7003")

        def slot(func: str, tsk: int, text: str) -> tuple[str, str]:
            return "I", f"slot {func:>12}: id {i:2d} | task {tsk} | {text}"

        if era != "b11" or lv4:
            yield (
                "I",
                f"srv  params_from_: Chat format: {r.choice(('Content-only', 'peg-native', 'Hermes 2 Pro', 'Generic'))}",
            )
        if era != "b5060" and lv4:
            for j in range(self.slots):
                if j != i and self.cached[j] == 0:
                    yield "I", f"slot get_availabl: id {j:2d} | task -1 |  - skipping, slot is empty"
        sim = r.random()
        if self.cached[i] and sim < 0.6:
            if era == "b5060":
                text = f"selected slot by lcs similarity, lcs_len = {int(n_prompt * sim)}, similarity = {sim:.3f} (> 0.100 thold)"
            elif era in ("b7003", "b9700"):
                text = (
                    f"selected slot by LCP similarity, sim_best = {sim:.3f} (> 0.100 thold), f_keep = {r.random():.3f}"
                )
            else:
                text = f"selected slot by LCP similarity, f_sim_best = {sim:.3f} (> 0.100 thold), f_keep = {r.random():.3f}"
        else:
            text = f"selected slot by LRU, t_last = {-1 if not self.cached[i] else r.randint(10**6, 10**9)}"
        yield slot("get_availabl", -1, text)
        if era in ("b9700", "b11") and (lv4 or era == "b9700"):
            yield "I", "srv  get_availabl: updating prompt cache"
            yield (
                "I",
                f"srv          load:  - looking for better prompt, base f_keep = {r.choice((-1.0, r.random())):.3f}, sim = {sim:.3f}",
            )
            yield (
                "I",
                (
                    f"srv        update:  - cache state: {self.prompts} prompts, {self.prompts * 37.2:.3f} MiB "
                    "(limits: 8192.000 MiB, 131072 tokens, 8589934592 est)"
                ),
            )
            for _ in range(min(self.prompts, 3)):
                yield (
                    "I",
                    (
                        f"srv        update:    - prompt 0x{r.getrandbits(44):012x}: {r.randint(20, 9000):7d} tokens, "
                        f"checkpoints: {r.randint(0, 3):2d}, {r.uniform(0.1, 300):10.3f} MiB"
                    ),
                )
            yield "I", f"srv  get_availabl: prompt cache update took {r.uniform(0.01, 0.2):.2f} ms"
            self.prompts = min(self.prompts + 1, 40)
        yield slot("launch_slot_", task, "processing task" if old else "processing task, is_child = 0")
        if old or lv4:
            key = "n_prompt_tokens" if era == "b5060" else "task.n_tokens"
            yield slot(
                "update_slots" if old else "operator()",
                task,
                f"new prompt, n_ctx_slot = 32768, n_keep = 0, {key} = {n_prompt}",
            )
        keep = min(self.cached[i], int(n_prompt * sim))
        if era == "b5060":
            yield slot("update_slots", task, f"kv cache rm [{keep}, end)")
        elif era in ("b7003", "b9700") or lv4:
            yield slot("update_slots", task, f"n_tokens = {keep}, memory_seq_rm [{keep}, end)")
        if era in ("b7003", "b9700", "b11") and r.random() < 0.3:
            if r.random() < 0.5:
                yield slot(
                    "update_slots",
                    task,
                    f"restored context checkpoint (pos_min = {keep}, pos_max = {keep + 7}, size = 62.813 MiB)",
                )
            yield slot(
                "update_slots",
                task,
                f"created context checkpoint {r.randint(1, 32)} of 32 (pos_min = {n_prompt - 512}, pos_max = {n_prompt - 1}, size = 62.813 MiB)",
            )
            if r.random() < 0.2:
                yield (
                    "W",
                    f"slot update_slots: id {i:2d} | task {task} | erasing old context checkpoint (pos_min = 0, pos_max = 511, size = 62.813 MiB)",
                )
        done_p = 0
        while n_prompt - done_p > 2048:
            done_p += 2048
            if era == "b5060":
                yield slot(
                    "update_slots",
                    task,
                    f"prompt processing progress, n_past = {done_p}, n_tokens = 2048, progress = {done_p / n_prompt:.6f}",
                )
            elif era in ("b7003",):
                yield slot(
                    "update_slots",
                    task,
                    f"prompt processing progress, n_tokens = {done_p}, batch.n_tokens = 2048, progress = {done_p / n_prompt:.6f}",
                )
            elif done_p / pp > 3:
                yield slot(
                    "print_timing",
                    task,
                    f"prompt processing, n_tokens = {done_p:6d}, progress = {done_p / n_prompt:.2f}, t = {done_p / pp:7.2f} s / {pp:.2f} tokens per second",
                )
        if era == "b5060":
            yield slot("update_slots", task, f"prompt done, n_past = {n_prompt}, n_tokens = {n_prompt - done_p}")
        elif era == "b7003":
            yield slot(
                "update_slots",
                task,
                f"prompt processing done, n_tokens = {n_prompt}, batch.n_tokens = {n_prompt - done_p}",
            )
        for g in range(100, n_gen, 100 if era == "b9700" else 130):
            if era == "b9700":
                yield slot("print_timing", task, f"n_decoded = {g:6d}, tg = {tg:6.2f} t/s")
            elif era == "b11":
                yield slot(
                    "print_timing",
                    task,
                    f"n_gen = {g:6d}, tg = {tg:6.2f} t/s, tg_3s = {tg * r.uniform(0.95, 1.05):6.2f} t/s",
                )
        p_ms, g_ms = n_prompt / pp * 1000, n_gen / tg * 1000
        prompt_line = f"prompt eval time = {p_ms:10.2f} ms / {n_prompt:5d} tokens ({p_ms / n_prompt:8.2f} ms per token, {pp:8.2f} tokens per second)"
        eval_line = f"       eval time = {g_ms:10.2f} ms / {n_gen:5d} tokens ({g_ms / n_gen:8.2f} ms per token, {tg:8.2f} tokens per second)"
        total_line = f"      total time = {p_ms + g_ms:10.2f} ms / {n_prompt + n_gen:5d} tokens"
        gen_d = int(n_gen * r.uniform(0.7, 1.3))
        acc = int(gen_d * r.uniform(0.3, 0.85))
        if old:
            yield slot("print_timing", task, "")
            yield "", prompt_line
            yield "", eval_line
            yield "", total_line
        else:
            yield slot("print_timing", task, prompt_line)
            yield slot("print_timing", task, eval_line)
            yield slot("print_timing", task, total_line)
            yield slot("print_timing", task, f"   graphs reused = {r.randint(0, n_gen):10d}")
        if self.spec:
            mean = f" , mean len = {1 + acc / max(gen_d, 1) * 3:5.2f}" if era == "b11" else ""
            yield slot(
                "print_timing",
                task,
                f"draft acceptance = {acc / max(gen_d, 1):.5f} ({acc:5d} accepted / {gen_d:5d} generated){mean.replace(' ,', ',')}",
            )
            stat = f"statistics draft-mtp: #calls(b,g,a) = {1:4d} {gen_d // 3:6d} {gen_d // 3:6d}, #gen drafts = {gen_d // 3:6d}, #acc drafts = {acc // 3:6d}, #gen tokens = {gen_d:6d}, #acc tokens = {acc:6d}"
            if era == "b11":
                if lv4:
                    yield "I", f"spec common_specu: {stat}"
            else:
                yield "I", stat
        n_tok = keep + n_prompt + n_gen
        key = "n_past" if era == "b5060" else "n_tokens"
        yield slot("release", task, f"stop processing: {key} = {n_tok}, truncated = 0")
        self.cached[i] = n_tok
        if era == "b11" and lv4 and r.random() < 0.2:
            yield "I", f"slot process_sing: id {i:2d} | task -1 | saving idle slot to prompt cache"
        if era != "b11" or lv4:
            if era in ("b5060", "b7003"):
                path = r.choice(("/v1/chat/completions", "/v1/chat/completions", "/completion", "/v1/completions"))
                word = "request" if era == "b5060" else "done request"
                yield "I", f"srv  log_server_r: {word}: POST {path} 10.0.{r.randint(0, 3)}.{r.randint(2, 250)} 200"
            elif lv4:
                yield "I", f"srv  log_server_r: done request: POST /v1/chat/completions 172.19.0.{r.randint(2, 40)} 200"
            yield "I", "srv  update_slots: all slots are idle"

    def health(self) -> Iterator[tuple[str, str]]:
        """A healthcheck poll: logged only before b7808 (section 4)."""
        if self.era == "b5060":
            yield "I", f"srv  log_server_r: request: GET /health 127.0.0.1 {200 if self.r.random() < 0.98 else 503}"


def wrap(kind: str, era: str, clock: Clock, prefix_on: bool) -> Callable[[str, str], str]:
    """A line from (level, message): llama's own prefix where the era prints one, then
    the wrapper of the shape."""

    def line(level: str, message: str) -> str:
        text = message
        if level and prefix_on:
            text = f"{clock.rel()} {level} {message}"
        if kind == "docker":
            return f"{clock.docker()} {text}"
        if kind == "iso":
            return f"{clock.iso()} ai llama-server[55646]: {text}"
        if kind == "journald":
            return f"{clock.syslog()} gpu-box llama-server[1187]: {text}"
        return text

    return line


def startup(era: str, kind: str, clock: Clock) -> list[str]:
    """The real startup block of the era, rewrapped for the shape (its own wrapper removed)."""
    import re

    name, until = STARTUP[era]
    lines = (SAMPLES / name).read_text().splitlines()
    end = next(i for i, text in enumerate(lines) if until in text)
    out = []
    for text in lines[: end + 1]:
        text = re.sub(DOCKER_TS, "", text)
        if kind == "docker":
            text = f"{clock.docker()} {text}"
        elif kind == "iso":
            text = f"{clock.iso()} ai llama-server[55646]: {text}"
        elif kind == "journald":
            text = f"{clock.syslog()} gpu-box llama-server[1187]: {text}"
        out.append(text)
    return out


def failures() -> list[list[str]]:
    """The real failing logs, spliced in whole (each is a crash and a restart)."""
    skip = ("healthy", "provenance")
    return [p.read_text().splitlines() for p in sorted((SAMPLES / "real").glob("*.log")) if not p.name.startswith(skip)]


def session(shape: str, rng: random.Random, requests: int, pool: list[list[str]], every: int) -> list[str]:
    """One server session of a shape: startup, requests, maybe a spliced failure."""
    era, kind, lv4 = SHAPES[shape]
    clock = Clock(rng)
    prefix_on = era in ("b9700", "b11") or kind == "prefix"
    line = wrap(kind, era, clock, prefix_on)
    server = Server(era, lv4, rng)
    out = startup(era, kind, clock)
    for n in range(requests):
        clock.step(rng.choice((0.5, 2, 8)))
        if rng.random() < 0.3:
            out.extend(line(lv, m) for lv, m in server.health())
        for lv, m in server.request():
            clock.step(0.05)
            out.append(line(lv, m))
        if pool and n and n % every == 0:
            out.extend(pool[(n // every) % len(pool)])
    return out


def generate(size: int, out: Path, shape: str = "mixed", seed: int = 1, inject_every: int = INJECT_EVERY) -> int:
    """Write sessions of `shape` (or every shape in turn) until the file holds `size` bytes."""
    rng = random.Random(seed)
    pool = failures()
    order = list(SHAPES) if shape == "mixed" else [shape]
    written, turn = 0, 0
    with out.open("w", encoding="utf-8", newline="\n") as f:
        while written < size:
            lines = session(order[turn % len(order)], rng, rng.randint(1500, 8000), pool, inject_every)
            turn += 1
            text = "\n".join(lines) + "\n"
            if written + len(text) > size:  # cut at the last line end within the size, and stop
                text = text[: text.rfind("\n", 0, size - written) + 1]
                f.write(text)
                written += len(text.encode())
                break
            f.write(text)
            written += len(text.encode())
    return written


def replay_real(size: int, out: Path, seed: int = 1) -> int:
    """The real-binary logs of sample_logs/real/ (healthy and failing) one after another in a
    seeded order, again and again, until the file holds `size` bytes."""
    rng = random.Random(seed)
    logs = [p.read_bytes() for p in sorted((SAMPLES / "real").glob("*.log"))]
    written = 0
    with out.open("wb") as f:
        while written < size:
            rng.shuffle(logs)
            for data in logs:
                if not data.endswith(b"\n"):
                    data += b"\n"
                if written + len(data) > size:
                    return written
                f.write(data)
                written += len(data)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="20M")
    ap.add_argument("--shape", default="mixed", choices=["mixed", *SHAPES])
    ap.add_argument("--replay-real", action="store_true", help="replay sample_logs/real/ instead")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.replay_real:
        n = replay_real(parse_size(args.size), args.out, args.seed)
    else:
        n = generate(parse_size(args.size), args.out, args.shape, args.seed)
    print(f"wrote {n} bytes to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
