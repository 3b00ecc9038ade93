"""`rules export --grep`: the EREs find the evidence grep can see."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from llamadiag.ruletools.export import signature_eres
from tests.paths import ROOT


@pytest.mark.skipif(shutil.which("grep") is None, reason="grep is not installed")
def test_exported_eres_find_the_evidence_grep_can_see(knowledge, tmp_path: Path) -> None:
    eres, problems = signature_eres(knowledge)
    assert problems == [] and len(eres) > 50
    sig = tmp_path / "sig.ere"
    sig.write_text("".join(e + "\n" for e in eres))
    log = ROOT / "sample_logs" / "seed-b11503-default.log"
    out = subprocess.run(["grep", "-E", "-f", str(sig), str(log)], capture_output=True, text=True, env={"LC_ALL": "C"})
    assert out.returncode == 0, out.stderr
    assert "failed to process speculative batch" in out.stdout
    assert "inconsistent sequence positions" in out.stdout
