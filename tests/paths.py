"""Folders of the repository that tests read (sample logs, rules, docs, test data)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
RULES = ROOT / "rules"
DOCS = ROOT / "docs"
DATA = ROOT / "tests" / "data"
