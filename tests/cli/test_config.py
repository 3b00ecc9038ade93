"""Option defaults from llamadiag.toml / .llamadiag.toml / [tool.llamadiag] (issue 13 point 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

SEED = ROOT / "sample_logs" / "seed-ticket.txt"  # a confirmed error: exit 1 by default


def run(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMADIAG_CONFIG", "XDG_CONFIG_HOME")}
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")  # the checked rules stay cached
    env |= {"HOME": str(home), "XDG_CACHE_HOME": cache, "COLUMNS": "120", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "llamadiag", *args], capture_output=True, env=env, cwd=cwd, timeout=120)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    (tmp_path / "proj" / "logs" / "deep").mkdir(parents=True)
    return tmp_path / "proj"


def test_pyproject_table_found_from_a_sub_folder(project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.llamadiag]\nfail-on = "none"\n')
    home = project.parent / "home"
    assert run("explain", "-q", str(SEED), cwd=project / "logs" / "deep", home=home).returncode == 0
    # the command line wins over the file
    assert run("explain", "-q", str(SEED), "--fail-on", "error", cwd=project / "logs", home=home).returncode == 1


def test_the_nearest_file_wins_and_a_command_table_overrides(project: Path) -> None:
    home = project.parent / "home"
    (project / "pyproject.toml").write_text('[tool.llamadiag]\nfail-on = "none"\n')
    (project / "logs" / "llamadiag.toml").write_text('fail-on = "critical"\n[explain]\nfail-on = "error"\n')
    assert run("explain", "-q", str(SEED), cwd=project / "logs", home=home).returncode == 1
    out = run("watch", "--format", "compact", str(SEED), cwd=project / "logs", home=home)
    assert out.returncode == 0  # watch: fail-on critical from the top of the file, the finding is an error


def test_paths_are_relative_to_the_file_and_format_applies(project: Path) -> None:
    home = project.parent / "home"
    (project / ".llamadiag.toml").write_text('rules = ["my-rules"]\n[watch]\nformat = "compact"\n')
    out = run("explain", "-q", str(SEED), cwd=project / "logs", home=home)
    assert out.returncode == 2 and f"{project / 'my-rules'}: rule folder does not exist" in out.stderr.decode()
    (project / "my-rules").mkdir()
    out = run("watch", str(SEED), cwd=project / "logs", home=home)
    assert out.stdout.decode().startswith("INFO run-start line ")


def test_the_user_config_folder_when_no_project_has_one(project: Path) -> None:
    home = project.parent / "home"
    (home / ".config" / "llamadiag").mkdir(parents=True)
    (home / ".config" / "llamadiag" / "llamadiag.toml").write_text('fail-on = "none"\n')
    assert run("explain", "-q", str(SEED), cwd=project, home=home).returncode == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('fail-on = "error"\ncolor = \n', "llamadiag.toml: not valid TOML: Invalid value (at line 2, column 9)"),
        ('colour = "never"\n', "llamadiag.toml: unknown key 'colour'"),
        ('fail-on = "bogus"\n', "llamadiag.toml: fail-on: 'bogus' is not one of 'none', 'info'"),
        ("[explain]\nlimit = 3\n", "llamadiag.toml: [explain] has no option --limit"),
        ('fail-on = ["error"]\n', "llamadiag.toml: fail-on takes one value"),
    ],
)
def test_a_broken_file_is_one_line_naming_it(project: Path, text: str, message: str) -> None:
    (project / "llamadiag.toml").write_text(text)
    out = run("explain", str(SEED), cwd=project, home=project.parent / "home")
    err = out.stderr.decode()
    assert out.returncode == 2 and out.stdout == b""
    assert f"llamadiag: config: {project / message}" in err and len(err.strip().splitlines()) == 1, err


def test_a_key_for_another_command_is_not_an_error(project: Path) -> None:
    (project / "llamadiag.toml").write_text('limit = 2\nfail-on = "none"\n')  # limit: lookup's
    assert run("explain", "-q", str(SEED), cwd=project, home=project.parent / "home").returncode == 0
