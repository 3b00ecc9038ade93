"""The table of docs/real-server.md: each real log's labelled cause, what llamadiag says about
it (its findings at error or above) and the verdict, from expected.yaml and the current rules.

    python tests/realserver/verdicts.py            print the rows
    python tests/realserver/verdicts.py --write    rewrite the rows in docs/real-server.md

tests/realserver/test_corpus.py checks that the published rows are current.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DOC = ROOT / "docs" / "real-server.md"
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from llamadiag.api import Knowledge, load_knowledge  # noqa: E402
from llamadiag.ruletools.selftest import analyze_file  # noqa: E402

SERIOUS = {"error", "critical"}
ROW = re.compile(r"^\| (?P<scenario>[\w.-]+) \|(?P<lead>(?: [^|]* \|)*?) (?P<cause>[\w-]+) \| (?P<said>[^|]*) \| (?P<verdict>[^|]*) \|$")


def verdicts(knowledge: Knowledge | None = None) -> dict[str, tuple[str, str]]:
    """scenario -> (what llamadiag says, verdict)."""
    knowledge = knowledge or load_knowledge()
    entries = yaml.safe_load((HERE / "expected.yaml").read_text())["scenarios"]
    out = {}
    for entry in entries:
        report = analyze_file(knowledge, ROOT / "sample_logs" / "real" / f"{entry['scenario']}.log")
        named = set(entry.get("expect_rules") or []) | set(entry.get("also") or [])
        shown: dict[str, str] = {}  # findings at error or above, and those the label names
        for f in report.findings:
            if f.severity in SERIOUS or f.rule_id in named:
                level = f.confidence if f.severity in SERIOUS else f"{f.confidence}, {f.severity}"
                shown.setdefault(f.rule_id, level)
        said = ", ".join(f"`{r}` ({c})" for r, c in shown.items()) or "nothing"
        if entry.get("healthy"):
            verdict = "correct (healthy)"
        elif entry.get("rule") == "missing":
            verdict = "no rule yet"
        else:
            verdict = "correct" if all(r in shown for r in entry["expect_rules"]) else "missed"
            if verdict == "correct" and entry.get("symptom_only"):
                verdict = "symptom only"  # the rule names what failed, not the cause the label needs
        out[entry["scenario"]] = (said, verdict)
    return out


def rewrite(text: str, table: dict[str, tuple[str, str]]) -> str:
    """The document with the llamadiag and verdict cells of each scenario row replaced."""
    lines = []
    for line in text.splitlines():
        m = ROW.match(line)
        if m and m["scenario"] in table:
            said, verdict = table[m["scenario"]]
            line = f"| {m['scenario']} |{m['lead']} {m['cause']} | {said} | {verdict} |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print or write the rows."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite the rows in docs/real-server.md")
    args = ap.parse_args()
    table = verdicts()
    if args.write:
        DOC.write_text(rewrite(DOC.read_text(), table))
    else:
        for scenario, (said, verdict) in table.items():
            print(f"| {scenario} | {said} | {verdict} |")


if __name__ == "__main__":
    main()
