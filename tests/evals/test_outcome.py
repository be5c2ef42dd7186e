"""Reading what a run did from its hops (the same reading for a live trace and a file)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire.evals import read_outcome
from schemawire.evals.expect import same_json
from schemawire.trace import Trace
from tests.evals.cases import chat


def flow_hops(*route: Any, checkpoint: bool = True) -> Trace:
    trace = Trace()
    trace.record("host", "agent:triage", "flow", "send", {"input": "refund A-1042"})
    trace.record("agent:triage", "host", "handoff", "check", {"handoff": {}, "route": route[0]})
    if checkpoint:
        trace.record(
            "host",
            "store",
            "checkpoint",
            "send",
            {"step": 1, "state": {"a": 1}, "node": route[1], "next_input": {}},
        )
    return trace


def test_the_route_is_where_the_checkpoint_after_the_handoff_goes() -> None:
    outcome = read_outcome(flow_hops("confident refund", "billing").hops)
    assert (outcome.route, outcome.handoff, outcome.status) == ("billing", "routed", "failed")
    assert read_outcome(flow_hops("end (fallback)", None).hops).route == "end"


def test_without_a_checkpoint_the_route_is_named_by_the_flow() -> None:
    hops = flow_hops("confident refund", checkpoint=False).hops
    assert read_outcome(hops).route == "confident refund"
    assert read_outcome(hops, {("triage", "confident refund"): "billing"}).route == "billing"


def test_a_refused_handoff_has_no_route() -> None:
    outcome = read_outcome(flow_hops(None, checkpoint=False).hops)
    assert (outcome.route, outcome.handoff, outcome.status) == (None, "refused", "failed")


def test_a_flow_whose_last_checkpoint_has_no_next_agent_is_done() -> None:
    outcome = read_outcome(flow_hops("end (fallback)", None).hops)
    assert (outcome.status, outcome.state, outcome.output) == ("done", {"a": 1}, {})
    assert outcome.input == "refund A-1042"


def test_python_and_mcp_calls_are_read_in_order() -> None:
    trace = Trace()
    trace.record("user", "host", "text", "receive", {"text": "q"})
    trace.record(
        "host", "python:a", "python", "send", {"call": "1", "tool": "a", "arguments": {"x": 1}}
    )
    trace.record(
        "host",
        "mcp:s",
        "mcp",
        "send",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "b", "arguments": {"y": 2}},
        },
    )
    trace.record("host", "mcp:s", "mcp", "send", {"method": "tools/list"})
    outcome = read_outcome(trace.hops)
    assert [(c.tool, c.arguments, c.via) for c in outcome.calls] == [
        ("a", {"x": 1}, "python"),
        ("b", {"y": 2}, "mcp"),
    ]
    assert outcome.input == "q"


def test_one_agent_is_done_when_its_last_response_answers() -> None:
    trace = Trace()
    trace.record("host", "model:openai.chat", "openai.chat", "send", {"model": "m"})
    trace.record("model:openai.chat", "host", "openai.chat", "receive", chat("hi"))
    outcome = read_outcome(trace.hops)
    assert (outcome.status, outcome.output, outcome.responses[0].model) == ("done", "hi", "m")
    trace.record("model:openai.chat", "host", "openai.chat", "receive", chat(None, ("a", {})))
    assert read_outcome(trace.hops).status == "failed"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@given(JSON, JSON)
def test_same_json_is_an_equivalence(a: Any, b: Any) -> None:
    assert same_json(a, a)
    assert same_json(a, b) == same_json(b, a)


def test_same_json_tells_booleans_from_numbers_but_not_integers_from_floats() -> None:
    assert not same_json(True, 1)
    assert not same_json([False], [0])
    assert same_json(20, 20.0)
    assert same_json({"amount": 20}, {"amount": 20.0})


def test_a_call_from_no_agent_is_said_so_not_written_as_none() -> None:
    from schemawire.evals.expect import check_expectations
    from schemawire.evals.outcome import ObservedCall, Outcome
    from schemawire.schema.repository import Repository
    from tests.evals.cases import REFUND

    outcome = Outcome("done", calls=[ObservedCall("lookup_order", {"order_id": "A-1"})])
    expect = {"calls": [{"tool": "lookup_order", "agent": "billing"}]}
    assert check_expectations(expect, outcome, Repository.load(REFUND)) == [
        (
            "/expect/calls/0/agent",
            "call 1 (lookup_order): expected it from agent `billing`, it came from no agent "
            "of a flow",
        )
    ]
