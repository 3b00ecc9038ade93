"""Shipped sample logs re-shaped the way users paste them still give the same findings (issue 15).

Each shape is applied to a whole sample log (or to its failure lines); the rule ids, and
where nothing was cut their confidence, must stay those of the log as shipped.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from llamadiag.api import diagnose_text
from tests.paths import ROOT

LOGS = [
    "backends-cuda-no-kernel-image-b4589.log",  # a signature over 100+ lines, raw default log
    "context-batch-positions-b7003-docker-t.log",  # continuation lines, docker -t
    "memory-cuda-oom-b4589-raw.log",
    "backends-vulkan-device-lost-journald.log",
    "speculative-dflash-mtmd-chunk-router.log",
]

GIN = '[GIN] 2024/05/01 - 10:00:00 | 200 |      41.983µs |       127.0.0.1 | HEAD     "/"'
OLLAMA = 'time=2024-05-01T10:00:00.000Z level=INFO source=server.go:123 msg="waiting for server" status="llm server"'


def _lines(name: str) -> list[str]:
    return (ROOT / "sample_logs" / name).read_text(encoding="utf-8").splitlines()


def _findings(text: str, knowledge) -> set[tuple[str, str]]:
    return {(f.rule_id, f.confidence) for f in diagnose_text(text, knowledge=knowledge).report.findings}


def _interleaved(lines: list[str]) -> list[str]:
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        if i % 2:  # between an entry and its continuation lines too
            out += [GIN, OLLAMA]
    return out


def _ollama_msg(line: str) -> str:
    escaped = line.replace("\\", "\\\\").replace('"', '\\"')
    return f'time=2024-05-01T10:00:00.000Z level=INFO source=runner.go:1 msg="{escaped}"'


SHAPES: dict[str, Callable[[list[str]], list[str]]] = {
    "quote": lambda ls: ["> " + x for x in ls],
    "nested-quote-fence": lambda ls: ["> > ```text", *["> > " + x for x in ls], "> > ```"],
    "table-row": lambda ls: ["| log |", "|---|", *[f"| {x} |" for x in ls]],
    "bullets": lambda ls: ["- " + x for x in ls],
    "numbered": lambda ls: [f"{i + 1}. {x}" for i, x in enumerate(ls)],
    "ollama-interleaved": _interleaved,
    "ollama-msg": lambda ls: [_ollama_msg(x) for x in ls],
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", LOGS)
def test_reshaped_log_keeps_its_findings(knowledge, name: str, shape: str) -> None:
    lines = _lines(name)
    if shape == "numbered":
        lines = lines[:999]  # a numbered list of a paste: at most three digits
    expected = _findings("\n".join(lines) + "\n", knowledge)
    assert expected, name
    assert _findings("\n".join(SHAPES[shape](lines)) + "\n", knowledge) == expected


def test_python_exception_quoting_a_server_error_body(knowledge) -> None:
    paste = """Traceback (most recent call last):
  File "/home/u/poll.py", line 12, in <module>
    r = client.get("/metrics")
  File "/usr/lib/python3.12/site-packages/openai/_base_client.py", line 1037, in _request
    raise self._make_status_error_from_response(err.response) from None
