#!/usr/bin/env python3
"""Score llamadiag against the real-world excerpt corpus (tests/realworld/).

    python tests/realworld/score.py [--json] [--verbose] [--jobs N] [--only SUBSTR]

Each excerpt in excerpts/ is diagnosed with
``<python> -m llamadiag explain --format json --no-redact FILE`` and its findings are
compared with the cause class in labels.yaml, through classes.yaml (class -> accepted
rule ids). Outcomes per excerpt:

  correct          the top finding's rule is accepted for the class
  right-not-first  an accepted rule is found, but another finding ranks first
  wrong            no accepted rule ranks first and a finding of another cause is
                   present at confidence likely / confirmed / regression
  wrong-possible   only `possible` findings of other causes
  silent           no finding at all
  clean            healthy excerpt, no finding
  false-alarm      healthy excerpt with a finding

Headline figures are over the *settled* failure excerpts (a maintainer, a fix PR or the
reporter's own resolution stated the cause). Unsettled excerpts are scored and shown but
do not enter the guard. The exit status is nonzero only when a threshold of guard.yaml
fails (or an excerpt could not be run at all).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXCERPTS = HERE / "excerpts"
LABELS = HERE / "labels.yaml"
CLASSES = HERE / "classes.yaml"
GUARD = HERE / "guard.yaml"

CONFIDENT = {"likely", "confirmed", "regression"}
OUTCOMES = ("correct", "right-not-first", "wrong", "wrong-possible", "silent", "clean", "false-alarm", "error")
LABEL_FIELDS = ("file", "issue", "title", "cause", "stated_by", "settled", "class", "fix", "notes")


@dataclass
class Result:
    file: str
    issue: int
    cls: str
    subsystem: str
    settled: bool
    healthy: bool
    outcome: str
    accepted: list[str]
    findings: list[dict] = field(default_factory=list)  # rule_id, confidence, severity, in order
    error: str | None = None


def load_labels(path: Path = LABELS) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or []


def load_classes(path: Path = CLASSES) -> dict[str, list[str]]:
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    return {k: list(v or []) for k, v in data.items()}


def load_guard(path: Path = GUARD) -> dict:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def run_explain(path: Path, timeout: float = 300) -> tuple[list[dict], str | None]:
    """Run llamadiag on one excerpt; return (findings, error)."""
    cmd = [sys.executable, "-m", "llamadiag", "explain", "--format", "json", "--no-redact", str(path)]
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(REPO))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)
    except subprocess.TimeoutExpired:
        return [], f"timeout after {timeout}s"
    # exit 0 = nothing at --fail-on, 1 = findings; 2 = usage/input/rule error (findings may still print)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return [], f"exit {proc.returncode}, no JSON: {proc.stderr.strip()[-300:]}"
    return list(report.get("findings") or []), None


def classify(findings: list[dict], accepted: list[str], healthy: bool) -> str:
    if healthy:
        return "clean" if not findings else "false-alarm"
    if not findings:
        return "silent"
    ids = [f.get("rule_id") for f in findings]
    if ids[0] in accepted:
        return "correct"
    if any(i in accepted for i in ids):
        return "right-not-first"
    if any(f.get("rule_id") not in accepted and f.get("confidence") in CONFIDENT for f in findings):
        return "wrong"
    return "wrong-possible"


def score_entry(entry: dict, classes: dict[str, list[str]]) -> Result:
    cls = entry["class"]
    healthy = cls == "healthy"
    accepted = classes.get(cls, [])
    findings, error = run_explain(EXCERPTS / entry["file"])
    slim = [
        {"rule_id": f.get("rule_id"), "confidence": f.get("confidence"), "severity": f.get("severity")}
        for f in findings
    ]
    outcome = "error" if error else classify(slim, accepted, healthy)
    return Result(
        file=entry["file"],
        issue=entry["issue"],
        cls=cls,
        subsystem=entry.get("subsystem", "?"),
        settled=bool(entry.get("settled")),
        healthy=healthy,
        outcome=outcome,
        accepted=accepted,
        findings=slim,
        error=error,
    )


def score_corpus(jobs: int = 2, only: str | None = None) -> list[Result]:
    labels = load_labels()
    classes = load_classes()
    if only:
        labels = [e for e in labels if only in e["file"]]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda e: score_entry(e, classes), labels))


def _pct(n: int, d: int) -> float:
    return round(100.0 * n / d, 1) if d else 0.0


def summarize(results: list[Result]) -> dict:
    def counts(rs):
        c = {o: 0 for o in OUTCOMES}
        for r in rs:
            c[r.outcome] += 1
        return c

    settled = [r for r in results if r.settled and not r.healthy]
    unsettled = [r for r in results if not r.settled and not r.healthy]
    healthy = [r for r in results if r.healthy]
    cs, cu, ch = counts(settled), counts(unsettled), counts(healthy)
    silent_classes = sorted({r.cls for r in settled + unsettled if r.outcome == "silent"})
    uncovered = sorted({r.cls for r in settled + unsettled if not r.accepted})
    return {
        "excerpts": len(results),
        "settled": len(settled),
        "unsettled": len(unsettled),
        "healthy": len(healthy),
        "settled_outcomes": cs,
        "unsettled_outcomes": cu,
        "healthy_outcomes": ch,
        "top1_pct": _pct(cs["correct"], len(settled)),
        "found_pct": _pct(cs["correct"] + cs["right-not-first"], len(settled)),
        "confident_wrong": cs["wrong"],
        "silent_pct": _pct(cs["silent"], len(settled)),
        "healthy_false_alarms": ch["false-alarm"],
        "errors": cs["error"] + cu["error"] + ch["error"],
        "silent_classes": silent_classes,
        "classes_without_rule": uncovered,
    }


def check_guard(summary: dict, guard: dict) -> list[str]:
    failures = []
    if summary["top1_pct"] < guard.get("min_top1_pct", 0):
        failures.append(f"top-1 correct {summary['top1_pct']}% < min {guard['min_top1_pct']}%")
    # a count as well as a share: a share falls when the corpus grows by harder excerpts, a
    # count of excerpts named right only falls when a change loses one
    correct = summary["settled_outcomes"]["correct"]
    if correct < guard.get("min_top1_correct", 0):
        failures.append(f"top-1 correct on {correct} settled excerpts < min {guard['min_top1_correct']}")
    if summary["confident_wrong"] > guard.get("max_confident_wrong", 10**9):
        failures.append(f"confident wrong {summary['confident_wrong']} > max {guard['max_confident_wrong']}")
    if summary["healthy_false_alarms"] > guard.get("max_healthy_false_alarms", 10**9):
        failures.append(
            f"healthy false alarms {summary['healthy_false_alarms']} > max {guard['max_healthy_false_alarms']}"
        )
    if summary["errors"]:
        failures.append(f"{summary['errors']} excerpt(s) could not be diagnosed (llamadiag error)")
    return failures


def print_table(results: list[Result], verbose: bool) -> None:
    width = max(len(r.file) for r in results) if results else 10
    print(f"{'excerpt':<{width}}  {'set':<3} {'class':<34} {'outcome':<15} top finding")
    for r in sorted(results, key=lambda r: (r.healthy, not r.settled, r.file)):
        kind = "H" if r.healthy else ("S" if r.settled else "U")
        top = f"{r.findings[0]['rule_id']} ({r.findings[0]['confidence']})" if r.findings else "-"
        if r.error:
            top = f"ERROR: {r.error}"
        print(f"{r.file:<{width}}  {kind:<3} {r.cls[:34]:<34} {r.outcome:<15} {top}")
        if verbose:
            for f in r.findings[1:]:
                print(f"{'':<{width}}  {'':<3} {'':<34} {'':<15} + {f['rule_id']} ({f['confidence']})")
            if r.accepted:
                print(f"{'':<{width}}  {'':<3} {'':<34} {'':<15}   accepted: {', '.join(r.accepted)}")


def print_summary(s: dict, failures: list[str]) -> None:
    cs, cu, ch = s["settled_outcomes"], s["unsettled_outcomes"], s["healthy_outcomes"]
    print()
    print(f"excerpts {s['excerpts']}: settled {s['settled']}, unsettled {s['unsettled']}, healthy {s['healthy']}")
    print(
        f"settled:   correct {cs['correct']}, right-not-first {cs['right-not-first']}, wrong {cs['wrong']}, "
        f"wrong-possible {cs['wrong-possible']}, silent {cs['silent']}"
    )
    print(
        f"unsettled: correct {cu['correct']}, right-not-first {cu['right-not-first']}, wrong {cu['wrong']}, "
        f"wrong-possible {cu['wrong-possible']}, silent {cu['silent']}"
    )
    print(f"healthy:   clean {ch['clean']}, false-alarm {ch['false-alarm']}")
    print(
        f"top-1 correct {s['top1_pct']}% of settled; found anywhere {s['found_pct']}%; "
        f"confident wrong {s['confident_wrong']}; silent {s['silent_pct']}%; "
        f"healthy false alarms {s['healthy_false_alarms']}"
    )
    print(f"classes with a silent excerpt: {', '.join(s['silent_classes']) or '-'}")
    if failures:
        print("GUARD FAILED: " + "; ".join(failures))
    else:
        print("guard: ok")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the figures and per-excerpt results as JSON")
    ap.add_argument("--verbose", action="store_true", help="list every finding and the accepted rule ids")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("LLAMADIAG_REALWORLD_JOBS", "2")))
    ap.add_argument("--only", help="score only excerpts whose file name contains this text")
    args = ap.parse_args(argv)

    results = score_corpus(jobs=args.jobs, only=args.only)
    summary = summarize(results)
    failures = [] if args.only else check_guard(summary, load_guard())
    if args.json:
        out = {
            "summary": summary,
            "guard": load_guard(),
            "guard_failures": failures,
            "results": [asdict(r) for r in results],
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print_table(results, args.verbose)
        print_summary(summary, failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
