"""The LangChain integration against the real framework: `StructuredTool`s run by LangGraph's
`ToolNode` in a small agent graph (a model node and the tool node in a loop), the model one of
LangChain's own fake chat models, scripted per test: no network."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from schemawire.errors import UsageError
from schemawire.gates import Route
from schemawire.host.tools import McpTool
from schemawire.integrations.langchain import (
    RunSpans,
    handoff_tool,
    mcp_structured_tools,
    structured_tool_of,
    structured_tools,
)
from schemawire.mcp import McpClient, StdioServer
from schemawire.schema.repository import Repository
from schemawire.trace import Trace, read_trace, span_tree
from schemawire.types import ToolSpec

ROOT = Path(__file__).resolve().parents[2]
SUPPORT_DESK = ROOT / "examples" / "support-desk"
PAGE = ROOT / "docs" / "integrations" / "langchain.md"
SECRET = json.loads((ROOT / "tests/data/secrets.json").read_text(encoding="utf-8"))["secrets"][0]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # LangGraph's async graphs run on asyncio


KELVIN = ("get_weather", {"city": "Paris", "unit": "kelvin"})
CELSIUS = ("get_weather", {"city": "Paris"})


class Weather:
    """get_weather's implementation, remembering every call it was given."""

    def __init__(self, answer: Any = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.answer = answer

    def __call__(self, **arguments: Any) -> Any:
        self.calls.append(arguments)
        if self.answer is not None:
            return self.answer
        return {"city": arguments["city"], "temp_c": 11.5, "condition": "cloudy"}


def weather_tools(weather: Weather, trace: Trace | None = None) -> list[BaseTool]:
    return list(structured_tools(SUPPORT_DESK, {"get_weather": weather}, trace=trace))


Turn = tuple[str, dict[str, Any]] | str  # one tool call, or the model's final answer


class Agent:
    """The smallest LangGraph agent: a model node (a scripted `GenericFakeChatModel`) and a
    `ToolNode` in a loop, ended by `tools_condition` when the model answers in text. Keeps
    every list of messages the model was sent."""

    def __init__(self, tools: Iterable[BaseTool], *turns: Turn) -> None:
        self.model = GenericFakeChatModel(
            messages=iter([_message(t, k) for k, t in enumerate(turns)])
        )
        self.inputs: list[list[BaseMessage]] = []
        self.graph = self._graph(list(tools))

    def _graph(self, tools: list[BaseTool]) -> CompiledStateGraph[Any, Any, Any, Any]:
        graph = StateGraph(MessagesState)
        graph.add_node("model", self._model_turn)
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", tools_condition)
        graph.add_edge("tools", "model")
        return graph.compile()

    def _model_turn(self, state: MessagesState) -> dict[str, Any]:
        self.inputs.append(list(state["messages"]))
        return {"messages": [self.model.invoke(state["messages"])]}

    def run(self, text: str, config: dict[str, Any] | None = None) -> list[BaseMessage]:
        state = self.graph.invoke({"messages": [HumanMessage(text)]}, config)
        return list(state["messages"])

    async def arun(self, text: str, config: dict[str, Any] | None = None) -> list[BaseMessage]:
        state = await self.graph.ainvoke({"messages": [HumanMessage(text)]}, config)
        return list(state["messages"])


def _message(turn: Turn, number: int) -> AIMessage:
    if isinstance(turn, str):
        return AIMessage(turn)
    name, args = turn
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{number}"}])


def last_tool_message(messages: list[BaseMessage]) -> ToolMessage:
    """The tool message the model read on this turn (the last message it was sent)."""
    message = messages[-1]
    assert isinstance(message, ToolMessage), message
    return message


def test_the_args_schema_is_the_canonical_one_with_its_references_resolved() -> None:
    (refund,) = structured_tools(SUPPORT_DESK, {"create_refund": lambda **_: {}})
    schema = refund.tool_call_schema
    assert isinstance(schema, dict)
    assert "$ref" not in json.dumps(schema)  # self-contained: order.json inlined
    assert schema["properties"]["amount"]["exclusiveMinimum"] == 0
    assert schema["required"] == ["order_id", "amount", "reason"]


def test_a_good_call_runs_the_function_and_the_model_reads_its_result() -> None:
    weather = Weather()
    agent = Agent(weather_tools(weather), CELSIUS, "11.5 in Paris")
    messages = agent.run("Weather in Paris?")
    assert weather.calls == [{"city": "Paris"}]
    read = last_tool_message(agent.inputs[1])
    assert read.status == "success"
    assert json.loads(str(read.content)) == {"city": "Paris", "temp_c": 11.5, "condition": "cloudy"}
    assert messages[-1].content == "11.5 in Paris"


def test_a_bad_call_never_runs_and_the_model_reads_our_violations_then_corrects_itself() -> None:
    weather = Weather()
    agent = Agent(weather_tools(weather), KELVIN, CELSIUS, "11.5 in Paris")
    agent.run("Weather in Paris?")
    refusal = last_tool_message(agent.inputs[1])
    assert refusal.status == "error"
    error = json.loads(str(refusal.content))["error"]
    assert error["code"] == "arguments_invalid"
    assert [v["pointer"] for v in error["violations"]] == ["/unit"]
    assert weather.calls == [{"city": "Paris"}]  # only the corrected call ran
    assert last_tool_message(agent.inputs[2]).status == "success"


def test_one_turn_of_two_calls_runs_only_the_good_one() -> None:
    weather = Weather()
    both = AIMessage(
        "",
        tool_calls=[
            {"name": KELVIN[0], "args": KELVIN[1], "id": "a"},
            {"name": CELSIUS[0], "args": CELSIUS[1], "id": "b"},
        ],
    )
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(weather_tools(weather)))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    _, refused, answered = graph.compile().invoke({"messages": [both]})["messages"]
    assert weather.calls == [{"city": "Paris"}]
    assert (refused.tool_call_id, refused.status) == ("a", "error")
    assert (answered.tool_call_id, answered.status) == ("b", "success")