openai.APIStatusError: Error code: 501 - {'error': {'code': 501, 'message': 'This server does not support metrics endpoint. Start it with `--metrics`', 'type': 'not_supported_error'}}
"""
    body = '{"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with `--metrics`","type":"not_supported_error"}}\n'
    assert _findings(paste, knowledge) == _findings(body, knowledge)
    assert {r for r, _ in _findings(paste, knowledge)} == {"monitoring-endpoint-disabled"}


def _evidence(name: str, knowledge) -> tuple[list[str], str, list[int]]:
    lines = _lines(name)
    finding = diagnose_text("\n".join(lines) + "\n", knowledge=knowledge).report.findings[0]
    return lines, finding.rule_id, [e.line for e in finding.evidence]


ELIDED = ["backends-cuda-no-kernel-image-b4589.log", "memory-cuda-oom-b4589-raw.log", "backends-vulkan-device-lost-journald.log"]


@pytest.mark.parametrize("marker", ["...", "[...]", "<snip>", "(truncated)", "…"])
@pytest.mark.parametrize("name", ELIDED)
def test_cut_between_evidence_lines_still_matches_at_most_likely(knowledge, name: str, marker: str) -> None:
    lines, rule_id, evidence = _evidence(name, knowledge)
    first, last = evidence[0], evidence[-1]
    # the start of the log, then only the evidence lines, each cut from the next
    kept = lines[: first - 1]
    for n in range(first, last + 1):
        if n in evidence:
            kept.append(lines[n - 1])
        elif kept[-1] != marker:
            kept.append(marker)
    found = diagnose_text("\n".join(kept) + "\n", knowledge=knowledge).report.findings
    mine = [f for f in found if f.rule_id == rule_id]
    assert mine and mine[0].confidence == "likely"
    assert any("cuts lines out" in q for q in mine[0].questions)


def test_a_counted_cut_keeps_the_window(knowledge) -> None:
    """`... N lines omitted ...` stands for N lines: a cut wider than the signature's window
    leaves the lines as unrelated as they were in the whole log."""
    lines, rule_id, evidence = _evidence("memory-cuda-oom-b4589-raw.log", knowledge)
    first, last = evidence[0], evidence[-1]
    head = lines[:first]
    tail = [lines[n - 1] for n in range(first + 1, last + 1)]
    cut = len(head) + 1

    def spanning(marker: str) -> list:
        found = diagnose_text("\n".join([*head, marker, *tail]) + "\n", knowledge=knowledge).report.findings
        return [f for f in found if f.rule_id == rule_id and f.evidence[0].line < cut < f.evidence[-1].line]

    near = spanning("... 1 lines omitted ...")
    assert near and near[0].confidence == "likely"
    assert spanning("... 100000 lines omitted ...") == []  # a single-line signature may still name it


@pytest.mark.parametrize(
    "gaps,matched,elided",
    [
        ([], False, False),  # lines 1 and 5 are 4 apart: past a window of 3
        ([(2, None)], True, True),  # an elision of unknown size is not a line: 3 shown lines apart
        ([(2, 1)], False, True),  # "1 line omitted": as in the whole log, 4 apart
        ([(2, 50)], False, True),
        ([(7, None)], False, False),  # an elision after the lines changes nothing
    ],
)
def test_window_across_an_elision(gaps, matched, elided) -> None:
    import regex

    from llamadiag.engine.envelope import Line
    from llamadiag.engine.matcher import SignatureMatcher
    from llamadiag.knowledge.rulemodel import Signature

    sig = Signature.model_validate({"name": "two", "entries": [{"regex": "first"}, {"regex": "second"}], "within": 3})
    matcher = SignatureMatcher(0, sig, [regex.compile("first"), regex.compile("second")], list(gaps))
    assert matcher.observe(Line(1, "first"), {0}) == []
    done = matcher.observe(Line(5, "second"), {1})
    assert bool(done) == matched
    if done:
        assert done[0].elided == elided
    assert matcher.span(1, 5)[1] == elided


@pytest.mark.parametrize("shape", ["ollama-interleaved", "quote", "table-row", "elided"])
def test_reshaped_generated_log_same_on_every_path(knowledge, tmp_path, shape: str) -> None:
    """The scanner's shortcuts, the bulk path and small blocks give what the full entry path gives."""
    import random

    from tests.engine.scan.test_scan import ENGINES, _gen, _json, _report

    gen = _gen()
    pool = gen.failures()
    turn = iter(range(10**6))
    lines = gen.session("raw", random.Random(5), 300, lambda: pool[next(turn) % len(pool)], every=20)
    if shape == "elided":
        lines = [x for i, x in enumerate(lines) for x in ([x, "[...]"] if i % 37 == 5 else [x])]
    else:
        lines = SHAPES[shape](lines)
    path = tmp_path / f"{shape}.log"
    path.write_text("\n".join(lines * 2) + "\n")
    plain = _json(_report(knowledge, path, shortcuts=False))
    for engine in ENGINES:
        assert _json(_report(knowledge, path, engine)) == plain
    assert _json(_report(knowledge, path, bulk=False, block=4096)) == plain
    assert _json(_report(knowledge, path, block=777)) == plain


def test_whole_evidence_later_in_the_run_lifts_the_cap(knowledge) -> None:
    lines, rule_id, evidence = _evidence("memory-cuda-oom-b4589-raw.log", knowledge)
    first, last = evidence[0], evidence[-1]
    cut = [lines[first - 1], "[...]", lines[last - 1]]
    whole = lines[first - 1 : last]
    found = diagnose_text("\n".join([*lines[: first - 1], *cut, *whole]) + "\n", knowledge=knowledge).report.findings
    mine = [f for f in found if f.rule_id == rule_id]
    assert mine and mine[0].confidence == "confirmed" and mine[0].count == 2
