"""Two peer agent frameworks' host loops, timed per tool call against a scripted model. Runs in
the bench's own environment (bench/.work/peers-venv), not schemawire's, so it imports only the
peers (and those only inside the functions that drive them: `bench/loop.py` imports this module
in schemawire's environment for the scripts and the summary alone).

    python bench/peers_loop.py OUT.json ROUNDS [TURNS PARALLEL]

The conversation, the same for every loop: one local tool ``noop(i: int) -> dict`` returning
``{"i": i}``; in "sequential", the model asks for one call per turn, TURNS turns (200), then
answers in text; in "parallel", one turn of PARALLEL calls (50, ids call_0..call_49), then text.
The model is scripted and returns at once, with its usage filled in as a real provider's is, so
the time is the framework's. Tracing is off (the Agents SDK's default would export to OpenAI).

Timed: the whole run, from the first user message to the final answer, inside one event loop.
Per turn, the time from the model handing back a turn's call to the model being asked again
(the framework running the call and making the next request). OUT.json gets, per framework
and per tool flavour (``def`` as written, and ``async def``; both frameworks run a plain ``def``
tool in a worker thread), the medians of ROUNDS rounds in µs per call, after one warm-up run.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any

TURNS, PARALLEL, EDGE = 200, 50, 20  # EDGE: calls averaged at each end of the sequential run
Script = list[list[tuple[str, str]]]  # per model turn, its (call id, arguments JSON); [] is text


def sequential_script(turns: int) -> Script:
    """Per model turn, the (call id, arguments JSON) the model asks for; the last turn is text."""
    return [[(f"call_{k}", json.dumps({"i": k}))] for k in range(turns)] + [[]]


def parallel_script(calls: int) -> Script:
    return [[(f"call_{k}", json.dumps({"i": k})) for k in range(calls)], []]


def check_results(script: Script, results: list[Any]) -> None:
    """Every call ran once and its result came back (after the timed run)."""
    wanted = sorted(json.loads(args)["i"] for calls in script for _, args in calls)
    got = sorted(result["i"] for result in results)
    assert got == wanted, f"{len(got)} tool results, {len(wanted)} calls"


class Clock:
    """When each model turn began and ended, to time what the framework does in between."""

    def __init__(self) -> None:
        self.entered: list[float] = []
        self.left: list[float] = []

    def gaps(self) -> list[float]:
        """Seconds from the model handing back turn k to it being asked for turn k + 1."""
        return [after - before for before, after in zip(self.left, self.entered[1:], strict=False)]


def summary(
    totals: list[float], gaps: list[list[float]], wholes: list[float], calls: int
) -> dict[str, Any]:
    """Medians over the rounds, in µs per call: each whole sequential run over its calls (one a
    turn), the first and last EDGE calls of it, and each whole parallel run over its ``calls``."""
    turns = len(gaps[0])
    return {
        "sequential": statistics.median(totals) / turns * 1e6,
        "first": statistics.median(statistics.fmean(g[:EDGE]) for g in gaps) * 1e6,
        "last": statistics.median(statistics.fmean(g[-EDGE:]) for g in gaps) * 1e6,
        "parallel": statistics.median(wholes) / calls * 1e6,
        "turns": turns,
        "calls": calls,
    }


def noop(i: int) -> dict[str, int]:
    """Return the index it was given."""
    return {"i": i}


async def anoop(i: int) -> dict[str, int]:
    """Return the index it was given."""
    return {"i": i}


# A runner takes a script and the tool flavour, and returns (seconds for the whole run, clock).
Runner = Callable[[Script, bool], Awaitable[tuple[float, Clock]]]


async def pydantic_ai_run(script: Script, is_async: bool) -> tuple[float, Clock]:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage, UsageLimits

    clock, turn = Clock(), iter(script)

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        clock.entered.append(time.perf_counter())
        calls = next(turn)
        parts: list[Any] = [ToolCallPart("noop", args, call_id) for call_id, args in calls]
        response = ModelResponse(
            parts=parts or [TextPart("done")], usage=RequestUsage(input_tokens=1, output_tokens=1)
        )
        clock.left.append(time.perf_counter())
        return response

    tool = Tool(anoop if is_async else noop, name="noop", takes_ctx=False)
    agent = Agent(FunctionModel(model), tools=[tool])
    limits = UsageLimits(request_limit=None)
    start = time.perf_counter()
    result = await agent.run("go", usage_limits=limits)
    elapsed = time.perf_counter() - start
    assert result.output == "done", result.output
    requests = [m for m in result.all_messages() if isinstance(m, ModelRequest)]
    parts = [p for m in requests for p in m.parts if isinstance(p, ToolReturnPart)]
    check_results(script, [part.content for part in parts])
    return elapsed, clock


async def agents_run(script: Script, is_async: bool) -> tuple[float, Clock]:
    from agents import (
        Agent,
        Model,
        ModelResponse,
        RunConfig,
        ToolCallOutputItem,
        Usage,
        function_tool,
    )
    from agents import Runner as AgentsRunner
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    clock, turn = Clock(), iter(script)

    class ScriptedModel(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            clock.entered.append(time.perf_counter())
            calls = next(turn)
            output: list[Any] = [
                ResponseFunctionToolCall(
                    id=f"fc_{call_id}",
                    call_id=call_id,
                    name="noop",
                    arguments=args,
                    type="function_call",
                    status="completed",
                )
                for call_id, args in calls
            ]
            if not output:
                text = ResponseOutputText(text="done", type="output_text", annotations=[])
                output = [
                    ResponseOutputMessage(
                        id="msg_done",
                        type="message",
                        role="assistant",
                        status="completed",
                        content=[text],
                    )
                ]
            usage = Usage(requests=1, input_tokens=1, output_tokens=1, total_tokens=2)
            response = ModelResponse(output=output, usage=usage, response_id=None)
            clock.left.append(time.perf_counter())
            return response

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the bench does not stream")

    tool = function_tool(anoop if is_async else noop, name_override="noop")
    agent = Agent(name="bench", model=ScriptedModel(), tools=[tool])
    config = RunConfig(tracing_disabled=True)
    start = time.perf_counter()
    result = await AgentsRunner.run(agent, "go", max_turns=len(script) + 1, run_config=config)
    elapsed = time.perf_counter() - start
    assert result.final_output == "done", result.final_output
    outputs = [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    check_results(script, outputs)
    return elapsed, clock


FRAMEWORKS: dict[str, tuple[str, Runner]] = {
    "Pydantic AI": ("pydantic-ai-slim", pydantic_ai_run),
    "Agents SDK": ("openai-agents", agents_run),
}


def measure(runner: Runner, is_async: bool, rounds: int, turns: int, calls: int) -> dict[str, Any]:
    return asyncio.run(_measure(runner, is_async, rounds, turns, calls))


async def _measure(
    runner: Runner, is_async: bool, rounds: int, turns: int, calls: int
) -> dict[str, Any]:
    """All in one event loop, as in a host that stays up: its worker threads are warm."""
    sequential, parallel = sequential_script(turns), parallel_script(calls)
    await runner(sequential_script(5), is_async)  # warm-up: imports, schema caches, threads
    await runner(parallel_script(calls), is_async)
    totals, gaps, wholes, turn_gaps = [], [], [], []
    for _ in range(rounds):
        gc.collect()
        elapsed, clock = await runner(sequential, is_async)
        assert len(clock.entered) == turns + 1
        totals.append(elapsed)
        gaps.append(clock.gaps())
        gc.collect()
        elapsed, clock = await runner(parallel, is_async)
        assert len(clock.entered) == 2
        wholes.append(elapsed)
        turn_gaps.append(clock.gaps()[0])
    result = summary(totals, gaps, wholes, calls)
    # The parallel turn alone (model's reply of `calls` calls to the next request), per call.
    result["parallel_turn"] = statistics.median(turn_gaps) / calls * 1e6
    result["raw"] = {
        "sequential_seconds": totals,
        "parallel_seconds": wholes,
        "turn_gaps_seconds": gaps,
    }
    return result


def main() -> None:
    out_path, rounds = sys.argv[1], int(sys.argv[2])
    turns = int(sys.argv[3]) if len(sys.argv) > 3 else TURNS
    calls = int(sys.argv[4]) if len(sys.argv) > 4 else PARALLEL
    report: dict[str, Any] = {}
    for label, (package, runner) in FRAMEWORKS.items():
        for flavour, is_async in (("def", False), ("async def", True)):
            result = measure(runner, is_async, rounds, turns, calls)
            result["version"] = version(package)
            report.setdefault(label, {})[flavour] = result
            print(
                f"  {label} {version(package)} ({flavour} tool): {result['sequential']:,.0f} "
                f"µs/call sequential, {result['parallel']:,.0f} µs/call parallel",
                flush=True,
            )
    with open(out_path, "w", encoding="utf-8") as file:
        json.dump(report, file)


if __name__ == "__main__":
    main()
