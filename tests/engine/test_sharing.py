"""What the grouped summary keeps per ended run holds equal texts once (engine/sharing.py):
two findings of one rule in different runs share their rule's texts and references, two runs
their fact names and sources, and the report is the same as without sharing."""

from __future__ import annotations

from typing import Any

from llamadiag.engine.analyze import Analyzer
from llamadiag.engine.findings import FactUse, RunOut
from llamadiag.engine.reportdata import dump
from llamadiag.engine.sharing import Sharing
from llamadiag.knowledge.loader import Knowledge
from tests.paths import SAMPLES

MISSING = (SAMPLES / "real" / "model-file-missing.log").read_text()  # start-up, then exit: no such file
# runs that each differ in the model's path: each is a finding and a run entry of its own
LOG = "".join(MISSING.replace("no-such-model.gguf", f"model-{i}.gguf") for i in range(6))


class _NoSharing(Sharing):
    def finding(self, f: Any) -> Any:
        return f

    def run(self, r: RunOut) -> RunOut:
        return r


def _analyzed(knowledge: Knowledge, sharing: Sharing | None = None) -> Analyzer:
    analyzer = Analyzer(knowledge)
    if sharing is not None:
        analyzer.sharing = sharing
    analyzer.feed_bytes(LOG.encode())
    return analyzer


def test_findings_of_one_rule_in_different_runs_share_their_texts(knowledge: Knowledge) -> None:
    analyzer = _analyzed(knowledge)
    report = analyzer.report()
    findings = [f for f in report.findings if f.rule_id == "model-file-not-found"]
    assert len(findings) == 6 and len({f.values["path"] for f in findings}) == 6
    first, *others = findings
    assert first.references and first.remediation
    for f in others:
        assert f.root_cause is first.root_cause and f.summary is first.summary
        assert all(a is b for a, b in zip(f.references, first.references, strict=True))
        assert all(a is b for a, b in zip(f.verification, first.verification, strict=True))


def test_runs_share_fact_names_and_sources(knowledge: Knowledge) -> None:
    runs = _analyzed(knowledge).report().runs
    assert len(runs) == 6
    shared = set(runs[0].fact_sources) & set(runs[-1].fact_sources)
    same = [n for n in shared if runs[0].fact_sources[n] == runs[-1].fact_sources[n]]
    assert same
    for name in same:
        assert runs[0].fact_sources[name] is runs[-1].fact_sources[name]


def test_the_report_is_the_same_without_sharing(knowledge: Knowledge) -> None:
    shared = dump(_analyzed(knowledge).report())
    assert shared == dump(_analyzed(knowledge, _NoSharing()).report())


def test_parts_equal_in_python_but_not_in_the_report_are_kept_apart() -> None:
    sharing = Sharing()
    one = sharing.part(FactUse(value=1, line=3, source="log"))
    for other in (FactUse(value=1.0, line=3, source="log"), FactUse(value=True, line=3, source="log")):
        assert sharing.part(other) is not one
    zero = sharing.part(FactUse(value=0.0, line=None, source="log"))
    assert sharing.part(FactUse(value=-0.0, line=None, source="log")) is not zero
    listed = FactUse(value=["a"], line=None, source="log")
    assert sharing.part(listed) is listed
