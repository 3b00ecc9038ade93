"""Regenerate a few scenarios on the real llama-server and compare line shapes with the corpus.

Skipped (one line) when the binary built by build.py is absent. A line's shape is its text with
colours, paths, hashes and numbers masked (capture.line_template); a shape that appears in a new
capture and not in the committed log, or the reverse, means the server's wording changed (or the
corpus is stale: re-run capture.py and re-check expected.yaml).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import build  # noqa: E402

if build.live_missing():
    pytest.skip(build.live_missing(), allow_module_level=True)

import capture  # noqa: E402
import scenarios as sc  # noqa: E402

REAL = HERE.parent.parent / "sample_logs" / "real"
LIVE = [s for s in sc.SCENARIOS if s.live]


def shapes(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return {t for t in map(capture.line_template, text.splitlines()) if t.strip()}


@pytest.fixture(scope="module")
def models() -> Path:
    d = build.build_dir() / "models"
    capture.ensure_models(d)
    return d


@pytest.mark.parametrize("scenario", LIVE, ids=[s.name for s in LIVE])
def test_line_shapes_unchanged(scenario, models, tmp_path) -> None:
    new = tmp_path / f"{scenario.name}.log"
    capture.run_scenario(scenario, build.server_path(), models, new)
    old_shapes, new_shapes = shapes(REAL / new.name), shapes(new)
    added, gone = sorted(new_shapes - old_shapes), sorted(old_shapes - new_shapes)
    assert not added and not gone, (
        f"{scenario.name}: line shapes changed\n  new: " + "\n  new: ".join(added[:20])
        + "\n  gone: " + "\n  gone: ".join(gone[:20])
    )
