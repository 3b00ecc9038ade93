"""The command-line parser resolves aliases, LLAMA_ARG_* variables and old spellings."""

from __future__ import annotations

import pytest

from llamadiag.engine.cmdline import FlagTable


@pytest.fixture(scope="module")
def table(knowledge) -> FlagTable:
    return FlagTable(knowledge.flags)


def test_seed_command_line(table) -> None:
    parsed = table.parse(
        "$ llama-server -m GLM-5.3-Flash-UD-IQ2_XXS-00001-of-00004.gguf --mmproj mmproj-F16.gguf -ngl 99 -fa on "
        "--jinja -c 131072 -b 4096 -ub 1024 --spec-type draft-mtp --spec-draft-n-max 3 --host 0.0.0.0 --port 8080"
    )
    assert parsed.values == {
        "model": "GLM-5.3-Flash-UD-IQ2_XXS-00001-of-00004.gguf",
        "mmproj": "mmproj-F16.gguf",
        "n-gpu-layers": "99",
        "flash-attn": "on",
        "jinja": True,
        "ctx-size": "131072",
        "batch-size": "4096",
        "ubatch-size": "1024",
        "spec-type": "draft-mtp",
        "spec-draft-n-max": "3",
        "host": "0.0.0.0",
        "port": "8080",
    }
    assert parsed.unknown == []


def test_long_forms_equals_and_continuations(table) -> None:
    parsed = table.parse(
        "./build/bin/llama-server \\\n  --model=/m/q.gguf \\\n  --ctx-size=8192 --parallel 4 --gpu-layers 20"
    )
    assert parsed.values == {"model": "/m/q.gguf", "ctx-size": "8192", "parallel": "4", "n-gpu-layers": "20"}


def test_env_variables_and_docker(table) -> None:
    parsed = table.parse(
        "docker run --gpus all -e LLAMA_ARG_CTX_SIZE=16384 -e LLAMA_ARG_MMPROJ=/m/p.gguf "
        "ghcr.io/ggml-org/llama.cpp:server-cuda -m /m/x.gguf"
    )
    assert parsed.values["ctx-size"] == "16384" and parsed.values["mmproj"] == "/m/p.gguf"
    parsed = table.parse("LLAMA_ARG_N_PARALLEL=2 llama-server -m x.gguf -np 8")
    assert parsed.values["parallel"] == "8"  # the command line wins over the environment


def test_old_spellings_are_reported(table) -> None:
    parsed = table.parse("llama-server -m x.gguf -md d.gguf --draft-max 16 --draft-min 4")
    assert parsed.values["spec-draft-n-max"] == "16" and parsed.values["model-draft"] == "d.gguf"
    assert [o[0] for o in parsed.old_spellings] == ["--draft-max", "--draft-min"]


def test_bare_flash_attn_does_not_swallow_the_next_flag(table) -> None:
    parsed = table.parse("llama-server -m x.gguf -fa -ngl 99")
    assert parsed.values["flash-attn"] is True and parsed.values["n-gpu-layers"] == "99"


def test_windows_paths(table) -> None:
    parsed = table.parse(r'PS C:\llama> .\llama-server.exe -m "C:\Users\bob\models\phi.gguf" -c 4096')
    assert parsed.values == {"model": r"C:\Users\bob\models\phi.gguf", "ctx-size": "4096"}


def test_unknown_flags_are_kept(table) -> None:
    assert table.parse("llama-server -m x.gguf --frobnicate 3").unknown == ["--frobnicate"]


PROMPTS = [
    "user@host:~$ ",
    "(venv) $ ",
    "(venv) user@host:~/llama.cpp$ ",
    "root@box:/app# ",
    "[me@box llama.cpp]$ ",
    "me@box ~ % ",
    "# ",
    "PS C:\\llama> ",
]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_a_command_pasted_behind_a_shell_prompt(table, prompt: str) -> None:
    # issue 13 point 12: the prompt is not part of the command (nor kept: it names a user and a host)
    parsed = table.parse(f"{prompt}LLAMA_ARG_N_PARALLEL=4 llama-server -m m.gguf -c 4096")
    assert parsed.values == {"parallel": "4", "model": "m.gguf", "ctx-size": "4096"}
    assert parsed.text == "LLAMA_ARG_N_PARALLEL=4 llama-server -m m.gguf -c 4096"


def test_a_command_quoted_as_markdown_inline_code(table) -> None:
    # issue 15: tickets quote the command in backticks (#25902); the backticks are not part of it
    parsed = table.parse("`llama-server.exe -m m.gguf --rpc 10.10.10.2:50052 -ngl 999 --jinja`")
    assert parsed.values == {"model": "m.gguf", "rpc": "10.10.10.2:50052", "n-gpu-layers": "999", "jinja": True}


def test_a_log_with_the_command_in_backticks_gives_its_flags(knowledge) -> None:
    from llamadiag import api

    text = "Launch command:\n`llama-server -m m.gguf --rpc 10.10.10.2:50052 -ngl 999`\n"
    facts = api.diagnose_text(text, knowledge=api.load_knowledge()).report.runs[0].facts
    assert facts["flags"]["rpc"] == "10.10.10.2:50052" and facts["model_path"] == "m.gguf"


def test_a_redirection_is_not_a_windows_prompt(table) -> None:
    parsed = table.parse("C:\\llama\\llama-server.exe -c 4096 > out.txt")
    assert parsed.text.startswith("C:\\llama\\llama-server.exe") and parsed.values == {"ctx-size": "4096"}


@pytest.mark.parametrize("prompt", PROMPTS)
def test_a_log_with_the_command_behind_a_prompt_gives_its_flags(knowledge, prompt: str) -> None:
    from llamadiag import api
    from tests.paths import ROOT

    log = (ROOT / "sample_logs" / "seed-b11503-default.log").read_text()
    text = f"{prompt}llama-server -m g.gguf --mmproj mmproj-F16.gguf --spec-type draft-mtp -c 8192\n{log}"
    facts = api.diagnose_text(text, knowledge=api.load_knowledge()).report.runs[0].facts
    assert facts["n_ctx"] == 8192


@pytest.mark.parametrize(
    "line",
    [
        "     Process: 10778 ExecStart=/usr/local/bin/llama-server -m m.gguf -md d.gguf --port 11430 -t 4 >",
        "ExecStart=/usr/bin/llama-server -m m.gguf -md d.gguf --port 11430",
    ],
)
def test_a_systemd_exec_start_line_gives_its_flags(knowledge, line: str) -> None:
    # issue 15 (round 7, #10547): `systemctl status` and unit files show the command as ExecStart=
    from llamadiag import api

    text = f"{line}\nDec 04 01:53:21 kamala llama-server[10778]: request: GET /models 127.0.0.1 200\n"
    facts = api.diagnose_text(text, knowledge=api.load_knowledge()).report.runs[0].facts
    assert facts["flags"]["model-draft"] == "d.gguf" and facts["flags"]["port"] == "11430"