def test_the_tools_run_in_an_async_graph_too() -> None:
    weather = Weather()
    agent = Agent(weather_tools(weather), KELVIN, CELSIUS, "done")
    asyncio.run(agent.arun("Weather in Paris?"))
    assert weather.calls == [{"city": "Paris"}]
    assert "/unit" in str(last_tool_message(agent.inputs[1]).content)


def test_a_leaked_secret_is_redacted_in_the_tool_message_and_in_the_trace() -> None:
    leaky = Weather({"city": "Paris", "temp_c": 11.5, "condition": SECRET["text"]})
    trace = Trace()
    agent = Agent(weather_tools(leaky, trace), CELSIUS, "done")
    agent.run("Weather in Paris?")
    read = str(last_tool_message(agent.inputs[1]).content)
    assert SECRET["secret"] not in read
    assert json.loads(read)["city"] == "Paris"
    assert SECRET["secret"] not in json.dumps([hop.to_json() for hop in trace.hops])


def test_a_result_that_breaks_the_output_schema_is_caught_by_the_result_gate() -> None:
    wrong = Weather({"city": "Paris", "temp_c": "warm", "condition": "cloudy"})
    agent = Agent(weather_tools(wrong), CELSIUS, "done")
    agent.run("Weather in Paris?")
    assert wrong.calls == [{"city": "Paris"}]  # it ran; its result did not reach the model
    read = last_tool_message(agent.inputs[1])
    assert read.status == "error"
    error = json.loads(str(read.content))["error"]
    assert error["code"] == "result_invalid"
    assert [v["pointer"] for v in error["violations"]] == ["/temp_c"]


def test_the_trace_file_holds_a_run_span_with_each_tool_call_in_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Trace("lc-1", path=path) as trace:
        agent = Agent(weather_tools(Weather(), trace), KELVIN, CELSIUS, "done")
        agent.run("Weather in Paris?", {"callbacks": [RunSpans(trace)]})
    (run,) = span_tree(read_trace(path)).roots
    assert (run.kind, run.name, run.status) == ("run", "LangGraph", "ok")
    assert run.attributes["framework"] == "langchain"
    assert [(s.kind, s.name, s.status) for s in run.children] == [
        ("tool", "get_weather", "refused"),
        ("tool", "get_weather", "ok"),
    ]
    assert [s.attributes["call"] for s in run.children] == ["call_0", "call_1"]  # the model's


