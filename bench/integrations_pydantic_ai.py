"""Pydantic AI alone vs Pydantic AI with `SchemawireToolset`, per tool call, in one run.

    python -c "from bench import integrations_pydantic_ai as b; b.print_table(b.run(3))"

The conversation, the same for every variant: the model (Pydantic AI's `FunctionModel`,
scripted, answering at once) asks for one ``get_weather`` call per turn, TURNS turns, then
answers in text. The tool is examples/support-desk's ``get_weather`` schema with a function that
answers from memory. Variants: a plain Pydantic AI tool (``def get_weather(city: str, unit: str =
"celsius")``, Pydantic AI's own validation); our toolset with an in-memory trace (both gates,
every hop recorded); and our toolset with a trace that keeps nothing (the gates alone). Per
round, each variant runs the whole conversation once, in turn, in one event loop (warm worker
threads, as in a host that stays up); the figure is the median over rounds of the run's time
divided by its calls. The overhead is ours minus the plain run's, as a % of the plain run's.

The whole run's noise on this machine (2 cores, shared; about ±10% between rounds) is larger
than our part, so, as bench/integrations_openai_agents.py does for the Agents SDK, each
variant's tool call path is also timed alone, CALLS calls outside any run, for a ``def`` and an
``async def`` tool: what Pydantic AI's tool manager does per call once it has the tool, i.e. its
args validator on the arguments, then the toolset's ``call_tool`` with the validated arguments.
Plain: a `FunctionToolset` (Pydantic AI's own validation, then its call, a ``def`` in a worker
thread). Ours: `SchemawireToolset` (an open validator, then both gates, the call and a traced
tool span), its trace in memory and, once more, written to a file. The figure is the median,
over the rounds, of each round's median call; what ours adds is quoted as a share of Pydantic
AI's per-call cost in the whole plain run of the same invocation.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset
from pydantic_ai.usage import RequestUsage, RunUsage, UsageLimits

from schemawire.integrations.pydantic_ai import SchemawireToolset
from schemawire.trace import Trace

SUPPORT_DESK = Path(__file__).resolve().parents[1] / "examples" / "support-desk"
TURNS = 200
CALLS = 1000
ARGUMENTS = {"city": "Paris", "unit": "celsius"}


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


def scripted_model(turns: int) -> FunctionModel:
    """A model that asks for one call per turn, ``turns`` turns, then says "done"."""
    asked = 0

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal asked
        asked += 1
        usage = RequestUsage(input_tokens=1, output_tokens=1)
        if asked > turns:
            return ModelResponse(parts=[TextPart("done")], usage=usage)
        call = ToolCallPart("get_weather", dict(ARGUMENTS), f"call_{asked}")
        return ModelResponse(parts=[call], usage=usage)

    return FunctionModel(model)


Variant = Callable[[int], Awaitable[float]]


async def _timed(agent: Agent[None, str]) -> float:
    start = time.perf_counter()
    result = await agent.run("go", usage_limits=UsageLimits(request_limit=None))
    elapsed = time.perf_counter() - start
    assert result.output == "done", result.output
    return elapsed


def plain() -> Variant:
    async def run(turns: int) -> float:
        return await _timed(Agent(scripted_model(turns), tools=[get_weather]))

    return run


def ours(keep: bool) -> Variant:
    # Built once, as a user builds it: the runs time the calls, not the repository's loading.
    trace = Trace(keep=keep)
    toolset = SchemawireToolset(SUPPORT_DESK, {"get_weather": get_weather}, trace=trace)

    async def run(turns: int) -> float:
        before = len(trace.hops)
        elapsed = await _timed(Agent(scripted_model(turns), toolsets=[toolset]))
        if keep:  # every call went through the gates: a send and a receive hop each
            hops = trace.hops[before:]
            assert sum(1 for hop in hops if hop.protocol == "python") == 2 * turns
        return elapsed

    return run


VARIANTS: tuple[tuple[str, Callable[[], Variant]], ...] = (
    ("Pydantic AI, plain tool", plain),
    ("+ schemawire (trace in memory)", lambda: ours(True)),
    ("+ schemawire (trace off)", lambda: ours(False)),
)


Toolset = Callable[[bool], AbstractToolset[None]]  # is_async -> the toolset of get_weather


def _toolsets(folder: Path) -> dict[str, Toolset]:
    """Each invoker variant's toolset of ``get_weather``, the plain one first."""

    def function(is_async: bool) -> dict[str, Any]:
        return {"get_weather": aget_weather if is_async else get_weather}

    def plain_set(is_async: bool) -> AbstractToolset[None]:
        return FunctionToolset(
            [Tool(aget_weather if is_async else get_weather, name="get_weather")]
        )

    def memory(is_async: bool) -> AbstractToolset[None]:
        return SchemawireToolset(SUPPORT_DESK, function(is_async), trace=Trace())

    def file(is_async: bool) -> AbstractToolset[None]:
        trace = Trace(path=folder / f"trace-{time.perf_counter_ns()}.jsonl")
        return SchemawireToolset(SUPPORT_DESK, function(is_async), trace=trace)

    return {
        "Pydantic AI FunctionToolset": plain_set,
        "SchemawireToolset, trace in memory": memory,
        "SchemawireToolset, trace to a file": file,
    }


