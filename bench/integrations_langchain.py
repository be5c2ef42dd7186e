"""LangChain (LangGraph) alone vs LangChain with `structured_tools`, per tool call, in one run.

    python -c "from bench import integrations_langchain as b; b.print_table(b.run(3))"

The conversation, the same for every variant: the smallest LangGraph agent (a model node, the
scripted `GenericFakeChatModel` of langchain_core answering at once, and a `ToolNode`, in a
loop) asks for one ``get_weather`` call per turn, TURNS turns, then answers in text. The tool is
examples/support-desk's ``get_weather`` schema with a function that answers from memory.
Variants: a plain LangChain tool (``@tool def get_weather(city: str, unit: str = "celsius")``,
LangChain's own pydantic validation); our tools with an in-memory trace and `RunSpans` among the
run's callbacks (both gates, every hop recorded, one run span); and our tools with a trace that
keeps nothing (the gates alone). Per round, each variant runs the whole conversation once, in
turn, in one event loop (``ainvoke``); the figure is the median over rounds of the run's time
divided by its calls. The overhead is ours minus the plain run's, as a % of the plain run's.

The whole run's noise on this machine (2 cores, shared) is larger than our part, so, as
bench/integrations_pydantic_ai.py does, each variant's tool call path is also timed alone,
CALLS calls outside any graph, for a ``def`` and an ``async def`` tool: the tool's
``ainvoke`` with a tool call, what ``ToolNode`` does per call once it has the tool (LangChain's
callback manager, the tool's input parsing, the call, its ``ToolMessage``). Plain: the
``@tool`` (its pydantic validation, a ``def`` in a worker thread). Ours: `structured_tools`
(both gates, the call and a traced tool span), its trace in memory and, once more, written to a
file. The figure is the median, over the rounds, of each round's median call; what ours adds is
quoted as a share of LangChain's per-call cost in the whole plain run of the same invocation.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from schemawire.integrations.langchain import RunSpans, structured_tools
from schemawire.trace import Trace

SUPPORT_DESK = Path(__file__).resolve().parents[1] / "examples" / "support-desk"
TURNS = 200
CALLS = 1000
ARGUMENTS = {"city": "Paris", "unit": "celsius"}
ANSWER = {"city": "Paris", "temp_c": 11.5, "condition": "cloudy"}


@dataclass(slots=True)
class Row:
    """One variant's median cost per tool call."""

    label: str
    micros: float
    overhead: float | None  # µs over the plain framework, per call
    percent: float | None  # that, as a % of the plain framework's per-call cost


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """The current weather in a city."""
    return {"city": city, "temp_c": 11.5, "condition": "cloudy"}


async def aget_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """The current weather in a city (the ``async def`` flavour)."""
    return get_weather(city, unit)


def plain_tool(is_async: bool) -> BaseTool:
    """get_weather as LangChain's ``@tool`` makes it (its pydantic schema from the signature)."""
    return tool("get_weather")(aget_weather if is_async else get_weather)


def our_tool(is_async: bool, trace: Trace) -> BaseTool:
    """get_weather through `structured_tools`, on ``trace``."""
    function = aget_weather if is_async else get_weather
    (ours,) = structured_tools(SUPPORT_DESK, {"get_weather": function}, trace=trace)
    return ours


def scripted_model(turns: int) -> GenericFakeChatModel:
    """A model that asks for one call per turn, ``turns`` turns, then says "done"."""
    calls = [
        AIMessage("", tool_calls=[{"name": "get_weather", "args": dict(ARGUMENTS), "id": f"c{k}"}])
        for k in range(turns)
    ]
    return GenericFakeChatModel(messages=iter([*calls, AIMessage("done")]))


def agent(tools: list[BaseTool], turns: int) -> Any:
    """The model node and a ToolNode of ``tools``, in a loop until the model answers."""
    model = scripted_model(turns)

    async def model_turn(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model_turn)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


Variant = Callable[[int], Awaitable[float]]


async def _timed(tools: list[BaseTool], turns: int, callbacks: list[BaseCallbackHandler]) -> float:
    graph = agent(tools, turns)
    config = {"callbacks": callbacks, "recursion_limit": 2 * turns + 10}
    start = time.perf_counter()
    state = await graph.ainvoke({"messages": [HumanMessage("go")]}, config)
    elapsed = time.perf_counter() - start
    messages = state["messages"]
    assert messages[-1].content == "done", messages[-1]
    answers = [m for m in messages if isinstance(m, ToolMessage)]
    assert len(answers) == turns, len(answers)
    assert all(json.loads(str(m.content)) == ANSWER for m in answers), answers[-1]
    return elapsed


def plain() -> Variant:
    tools = [plain_tool(False)]

    async def run(turns: int) -> float:
        return await _timed(tools, turns, [])

    return run


def ours(keep: bool) -> Variant:
    # Built once, as a user builds them: the runs time the calls, not the repository's loading.
    trace = Trace(keep=keep)
    tools = [our_tool(False, trace)]
    callbacks: list[BaseCallbackHandler] = [RunSpans(trace)] if keep else []

    async def run(turns: int) -> float:
        before = len(trace.hops)
        elapsed = await _timed(tools, turns, callbacks)
        if keep:  # every call went through the gates: a send and a receive hop each
            hops = trace.hops[before:]
            assert sum(1 for hop in hops if hop.protocol == "python") == 2 * turns
        return elapsed

    return run


