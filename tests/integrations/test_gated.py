"""`GatedTool`: the one gated, traced call every framework integration makes."""

from __future__ import annotations

from typing import Any

import anyio

from schemawire import Repository, Trace
from schemawire.integrations import GatedTool, gated_tools, model_text
from schemawire.trace import span_tree

SUPPORT_DESK = Repository.load("examples/support-desk")


def _weather_tool(trace: Trace) -> tuple[GatedTool, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def get_weather(**arguments: Any) -> dict[str, Any]:
        seen.append(arguments)
        return {"city": arguments["city"], "temp_c": 18.0, "condition": "晴"}

    [tool] = gated_tools(SUPPORT_DESK, {"get_weather": get_weather}, trace)
    return tool, seen


def test_a_refused_call_never_reaches_the_function_and_reads_as_our_error() -> None:
    trace = Trace(run_id="gated")
    tool, seen = _weather_tool(trace)
    record = anyio.run(tool.call, '{"city": "上海", "unit": "kelvin"}', "call_1")
    assert seen == []
    assert record.status == "refused"
    assert record.output.is_error
    assert '"pointer":"/unit"' in model_text(record)
    [node] = span_tree(trace.hops).roots
    assert (node.kind, node.name, node.status) == ("tool", "get_weather", "refused")


def test_an_accepted_call_runs_once_with_the_gate_s_value_and_its_result_is_checked() -> None:
    trace = Trace(run_id="gated")
    tool, seen = _weather_tool(trace)
    record = anyio.run(tool.call, {"city": "上海"})
    assert seen == [{"city": "上海"}]
    assert record.status == "ok"
    assert record.result is not None
    assert record.result.accepted
    assert record.call.call_id.startswith("sw_")
    assert model_text(record) == '{"city":"上海","temp_c":18.0,"condition":"晴"}'
    gates = [hop.verdict["gate"] for hop in trace.hops if hop.verdict is not None]
    assert gates == ["arguments", "results"]


def test_a_result_that_breaks_the_output_schema_is_refused_by_the_result_gate() -> None:
    trace = Trace(run_id="gated")
    [tool] = gated_tools(SUPPORT_DESK, {"get_weather": lambda **_: {"temp_c": "warm"}}, trace)
    record = anyio.run(tool.call, {"city": "上海"})
    assert record.status == "refused"
    assert '"code":"result_invalid"' in model_text(record)


def test_the_tool_is_named_and_described_as_its_schema_says() -> None:
    tool, _ = _weather_tool(Trace())
    assert tool.name == "get_weather"
    assert tool.description == tool.runner.spec.input_schema["description"] != ""