async def _call_cost(toolset: AbstractToolset[None], calls: int) -> float:
    """Median µs of one call's tool path, as Pydantic AI's tool manager runs it once it has the
    tool: the tool's args validator, then the toolset's ``call_tool`` with what it returned."""
    ctx = RunContext(deps=None, model=scripted_model(0), usage=RunUsage())
    tool = (await toolset.get_tools(ctx))["get_weather"]
    expected = get_weather(**ARGUMENTS)
    times = []
    for k in range(calls):
        ctx.tool_call_id, ctx.tool_name = f"call_{k}", "get_weather"
        start = time.perf_counter()
        arguments = tool.args_validator.validate_python(dict(ARGUMENTS))
        result = await toolset.call_tool("get_weather", arguments, ctx, tool)
        times.append(time.perf_counter() - start)
        assert result == expected, result
    return statistics.median(times) * 1e6


async def _invokers(rounds: int, folder: Path) -> dict[tuple[str, str], float]:
    """Each (flavour, variant)'s median µs per call of its tool path alone."""
    toolsets = _toolsets(folder)
    samples: dict[tuple[str, str], list[float]] = {}
    for flavour, is_async in (("def", False), ("async def", True)):
        built = {name: make(is_async) for name, make in toolsets.items()}
        for toolset in built.values():  # warm-up: schema caches, worker threads
            await _call_cost(toolset, 50)
        for _ in range(rounds):  # interleaved, so drift on a noisy machine hits all
            for name, toolset in built.items():
                gc.collect()
                cost = await _call_cost(toolset, CALLS)
                samples.setdefault((flavour, name), []).append(cost)
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
    plain_names = {flavour: name for flavour, name in invokers if name.startswith("Pydantic")}
    for (flavour, name), micros in invokers.items():
        label = f"tool path alone, {flavour}: {name}"
        if name.startswith("Pydantic"):
            rows.append(Row(label, micros, None, None))
            continue
        extra = micros - invokers[flavour, plain_names[flavour]]
        rows.append(Row(label, micros, extra, extra / base * 100))
    return rows


def print_table(rows: list[Row]) -> None:
    """Each variant's µs per call and its overhead over the plain framework; a tool path's
    overhead as a % of the plain whole run's per-call cost."""
    from importlib.metadata import version

    print(f"Pydantic AI {version('pydantic-ai-slim')}, {TURNS} sequential calls; tool paths")
    print(f"alone: {CALLS:,} calls; % of the plain whole run's per-call cost")
    print(f"{'variant':<74} {'µs/call':>9} {'overhead µs':>12} {'%':>7}")
    for row in rows:
        extra = f"{row.overhead:+.1f}" if row.overhead is not None else ""
        percent = f"{row.percent:+.1f}" if row.percent is not None else ""
        print(f"{row.label:<74} {row.micros:>9.1f} {extra:>12} {percent:>7}")


if __name__ == "__main__":
    print_table(run(3))
