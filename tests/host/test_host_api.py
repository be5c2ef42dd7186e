"""The host as its first caller meets it: a model named by a string, `run_sync`, MCP servers the
host connects itself (one trace for everything), runners that carry their repository, and a
Python tool whose result gate is there without being asked for."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemawire import (
    Host,
    McpClient,
    PythonTool,
    Repository,
    ScriptedModel,
    StdioServer,
    ToolSpec,
    Trace,
    UsageError,
    python_tools,
    read_trace,
)
from tests.helpers import EXAMPLES

SUPPORT_DESK = EXAMPLES / "support-desk"
REFUND = {"order_id": "A-1042", "amount": 5, "reason": "late"}


def calls(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


def says(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def script_file(tmp_path: Path, *responses: dict[str, Any]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"api": "openai.chat", "responses": list(responses)}))
    return path


def refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
    return {"refund_id": "R-1", "order_id": order_id, "amount": amount, "status": "pending"}


def serve_support_desk() -> StdioServer:
    return StdioServer(sys.executable, ("-m", "schemawire", "serve", str(SUPPORT_DESK)))


def tool_results(request: dict[str, Any]) -> list[Any]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_a_host_takes_the_model_as_a_string_and_runs_without_async(tmp_path: Path) -> None:
    repository = Repository.load(SUPPORT_DESK)
    script = script_file(tmp_path, calls("create_refund", REFUND), says("Refund R-1 filed."))
    host = Host(f"script:{script}", python_tools(repository, {"create_refund": refund}))
    result = host.run_sync("Refund 5 on A-1042, it came late.")
    assert (result.stopped, result.answer) == ("answer", "Refund R-1 filed.")
    assert result.calls[0].result is not None
    assert result.calls[0].result.accepted


def test_run_sync_inside_an_event_loop_says_to_await_run() -> None:
    host = Host(ScriptedModel("openai.chat", [says("hi")]))

    async def inside() -> None:
        host.run_sync("hello")

    with pytest.raises(UsageError, match=r"await host\.run"):
        anyio.run(inside)


def test_a_model_string_that_names_nothing_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="PROVIDER:NAME"):
        Host("gpt-4.1-mini")


@pytest.mark.slow
def test_the_host_connects_its_mcp_servers_for_a_run_and_traces_them_with_its_own_hops() -> None:
    model = ScriptedModel("openai.chat", [calls("create_refund", REFUND), says("Filed.")])
    repository = Repository.load(SUPPORT_DESK)
    host = Host(model, mcp=[serve_support_desk()], repository=repository)
    assert host.catalogue.projections == ()  # the servers' tools are listed once connected
    result = host.run_sync("Refund 5 on A-1042, it came late.")
    assert result.stopped == "answer"
    assert tool_results(model.requests[1])[0]["status"] == "pending"
    protocols = {hop.protocol for hop in host.trace.hops}
    assert {"mcp", "openai.chat", "gate"} <= protocols  # one trace: the JSON-RPC is in it
    assert host.catalogue.projections == ()  # disconnected after the run


@pytest.mark.slow
def test_inside_async_with_the_servers_are_connected_once_for_every_run() -> None:
    responses = [calls("get_weather", {"city": "Paris"}), says("11.5"), says("still 11.5")]
    host = Host(ScriptedModel("openai.chat", responses), mcp=[serve_support_desk()])

    async def two_runs() -> list[str]:
        async with host:
            assert [p.name for p in host.catalogue.projections] == [
                "get_weather",
                "create_refund",
            ]
            first = await host.run("Weather in Paris?")
            second = await host.run("And now?")
        return [first.stopped, second.stopped]

    assert anyio.run(two_runs) == ["answer", "answer"]
    handshakes = [
        hop
        for hop in host.trace.hops
        if hop.protocol == "mcp"
        and isinstance(hop.payload, dict)
        and hop.payload.get("method") in ("initialize", "server/discover")
    ]
    assert len(handshakes) == 1


@pytest.mark.slow
def test_a_host_given_an_mcp_clients_tools_records_to_the_clients_trace() -> None:
    repository = Repository.load(SUPPORT_DESK)

    async def run() -> tuple[Host, Trace]:
        from schemawire import mcp_tools

        async with McpClient(serve_support_desk(), repository=repository) as client:
            model = ScriptedModel("openai.chat", [calls("get_weather", {"city": "x"}), says(".")])
            host = Host(model, await mcp_tools(client))
            await host.run("weather?")
            return host, client.trace

    host, client_trace = anyio.run(run)
    assert host.trace is client_trace
    assert [h.seq for h in host.trace.hops] == list(range(1, len(host.trace.hops) + 1))


def test_a_python_tool_built_in_code_has_a_result_gate_of_its_own() -> None:
    output = {"type": "object", "required": ["temp"], "properties": {"temp": {"type": "number"}}}
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    spec = ToolSpec("weather", schema, output)
    tool = PythonTool(spec, lambda city: {"temp": "warm"})
    model = ScriptedModel("openai.chat", [calls("weather", {"city": "Paris"}), says("?")])
    Host(model, [tool]).run_sync("weather?")
    (error,) = tool_results(model.requests[1])
    assert error["error"]["code"] == "result_invalid"
    assert error["error"]["violations"][0]["pointer"] == "/temp"


def test_a_runner_from_a_repository_resolves_its_references_when_projected() -> None:
    repository = Repository.load(SUPPORT_DESK)
    host = Host(
        ScriptedModel("openai.chat", []), python_tools(repository, {"create_refund": refund})
    )
    payload = json.dumps(host.catalogue.projections[0].payload)
    assert "$ref" not in payload
    assert '"order_id"' in payload


def test_a_tool_whose_references_nothing_resolves_is_refused_before_any_request() -> None:
    schema = {"type": "object", "properties": {"order": {"$ref": "common/order.json"}}}
    spec = ToolSpec("lookup", schema)
    runner = PythonTool(spec, lambda order: order, validator=None)
    with pytest.raises(UsageError, match=r"\$ref at /properties/order"):
        Host(ScriptedModel("openai.chat", []), [runner])


def test_a_python_tool_gets_an_int_where_the_model_wrote_an_integral_float() -> None:
    schema = {"type": "object", "properties": {"limit": {"type": "integer"}}, "required": ["limit"]}
    tool = PythonTool(ToolSpec("first", schema), lambda limit: list(range(limit)))
    model = ScriptedModel("openai.chat", [calls("first", {"limit": 3.0}), says("0, 1, 2")])
    Host(model, [tool]).run_sync("the first three")
    assert tool_results(model.requests[1]) == [[0, 1, 2]]


@pytest.mark.slow
def test_a_host_given_a_trace_has_a_client_without_one_record_its_calls_there() -> None:
    repository = Repository.load(SUPPORT_DESK)
    trace = Trace()

    async def run() -> None:
        from schemawire import mcp_tools

        async with McpClient(serve_support_desk(), repository=repository) as client:
            model = ScriptedModel("openai.chat", [calls("get_weather", {"city": "x"}), says(".")])
            await Host(model, await mcp_tools(client), trace=trace).run("weather?")

    anyio.run(run)
    methods = [h.payload.get("method") for h in trace.hops if h.protocol == "mcp"]
    assert "tools/call" in methods


@pytest.mark.slow
def test_a_client_given_its_own_trace_keeps_it() -> None:
    repository = Repository.load(SUPPORT_DESK)
    own, hosts = Trace(), Trace()

    async def run() -> None:
        from schemawire import mcp_tools

        async with McpClient(serve_support_desk(), repository=repository, trace=own) as client:
            model = ScriptedModel("openai.chat", [calls("get_weather", {"city": "x"}), says(".")])
            await Host(model, await mcp_tools(client), trace=hosts).run("weather?")

    anyio.run(run)
    assert not [h for h in hosts.hops if h.protocol == "mcp"]
    assert [h for h in own.hops if h.protocol == "mcp" and h.payload.get("method") == "tools/call"]


def test_python_tools_without_functions_are_the_repositorys_serve_tools() -> None:
    repository = Repository.load(SUPPORT_DESK)
    tools = python_tools(repository)
    assert [tool.spec.name for tool in tools] == ["get_weather", "create_refund"]
    model = ScriptedModel("openai.chat", [calls("get_weather", {"city": "Paris"}), says("11.5")])
    Host(model, tools).run_sync("weather in Paris?")
    assert tool_results(model.requests[1]) == [
        {"city": "Paris", "temp_c": 11.5, "condition": "cloudy"}
    ]


def test_a_huge_integral_float_for_an_integer_runs_and_is_traced_as_sent(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tool = PythonTool(ToolSpec("grow", schema), lambda n: {"n": n})
    model = ScriptedModel("openai.chat", [calls("grow", {"n": 1e20}), says("big")])
    with Trace(path=tmp_path / "run.jsonl") as trace:
        assert Host(model, [tool], trace=trace).run_sync("grow 1e20").answer == "big"
    (sent,) = [h for h in read_trace(tmp_path / "run.jsonl") if h.target == "python:grow"]
    assert sent.payload["arguments"] == {"n": 1e20}


def test_a_trace_file_keeps_an_integer_past_64_bits_exact(tmp_path: Path) -> None:
    with Trace(path=tmp_path / "run.jsonl") as trace:
        trace.record("host", "store", "checkpoint", "send", {"n": 10**40})
    (hop,) = read_trace(tmp_path / "run.jsonl")
    assert hop.payload == {"n": 10**40}


def test_a_runner_of_the_callers_own_needs_no_repository_member() -> None:
    from schemawire.gates import ResultGate, Verdict

    spec = ToolSpec("echo", {"type": "object", "properties": {"text": {"type": "string"}}})

    class Echo:
        """A runner written by hand: the protocol's members but the optional repository."""

        def __init__(self) -> None:
            self.spec, self.validator = spec, None

        async def run(self, call_id: str, accepted: Verdict, trace: Trace) -> Verdict:
            return ResultGate(spec).check(accepted.value, call_id=call_id)

    model = ScriptedModel("openai.chat", [calls("echo", {"text": "hi"}), says("hi")])
    Host(model, [Echo()]).run_sync("say hi")
    assert tool_results(model.requests[1]) == [{"text": "hi"}]


@pytest.mark.slow
def test_runs_that_overlap_each_connect_and_close_their_own_servers() -> None:
    model = ScriptedModel("openai.chat", [says("one"), says("two")])
    host = Host(model, mcp=[serve_support_desk()])

    async def overlapping() -> list[str]:
        answers: list[str] = []

        async def ask(question: str) -> None:
            answers.append((await host.run(question)).answer or "")

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(ask, "first")
                group.start_soon(ask, "second")
        return sorted(answers)

    assert anyio.run(overlapping) == ["one", "two"]
    offered = [len(request["tools"]) for request in model.requests]
    assert offered == [2, 2]  # each run saw the servers' tools, whatever the other did
    assert host.catalogue.projections == ()  # and nothing stays connected
    methods = [h.payload.get("method") for h in host.trace.hops if h.direction == "send"]
    assert len([m for m in methods if m in ("initialize", "server/discover")]) == 2
