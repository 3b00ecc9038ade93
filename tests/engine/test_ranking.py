"""Ranking across runs: a cause found in a router child's own lines comes before the router's
report of that child exiting (the rule of the cause supersedes the generic one)."""

from __future__ import annotations

from llamadiag.api import diagnose_text, load_knowledge

# a router log as its children's lines reach it: the child's lines carry its port as a prefix
ROUTER_LOG = """\
srv    operator(): spawning server instance with name=Qwen3 on port 50687
[50687] main: model loaded
[50687] main: server is listening on http://127.0.0.1:50687
[50687] main: starting the main loop...
[50687] srv  setup_child_: notifying router server (port=443) that model Qwen3 is ready
[50687] srv  setup_child_: failed to notify router server: Failed to read connection
srv    operator(): instance name=Qwen3 exited with status 1
"""


def _order(text: str) -> list[tuple[str, int]]:
    report = diagnose_text(text, knowledge=load_knowledge()).report
    return [(f.rule_id, f.run) for f in report.findings]


def test_the_childs_cause_ranks_before_the_routers_exit_line() -> None:
    order = _order(ROUTER_LOG)
    ids = [rule_id for rule_id, _ in order]
    assert ids[:2] == ["router-child-notify-failed", "router-child-exited"], order
    runs = dict(order)
    # the router's run comes first: by position alone its exit line would rank first
    assert runs["router-child-exited"] < runs["router-child-notify-failed"]


def test_the_exit_line_alone_still_ranks_first() -> None:
    ids = [rule_id for rule_id, _ in _order(ROUTER_LOG.replace("failed to notify router server: Failed to read connection", "ok"))]
    assert ids and ids[0] == "router-child-exited"
