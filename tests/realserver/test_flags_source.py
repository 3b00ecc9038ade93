"""rules/flags/llama-server.yaml against the real option table of the vendored llama.cpp (b11312):
every option the YAML names carries the environment variables the source gives it, so a
`docker run -e LLAMA_ARG_...` is read as the server reads it. Skipped (one line) when build.py
has not fetched the source."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.paths import RULES

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build

ARG_CPP = build.source_dir() / "common" / "arg.cpp"
if not ARG_CPP.is_file():
    pytest.skip(f"llama.cpp source not fetched ({ARG_CPP}): run tests/realserver/build.py", allow_module_level=True)


def source_options() -> dict[str, list[str]]:
    """Each option spelling of common/arg.cpp and the environment variables set on it."""
    opts: dict[str, list[str]] = {}
    for chunk in ARG_CPP.read_text().split("add_opt(common_arg(")[1:]:
        m = re.match(r"\s*\{([^}]*)\}(?:\s*,\s*\{([^}]*)\})?", chunk)
        if not m:
            continue
        envs = re.findall(r'set_env\("([A-Z0-9_]+)"\)', chunk)
        for name in re.findall(r'"(-[^"]+)"', m.group(1) + (m.group(2) or "")):
            opts[name] = envs
    return opts


def test_every_option_has_the_sources_environment_variables() -> None:
    opts = source_options()
    assert len(opts) > 200, "the option table was not found"
    flags = yaml.safe_load((RULES / "flags" / "llama-server.yaml").read_text())["flags"]
    missing = {}
    for flag in flags:
        if flag["name"].startswith("no-"):
            continue  # a negation's variable belongs to its positive option (LLAMA_ARG_JINJA=0)
        wanted = {env for alias in flag["aliases"] for env in opts.get(alias, [])}
        lacking = wanted - set(flag.get("env") or [])
        if lacking:
            missing[flag["name"]] = sorted(lacking)
    assert not missing, f"environment variables of the source missing in the YAML: {missing}"


def test_docker_env_sets_the_speculative_type() -> None:
    from llamadiag.engine.cmdline import FlagTable
    from llamadiag.knowledge.loader import load_knowledge

    table = FlagTable(load_knowledge(builtin=True).flags)
    parsed = table.parse("docker run --gpus all -e LLAMA_ARG_SPEC_TYPE=draft-mtp ghcr.io/ggml-org/llama.cpp:server-cuda -m m.gguf")
    assert parsed.values.get("spec-type") == "draft-mtp"