def test_two_runs_are_two_run_spans_also_when_they_overlap() -> None:
    trace = Trace()
    tools = weather_tools(Weather(), trace)
    runs = RunSpans(trace)
    first = Agent(tools, CELSIUS, CELSIUS, "done")
    second = Agent(tools, CELSIUS, "done")

    async def both() -> None:
        config = {"callbacks": [runs], "run_name": "first"}
        await asyncio.gather(
            first.arun("Paris?", config), second.arun("Paris?", {**config, "run_name": "second"})
        )

    asyncio.run(both())
    roots = sorted(span_tree(trace.hops).roots, key=lambda root: root.name)
    assert [(root.kind, root.name, len(root.children)) for root in roots] == [
        ("run", "first", 2),
        ("run", "second", 1),
    ]
    assert (runs._spans, runs._root_of) == ({}, {})  # nothing kept after the runs


def test_a_run_that_raises_ends_its_run_span_as_an_error() -> None:
    trace = Trace()
    agent = Agent(weather_tools(Weather(), trace), CELSIUS)  # no answer after the call
    with pytest.raises(RuntimeError, match="StopIteration"):  # the fake model ran out
        agent.run("Weather in Paris?", {"callbacks": [RunSpans(trace)]})
    (run,) = span_tree(trace.hops).roots
    assert (run.kind, run.status) == ("run", "error")
    assert [child.status for child in run.children] == ["ok"]


def test_a_tool_invoked_alone_is_its_own_run() -> None:
    trace = Trace()
    (get_weather,) = weather_tools(Weather(), trace)
    call = {"type": "tool_call", "name": "get_weather", "args": CELSIUS[1], "id": "c1"}
    get_weather.invoke(call, {"callbacks": [RunSpans(trace)]})
    (run,) = span_tree(trace.hops).roots
    assert (run.kind, run.name) == ("run", "get_weather")
    assert [child.kind for child in run.children] == ["tool"]


class ToolInputs(BaseCallbackHandler):
    """Keeps the tool input LangChain prints for its callbacks, call after call."""

    def __init__(self) -> None:
        self.inputs: list[str] = []

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.inputs.append(input_str)


def test_langgraphs_runtime_is_injected_not_printed_with_the_tool_input() -> None:
    # LangGraph's ToolRuntime holds the whole state: printed with each call's input, every call
    # would cost as much as the conversation is long.
    printed = ToolInputs()
    agent = Agent(weather_tools(Weather()), CELSIUS, CELSIUS, "done")
    agent.run("Weather in Paris?", {"callbacks": [printed]})
    assert printed.inputs == ["{'city': 'Paris'}", "{'city': 'Paris'}"]


def test_without_the_handler_each_tool_span_is_a_root() -> None:
    trace = Trace()
    Agent(weather_tools(Weather(), trace), CELSIUS, "done").run("Weather in Paris?")
    assert [root.kind for root in span_tree(trace.hops).roots] == ["tool"]


GOOD_HANDOFF = {"intent": "refund", "order_id": "A-1042", "confidence": 0.9}
GOOD_HANDOFF |= {"from": "triage", "to": "billing_agent"}
BAD_HANDOFF = {**GOOD_HANDOFF, "order_id": "1042"}


