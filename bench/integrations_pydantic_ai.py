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
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, UsageLimits

from schemawire.integrations.pydantic_ai import SchemawireToolset
from schemawire.trace import Trace

SUPPORT_DESK = Path(__file__).resolve().parents[1] / "examples" / "support-desk"
TURNS = 200
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


def run(rounds: int, turns: int = TURNS) -> list[Row]:
    """Each variant's median µs per call over ``rounds`` rounds, the plain framework first."""
    return asyncio.run(_run(rounds, turns))


async def _run(rounds: int, turns: int) -> list[Row]:
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
    return rows


def print_table(rows: list[Row]) -> None:
    print(f"{'variant':<34} {'µs/call':>9} {'overhead µs':>12} {'%':>7}")
    for row in rows:
        extra = f"{row.overhead:+.1f}" if row.overhead is not None else ""
        percent = f"{row.percent:+.1f}" if row.percent is not None else ""
        print(f"{row.label:<34} {row.micros:>9.1f} {extra:>12} {percent:>7}")


if __name__ == "__main__":
    print_table(run(3))
