"""Values as a person writes them, for the terminal and markdown views: never a Python repr
(`['Vulkan']`, `True`, `{"prompt_tps": ...}`)."""

from __future__ import annotations

from typing import Any


def value_words(value: Any) -> str:
    """A fact value in words: lists joined by commas, yes/no for booleans, `k=v` pairs for a
    mapping, '-' for nothing."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple | set):
        return ", ".join(value_words(v) for v in value) or "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}={value_words(v)}" for k, v in value.items()) or "-"
    return str(value)


def run_words(facts: dict[str, Any], detail: bool = True) -> str:
    """What a run was, in a few plain words: build (or era), backends, devices, model, speculative
    type, mmproj, router mode; with `detail` the slots and the context per slot too."""
    bits = []
    if "build" in facts:
        bits.append(f"build b{facts['build']}")
    elif "era" in facts:
        bits.append(f"era {facts['era']}")
    else:
        bits.append("build unknown")
    for key, one, many in (
        ("backends", "backend", "backends"),
        ("devices", "device", "devices"),
        ("model_path", "model", "model"),
        ("spec_type", "spec-type", "spec-type"),
    ):
        value = facts.get(key)
        if value not in (None, [], ""):
            label = many if isinstance(value, list) and len(value) > 1 else one
            bits.append(f"{label} {value_words(value)}")
    if facts.get("has_mmproj") is True:
        bits.append("with --mmproj")
    if facts.get("router_mode") is True:
        # a router start is a state, not a failure: shown here, judged by the router rules only
        # when something fails (a request without a model name, an unknown model, a dead child)
        models = facts.get("router_models_available")
        bits.append("router mode" if models is None else f"router mode, {models} model(s) available")
    if detail:
        if facts.get("n_slots") not in (None, ""):
            bits.append(f"{facts['n_slots']} slot(s)")
        if facts.get("n_ctx_slot") not in (None, ""):
            bits.append(f"context {facts['n_ctx_slot']} per slot")
    return ", ".join(bits)


def _series(name: str, s: dict[str, Any]) -> str | None:
    if not s or not s.get("count"):
        return None
    return f"{name} {s['median']} tok/s median (p10 {s['p10']}, p90 {s['p90']}; {s['count']} request(s))"


def stats_words(stats: dict[str, Any]) -> list[str]:
    """A run's request statistics as short sentences (an empty list when it served nothing)."""
    out = [
        x
        for x in (
            _series("prompt", stats.get("prompt_tps", {})),
            _series("generation", stats.get("generation_tps", {})),
        )
        if x
    ]
    draft = stats.get("draft")
    if draft:
        rate = f"{draft['acceptance']:.1%}" if draft.get("acceptance") is not None else "n/a"
        out.append(
            f"draft acceptance {rate} ({draft['accepted']} of {draft['generated']} drafted tokens, "
            f"{draft['requests']} request(s))"
        )
    if stats.get("http_status"):
        out.append("HTTP status " + ", ".join(f"{code}: {n}×" for code, n in stats["http_status"].items()))
    if stats.get("errors"):
        out.append(f"{stats['errors']} error line(s)")
    for message, n in (stats.get("error_messages") or {}).items():
        out.append(f"  {n}× {message}")
    known = {"prompt_tps", "generation_tps", "draft", "http_status", "errors", "error_messages"}
    out += [
        f"{k.replace('_', ' ')}: {value_words(v)}"
        for k, v in stats.items()
        if k not in known and v not in (None, {}, [])
    ]
    return out