VARIANTS: tuple[tuple[str, Callable[[], Variant]], ...] = (
    ("LangGraph, plain @tool", plain),
    ("+ schemawire (trace in memory, RunSpans)", lambda: ours(True)),
    ("+ schemawire (trace off)", lambda: ours(False)),
)


Tool = Callable[[bool], BaseTool]  # is_async -> the tool get_weather


def _tools(folder: Path) -> dict[str, Tool]:
    """Each invoker variant's ``get_weather``, the plain one first."""

    def file(is_async: bool) -> BaseTool:
        trace = Trace(path=folder / f"trace-{time.perf_counter_ns()}.jsonl")
        return our_tool(is_async, trace)

    return {
        "LangChain @tool": plain_tool,
        "structured_tools, trace in memory": lambda is_async: our_tool(is_async, Trace()),
        "structured_tools, trace to a file": file,
    }


async def _call_cost(chosen: BaseTool, calls: int) -> float:
    """Median µs of one call's tool path, as ToolNode runs it once it has the tool: the tool's
    ``ainvoke`` with the model's tool call, a ``ToolMessage`` back."""
    times = []
    for k in range(calls):
        call = {"type": "tool_call", "name": "get_weather", "args": dict(ARGUMENTS), "id": f"c{k}"}
        start = time.perf_counter()
        message = await chosen.ainvoke(call)
        times.append(time.perf_counter() - start)
        assert message.status == "success", message
    assert json.loads(str(message.content)) == ANSWER, message
    return statistics.median(times) * 1e6


async def _invokers(rounds: int, folder: Path) -> dict[tuple[str, str], float]:
    """Each (flavour, variant)'s median µs per call of its tool path alone."""
    tools = _tools(folder)
    samples: dict[tuple[str, str], list[float]] = {}
    for flavour, is_async in (("def", False), ("async def", True)):
        built = {name: make(is_async) for name, make in tools.items()}
        for chosen in built.values():  # warm-up: schema caches, worker threads
            await _call_cost(chosen, 50)
        for _ in range(rounds):  # interleaved, so drift on a noisy machine hits all
            for name, chosen in built.items():
                gc.collect()
                samples.setdefault((flavour, name), []).append(await _call_cost(chosen, CALLS))
    return {key: statistics.median(values) for key, values in samples.items()}


def run(rounds: int, turns: int = TURNS) -> list[Row]:
    """Each variant's median µs per call over ``rounds`` rounds, the plain framework first:
    the whole runs, then each tool path alone (its overhead as a % of the plain run's call)."""
    with tempfile.TemporaryDirectory() as folder:
        return asyncio.run(_run(rounds, turns, Path(folder)))


async def _run(rounds: int, turns: int, folder: Path) -> list[Row]:
    variants = [(label, make()) for label, make in VARIANTS]
    for _, variant in variants:  # warm-up: imports, schema caches, worker threads
        await variant(5)
    times: dict[str, list[float]] = {label: [] for label, _ in variants}
    for _ in range(rounds):
        for label, variant in variants:  # interleaved, so drift on a noisy machine hits all
            gc.collect()
            times[label].append(await variant(turns) / turns * 1e6)
    medians = {label: statistics.median(values) for label, values in times.items()}
    base = medians[variants[0][0]]
    rows = [Row(variants[0][0], base, None, None)]
    for label, _ in variants[1:]:
        extra = medians[label] - base
        rows.append(Row(label, medians[label], extra, extra / base * 100))
    invokers = await _invokers(rounds, folder)
    plain_names = {flavour: name for flavour, name in invokers if name.startswith("LangChain")}
    for (flavour, name), micros in invokers.items():
        label = f"tool path alone, {flavour}: {name}"
        if name.startswith("LangChain"):
            rows.append(Row(label, micros, None, None))
            continue
        extra = micros - invokers[flavour, plain_names[flavour]]
        rows.append(Row(label, micros, extra, extra / base * 100))
    return rows


def print_table(rows: list[Row]) -> None:
    """Each variant's µs per call and its overhead over the plain framework; a tool path's
    overhead as a % of the plain whole run's per-call cost."""
    from importlib.metadata import version

    versions = f"langchain-core {version('langchain-core')}, langgraph {version('langgraph')}"
    print(f"{versions}, {TURNS} sequential calls; tool paths alone: {CALLS:,} calls;")
    print("% of the plain whole run's per-call cost")
    print(f"{'variant':<70} {'µs/call':>9} {'overhead µs':>12} {'%':>7}")
    for row in rows:
        extra = f"{row.overhead:+.1f}" if row.overhead is not None else ""
        percent = f"{row.percent:+.1f}" if row.percent is not None else ""
        print(f"{row.label:<70} {row.micros:>9.1f} {extra:>12} {percent:>7}")


if __name__ == "__main__":
    print_table(run(3))
