"""The bulk path's stop finding (livestops.py, stops.py): fewer stops, the same report.

A signature start is queued in bulk unless its own entry may be longer than its line, however
many continuation lines the stretch holds elsewhere; the standard-library finder reads a hit
line's literals from its own search. Each is checked against the per-line path's report.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llamadiag.engine.scan.stops import LineLiterals, rare_byte_regex
from tests.engine.scan.test_scan import ENGINES, _gen, _json, _report, stretches


@pytest.mark.parametrize("engine", ENGINES)
def test_timing_blocks_do_not_stop_a_stretch_at_each_request(knowledge, tmp_path: Path, engine: str) -> None:
    """b7003 in `docker logs -t`: each request's `new prompt` line starts a two-entry signature
    (queued) and its timings are one multi-line block (continuation lines). The stretch used to
    end at every such start once the stretch held a continuation line: one stop per request."""
    requests = 400
    lines = _gen("gen_requests").session("b7003-docker", random.Random(9), requests, [], 10**9)
    path = tmp_path / "b7003-docker.log"
    path.write_text("\n".join(lines) + "\n")
    stops, fast = stretches(knowledge, path, engine)
    assert stops < requests / 10  # 420 before, one a request
    assert fast == _json(_report(knowledge, path, shortcuts=False))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_start_joined_by_a_continuation_is_not_queued_alone(knowledge, tmp_path: Path, engine: str) -> None:
    """A `new prompt` line right after which a timing continuation line is printed (a
    continuation joins the line before it into one entry) and then the refusal of the same
    task: the finding's evidence is the joined entry, as the per-line path reads it, not the
    start's line alone. Without the check on the line after a start, this log's report
    differed from the per-line path's."""
    lines = _gen("gen_requests").session("b7003-docker", random.Random(4), 120, [], 10**9)
    at = next(i for i in range(len(lines) // 2, len(lines)) if "log_server_r: done request" in lines[i]) + 1
    stamp = lines[at - 1].split(" ", 1)[0]
    lines[at:at] = [
        f"{stamp} slot update_slots: id  0 | task 9001 | new prompt, n_ctx_slot = 4096, n_keep = 0, task.n_tokens = 9000",
        f"{stamp}        eval time =      10.00 ms /     1 tokens (   10.00 ms per token,   100.00 tokens per second)",
        f"{stamp} srv    send_error: task id = 9001, error: the request exceeds the available context size, try increasing it",
    ]
    path = tmp_path / "joined-start.log"
    path.write_text("\n".join(lines) + "\n")
    plain = _json(_report(knowledge, path, shortcuts=False))
    assert _json(_report(knowledge, path, engine)) == plain
    assert _json(_report(knowledge, path, engine, block=333)) == plain
    assert "context-size-exceeded" in plain


@given(
    literals=st.lists(st.binary(min_size=1, max_size=5).map(lambda b: b.replace(b"\n", b"x")), min_size=1, max_size=8),
    line=st.binary(max_size=80).map(lambda b: b.replace(b"\n", b"y")),
    routine=st.binary(max_size=60),
)
@settings(max_examples=300, deadline=None)
def test_a_line_s_literals_from_the_rare_byte_search(literals: list[bytes], line: bytes, routine: bytes) -> None:
    """stops.LineLiterals: exactly the literals the line holds, read from the search's matches."""
    pattern = rare_byte_regex(literals, Counter(routine))
    ids = list(enumerate(literals))
    block = b"zz\n" + line + b"\n"
    m = pattern.search(block, 3)
    expected = frozenset(i for i, lit in ids if lit in line)
    if m is None:
        assert not expected
        return
    assert LineLiterals(pattern, ids).of_line(block, m, 3, len(block)) == expected


SHAPES = ("b5060", "b5060-prefix", "b7003-docker", "b9700-lv4", "b9700-iso", "b11-lv4", "b11-journald")


@pytest.mark.parametrize("shape", SHAPES)
def test_a_healthy_request_stream_does_not_stop_at_each_request(knowledge, tmp_path: Path, shape: str) -> None:
    """The shipped rules' literals, on each era's per-request lines (bench/gen_requests.py): a
    rule whose literal is on a line every request prints (`n_ctx_slot = ` of the `new prompt`
    line, once) made the bulk path stop once a request and tripled the scan's time."""
    requests = 300
    lines = _gen("gen_requests").session(shape, random.Random(5), requests, [], 10**9)
    path = tmp_path / f"{shape}.log"
    path.write_text("\n".join(lines) + "\n")
    stops, _ = stretches(knowledge, path, ENGINES[-1])
    assert stops < requests / 10
