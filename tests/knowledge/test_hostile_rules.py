"""Hostile user rule folders: each bad file is refused with its file and line, the rest still load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llamadiag.knowledge.loader import load_knowledge, load_rule_file
from llamadiag.knowledge.yamlio import MAX_FILE_BYTES, RuleFileError
from tests.paths import RULES, SAMPLES

SEED = RULES / "speculative" / "spec-vision-draft-position-gap.yaml"

# ten anchors of ten aliases: 10^9 strings once expanded
BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{c}: &{c} [{','.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcdefghi", "bcdefghij", strict=True)
)
TAGGED = 'id: evil\ntitle: !!python/object/apply:os.system ["echo pwned > /tmp/llamadiag-pwned"]\n'
TAGGED_SCALAR = "id: evil2\ntitle: !!python/name:os.system\n"
CUSTOM_TAG = "id: evil3\ntitle: !mine hello\n"
RECURSIVE = "id: loop\nx: &x [*x]\n"


def _folder(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    root = tmp_path / "mine"
    (root / "server").mkdir(parents=True)
    for name, body in files.items():
        target = root / "server" / name
        target.write_bytes(body if isinstance(body, bytes) else body.encode())
    return root


def _errors(root: Path) -> dict[str, RuleFileError]:
    k = load_knowledge([root], builtin=False)
    return {Path(e.path).name: e for e in k.errors}


def test_bomb_tags_huge_and_non_utf8_are_refused_with_file_and_line(tmp_path: Path) -> None:
    root = _folder(
        tmp_path,
        {
            "bomb.yaml": BOMB,
            "evil.yaml": TAGGED,
            "evil2.yaml": TAGGED_SCALAR,
            "evil3.yaml": CUSTOM_TAG,
            "loop.yaml": RECURSIVE,
            "huge.yaml": "id: huge\n" + "# padding\n" * (MAX_FILE_BYTES // 10 + 1),
            "latin1.yaml": b"id: latin1\ntitle: ok\nsummary: caf\xe9\n",
            "deep.yaml": "id: deep\nx: " + "[" * 5000 + "]" * 5000 + "\n",
            "okay.yaml": SEED.read_text()
            .replace("spec-vision-draft-position-gap", "okay")
            .replace("category: speculative", "category: server"),
        },
    )
    errors = _errors(root)
    assert set(errors) == {f"{n}.yaml" for n in ("bomb", "evil", "evil2", "evil3", "loop", "huge", "latin1", "deep")}
    assert errors["bomb.yaml"].line == 2 and "alias" in errors["bomb.yaml"].message
    assert errors["evil.yaml"].line == 2 and "tag" in errors["evil.yaml"].message
    assert errors["evil2.yaml"].line == 2 and "tag" in errors["evil2.yaml"].message
    assert errors["evil3.yaml"].line == 2 and "tag" in errors["evil3.yaml"].message
    assert errors["loop.yaml"].line == 2
    assert "at most" in errors["huge.yaml"].message
    assert errors["latin1.yaml"].line == 3 and "UTF-8" in errors["latin1.yaml"].message
    assert errors["deep.yaml"].line == 2 and "nested" in errors["deep.yaml"].message
    assert not Path("/tmp/llamadiag-pwned").exists()
    # the good file in the same folder, and the shipped rules, still load
    k = load_knowledge([root])
    assert k.rule("okay") is not None and k.rule("spec-vision-draft-position-gap") is not None


def _run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "COLUMNS": "250",
    }
    return subprocess.run([sys.executable, "-m", "llamadiag", *args], capture_output=True, timeout=120, env=env)


def test_cli_names_the_file_and_keeps_working(tmp_path: Path) -> None:
    root = _folder(tmp_path, {"bomb.yaml": BOMB, "evil.yaml": TAGGED})
    listed = _run("rules", "list", "--rules", str(root), tmp_path=tmp_path)
    err = listed.stderr.decode()
    assert "Traceback" not in err and f"{root / 'server' / 'bomb.yaml'}:2:" in err
    assert f"{root / 'server' / 'evil.yaml'}:2:" in err and "spec-vision-draft" in listed.stdout.decode()
    linted = _run("rules", "lint", "--rules", str(root), tmp_path=tmp_path)
    assert "Traceback" not in linted.stderr.decode() + linted.stdout.decode()
    assert "bomb.yaml:2" in linted.stderr.decode() + linted.stdout.decode()
    explained = _run(
        "explain", str(SAMPLES / "seed-ticket.txt"), "--rules", str(root), "--format", "json", tmp_path=tmp_path
    )
    assert "<unicode string>" not in explained.stderr.decode() and "evil.yaml:2" in explained.stderr.decode()
    assert json.loads(explained.stdout)["findings"][0]["rule_id"] == "spec-vision-draft-position-gap"


YAML_BITS = st.sampled_from(
    [
        "&a ",
        "*a",
        "&b ",
        "*b",
        "!!python/name:os.system ",
        "!x ",
        "[",
        "]",
        "{",
        "}",
        ": ",
        "- ",
        "\n",
        "  ",
        "? ",
        "|\n  ",
        ">-\n  ",
        "'",
        '"',
        "#1",
        ",",
        "id: fz\n",
        "title: t\n",
        "%TAG ! tag:x,2000:\n---\n",
        "---\n",
        "...\n",
        "\t",
        "\x00",
        "\ufeff",
        "2001-13-45",
        "!!binary ",
        "<<: *a\n",
        "é",
    ]
)


@settings(
    max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(bits=st.lists(YAML_BITS | st.text(max_size=8), max_size=40), raw=st.binary(max_size=16))
def test_fuzz_the_rule_loader_never_hangs_or_crashes(tmp_path: Path, bits: list[str], raw: bytes) -> None:
    path = tmp_path / "fz.yaml"
    path.write_bytes("".join(bits).encode("utf-8", "surrogatepass") + raw)
    try:
        load_rule_file(path, tmp_path, builtin=False)
    except RuleFileError as exc:
        assert exc.path == str(path)
