"""The logs captured from the real llama-server (sample_logs/real/) against expected.yaml.

Runs on every run; no binary needed. Per scenario, expected.yaml holds the cause labelled from
what the server did (a class slug and prose) and one of:
  healthy: true          no finding at error or above, nothing from must_not
  expect_rules: [ids]    each of these rules finds it; any other finding at error or above is a
                         wrong diagnosis unless listed in also
  rule: missing          no rule knows this cause yet (reason says why); at least nothing may
                         diagnose it confidently (confirmed/likely) as another cause at error or above
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llamadiag.ruletools.selftest import analyze_file

HERE = Path(__file__).resolve().parent
REAL = HERE.parent.parent / "sample_logs" / "real"
EXPECTED = yaml.safe_load((HERE / "expected.yaml").read_text())["scenarios"]
SERIOUS = {"error", "critical"}
CONFIDENT = {"confirmed", "regression", "likely"}


def _findings(knowledge, entry):
    report = analyze_file(knowledge, REAL / f"{entry['scenario']}.log")
    seen = {}
    for f in report.findings:
        seen.setdefault(f.rule_id, f)
    return seen


@pytest.mark.parametrize("entry", EXPECTED, ids=[e["scenario"] for e in EXPECTED])
def test_real_log_verdict(knowledge, entry) -> None:
    got = _findings(knowledge, entry)
    must_not = set(entry.get("must_not") or [])
    wrong = sorted(must_not & set(got))
    assert not wrong, f"must_not rules fired: {wrong}"
    also = set(entry.get("also") or [])
    if entry.get("healthy"):
        bad = {r: f"{f.severity}/{f.confidence}" for r, f in got.items() if f.severity in SERIOUS and r not in also}
        assert not bad, f"healthy log got serious findings: {bad}"
    elif entry.get("rule") == "missing":
        assert entry.get("reason"), "a `rule: missing` entry needs a reason"
        bad = {r: f"{f.severity}/{f.confidence}" for r, f in got.items()
               if f.severity in SERIOUS and f.confidence in CONFIDENT and r not in also}
        assert not bad, f"no rule knows {entry['cause']}, yet another cause was diagnosed: {bad}"
    else:
        want = entry.get("expect_rules") or []
        assert want, "an entry needs healthy, expect_rules or rule: missing"
        missing = [r for r in want if r not in got]
        assert not missing, f"expected {missing}, got {sorted(got)}"
        for r, conf in (entry.get("confidence") or {}).items():
            assert got[r].confidence == conf, f"{r}: expected {conf}, got {got[r].confidence}"
        for r, words in (entry.get("diagnosis_says") or {}).items():
            assert words in got[r].diagnosis, f"{r}: the diagnosis does not say {words!r}: {got[r].diagnosis}"
        extra = {r: f"{f.severity}/{f.confidence}" for r, f in got.items()
                 if f.severity in SERIOUS and r not in want and r not in also}
        assert not extra, f"other serious findings besides {want}: {extra}"


def test_every_real_log_is_labelled() -> None:
    logs = {p.stem for p in REAL.glob("*.log")}
    labelled = {e["scenario"] for e in EXPECTED}
    assert logs == labelled, f"unlabelled: {sorted(logs - labelled)}, no log: {sorted(labelled - logs)}"


def test_every_real_log_has_provenance() -> None:
    prov = yaml.safe_load((REAL / "provenance.yaml").read_text())["logs"]
    by = {p["scenario"]: p for p in prov}
    for e in EXPECTED:
        p = by.get(e["scenario"])
        assert p, f"{e['scenario']}: no provenance"
        assert p["build"] == 11312 and p["commit"] == "0c1e57098"
        assert p["command_line"].startswith(("llama-server", "ulimit"))
        assert "date" in p and "requests" in p and "models" in p


def test_every_cuda_scenario_has_a_labelled_log() -> None:
    import cuda_scenarios

    labelled = {e["scenario"] for e in EXPECTED}
    prov = {p["scenario"]: p for p in yaml.safe_load((REAL / "provenance.yaml").read_text())["logs"]}
    for s, env in cuda_scenarios.CUDA_SCENARIOS:
        assert (REAL / f"{s.name}.log").exists() and s.name in labelled, s.name
        assert prov[s.name].get("backend") == "CUDA" and (prov[s.name].get("env") or {}) == env, s.name


def test_the_published_table_is_current(knowledge) -> None:
    """docs/real-server.md says what llamadiag says about each real log today."""
    from tests.realserver.verdicts import DOC, rewrite, verdicts

    text = DOC.read_text()
    assert rewrite(text, verdicts(knowledge)) == text, "run: python tests/realserver/verdicts.py --write"


def test_round3_blind_verdicts_are_published() -> None:
    """docs/real-server.md's round-3 "before" columns are the blind runs kept in expected.yaml, and the
    headline figures (round 3: 12 of 21 recognised, 1 wrong, 7 silent; round 3b: 2 of 6, 0 wrong, 3
    silent; round 3c: 3 of 5 failures and the near miss, 2 silent; before any rule change) add up."""
    from tests.realserver.verdicts import DOC

    text = DOC.read_text()
    before = {e["scenario"]: (e.get("round", "3"), e["before"]) for e in EXPECTED if "before" in e}
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and cells[0] in before:
            rows[cells[0]] = cells[2]
    assert rows == {s: b for s, (_, b) in before.items()}

    def counts(rnd: str) -> dict[str, int]:
        firsts = [b.split(",")[0] for r, b in before.values() if r == rnd]
        return {"all": len(firsts), **{v: firsts.count(v) for v in ("correct", "wrong", "silent")}}

    assert counts("3") == {"all": 21, "correct": 12, "wrong": 1, "silent": 7}
    assert counts("3b") == {"all": 6, "correct": 2, "wrong": 0, "silent": 3}
    assert counts("3c") == {"all": 6, "correct": 4, "wrong": 0, "silent": 2}  # one correct is the healthy near miss
    assert "**12 of 21 recognised by the right rule**" in text
    assert "**Before any\nchange: 2 of 6 recognised by the right rule" in text
    assert "**Before any change: 3 of the 5 failures\nrecognised by the right rule, 0 wrong, 2 silent" in text


WITH_CMDLINE = [e for e in EXPECTED if e.get("cmdline_rules")]


@pytest.mark.parametrize("entry", WITH_CMDLINE, ids=[e["scenario"] for e in WITH_CMDLINE])
def test_cause_named_first_with_the_command_line(knowledge, entry) -> None:
    """Some causes are only in the command line (-c 8k): given it, as `--cmdline` gives it, the rule
    that names the cause comes first."""
    prov = {p["scenario"]: p for p in yaml.safe_load((REAL / "provenance.yaml").read_text())["logs"]}
    report = analyze_file(knowledge, REAL / f"{entry['scenario']}.log", cmdline=prov[entry["scenario"]]["command_line"])
    assert report.findings, "nothing found with the command line"
    assert report.findings[0].rule_id in entry["cmdline_rules"], [f.rule_id for f in report.findings]