class Desk:
    """Two agents in one graph: triage (a scripted model, its handoff tool in a ToolNode) and
    billing_agent, which starts only when a handoff reaches it, and keeps the state it saw."""

    def __init__(self, trace: Trace, *turns: Turn) -> None:
        self.transfer = handoff_tool(
            SUPPORT_DESK, "handoffs/triage_to_billing", to="billing_agent", trace=trace
        )
        self.triage = Agent([self.transfer], *turns)
        self.billing: list[list[BaseMessage]] = []
        graph = StateGraph(MessagesState)
        graph.add_node("triage", self.triage._model_turn)
        graph.add_node("tools", ToolNode([self.transfer]))
        graph.add_node("billing_agent", self._billing)
        graph.add_edge(START, "triage")
        graph.add_conditional_edges("triage", tools_condition)
        graph.add_conditional_edges("tools", _back_to_triage_when_refused)
        graph.add_edge("billing_agent", END)
        self.graph = graph.compile()

    def _billing(self, state: MessagesState) -> dict[str, Any]:
        self.billing.append(list(state["messages"]))
        return {"messages": [AIMessage("Refund filed.")]}


def _back_to_triage_when_refused(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "triage" if isinstance(last, ToolMessage) and last.status == "error" else END


def test_a_handoff_that_breaks_its_schema_is_refused_and_the_model_hands_off_again() -> None:
    trace = Trace()
    transfer = ("transfer_to_billing_agent", BAD_HANDOFF)
    desk = Desk(trace, transfer, (transfer[0], GOOD_HANDOFF))
    desk.graph.invoke({"messages": [HumanMessage("refund 1042")]}, {"callbacks": [RunSpans(trace)]})
    refusal = last_tool_message(desk.triage.inputs[1])
    error = json.loads(str(refusal.content))["error"]
    assert (refusal.status, error["code"]) == ("error", "handoff_invalid")
    assert [v["pointer"] for v in error["violations"]] == ["/order_id"]
    (seen,) = desk.billing  # billing started once: after the good handoff only
    accepted = last_tool_message(seen)
    assert accepted.artifact == {"handoff": GOOD_HANDOFF}
    checks = [h for h in trace.hops if h.protocol == "handoff"]
    assert [h.verdict["outcome"] for h in checks if h.verdict] == ["rejected", "accepted"]
    (run,) = span_tree(trace.hops).roots
    assert [h.span for h in checks] == [run.id, run.id]


def test_a_handoff_tool_names_and_describes_itself_from_its_schema() -> None:
    transfer = handoff_tool(SUPPORT_DESK, "handoffs/triage_to_billing", to="billing_agent")
    assert transfer.name == "transfer_to_billing_agent"
    assert transfer.description == "Triage hands a ticket to billing"
    schema = transfer.tool_call_schema
    assert isinstance(schema, dict)
    assert "$ref" not in json.dumps(schema)
    assert transfer.invoke(GOOD_HANDOFF) == '{"handoff":"accepted","to":"billing_agent"}'


def test_a_handoff_no_route_takes_is_refused_with_its_own_code() -> None:
    exchanges = Route("billing_agent", when={"properties": {"intent": {"const": "exchange"}}})
    transfer = handoff_tool(
        SUPPORT_DESK, "handoffs/triage_to_billing", to="billing_agent", routes=[exchanges]
    )
    error = json.loads(transfer.invoke(GOOD_HANDOFF))["error"]  # a refund: no route
    assert error["code"] == "handoff_unrouted"


def test_a_handoff_schema_the_repository_does_not_have_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        handoff_tool(SUPPORT_DESK, "handoffs/nowhere", to="billing_agent")


def plain_tools(seen: list[dict[str, Any]]) -> list[BaseTool]:
    """get_weather as LangChain's own ``@tool`` makes it: its pydantic ``args_schema`` from the
    signature, ``unit: str`` as most code has it."""

    @tool
    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        """The current weather in a city."""
        seen.append({"city": city, "unit": unit})
        return {"city": city, "temp_c": 11.5, "condition": "cloudy"}

    return [get_weather]


def typed_plain_tools(seen: list[dict[str, Any]]) -> list[BaseTool]:
    """The same with the unit's values in its type: LangChain's pydantic validation refuses."""

    @tool
    def get_weather(
        city: str, unit: Literal["celsius", "fahrenheit"] = "celsius"
    ) -> dict[str, Any]:
        """The current weather in a city."""
        seen.append({"city": city, "unit": unit})
        return {"city": city, "temp_c": 11.5, "condition": "cloudy"}

    return [get_weather]


def test_show_the_same_conversation_without_and_with_schemawire() -> None:
    conversation = (KELVIN, CELSIUS, "done")
    # Without, `unit: str`: LangChain passes kelvin on, and the function runs with it.
    seen: list[dict[str, Any]] = []
    Agent(plain_tools(seen), *conversation).run("Weather in Paris?")
    assert seen[0] == {"city": "Paris", "unit": "kelvin"}
    # Without, `unit: Literal[...]`: refused, but the model reads prose, no pointer to fix.
    seen = []
    plain = Agent(typed_plain_tools(seen), *conversation)
    plain.run("Weather in Paris?")
    assert seen == [{"city": "Paris", "unit": "celsius"}]  # kelvin refused by pydantic
    prose = str(last_tool_message(plain.inputs[1]).content)
    assert prose.startswith("Error invoking tool 'get_weather'")
    with pytest.raises(json.JSONDecodeError):
        json.loads(prose)
    # With: the same conversation; the function never sees kelvin, the model reads our
    # violation (JSON, its pointer) and corrects itself.
    weather = Weather()
    ours = Agent(weather_tools(weather), *conversation)
    ours.run("Weather in Paris?")
    assert weather.calls == [{"city": "Paris"}]
    error = json.loads(str(last_tool_message(ours.inputs[1]).content))["error"]
    assert [v["pointer"] for v in error["violations"]] == ["/unit"]
    assert last_tool_message(ours.inputs[2]).status == "success"


def test_the_docs_quick_start_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    page = PAGE.read_text(encoding="utf-8")
    block = page.split("<!-- quick start -->\n```python\n", 1)[1].split("```", 1)[0]
    assert len([line for line in block.splitlines() if line.strip()]) <= 10
    exec(compile(block, PAGE.name, "exec"), {})
    expected = block.rsplit("# ", 1)[1].strip()
    assert capsys.readouterr().out.strip() == expected


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_mcp_servers_tool_in_a_langgraph_agent_is_gated_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "mcp.jsonl"
    server = StdioServer(sys.executable, ("-m", "schemawire", "serve", str(SUPPORT_DESK)))
    refund = {"order_id": "A-1042", "reason": "late"}
    with Trace("lc-mcp", path=path) as trace:
        client = McpClient(server, repository=Repository.load(SUPPORT_DESK))
        with anyio.fail_after(60):
            async with client:
                tools = await mcp_structured_tools(client, trace=trace)
                agent = Agent(
                    tools,
                    ("create_refund", {**refund, "amount": 0}),
                    ("create_refund", {**refund, "amount": 12.5}),
                    "refund pending",
                )
                await agent.arun("Refund A-1042, it came late.", {"callbacks": [RunSpans(trace)]})
    refusal = last_tool_message(agent.inputs[1])
    error = json.loads(str(refusal.content))["error"]
    assert [v["pointer"] for v in error["violations"]] == ["/amount"]
    answer = json.loads(str(last_tool_message(agent.inputs[2]).content))
    assert (answer["status"], answer["amount"]) == ("pending", 12.5)
    hops = list(read_trace(path))
    sent = [h.payload for h in hops if h.protocol == "mcp" and h.direction == "send"]
    calls_sent = [p for p in sent if isinstance(p, dict) and p.get("method") == "tools/call"]
    assert len(calls_sent) == 1  # the refused call never reached the server
    (run,) = [root for root in span_tree(hops).roots if root.kind == "run"]
    tool_spans = [child for child in run.children if child.kind == "tool"]
    assert [span.status for span in tool_spans] == ["refused", "ok"]
    assert [child.kind for child in tool_spans[1].children] == ["mcp"]  # the call, in its span


def test_an_mcp_tool_has_no_synchronous_path() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    client = McpClient(StdioServer(sys.executable, ("-c", "")))  # never connected
    tool = structured_tool_of(McpTool(ToolSpec("get_weather", schema), client), Trace())
    with pytest.raises(NotImplementedError):
        tool.invoke({"city": "Paris"})
