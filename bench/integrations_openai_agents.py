"""The OpenAI Agents SDK with and without schemawire's gates, per tool call, side by side in one
run (both in .venv):

    python -c "from bench import integrations_openai_agents as b; b.print_table(b.run(3))"

The conversation is bench/peers_loop.py's sequential one: one local tool ``noop(i: int) ->
{"i": i}``, the scripted model asking for one call per turn, TURNS turns, then answering in
text. "SDK alone" is ``function_tool(noop)`` (the SDK's own Pydantic check of the arguments);
"schemawire" is the same function from a one-tool repository through `function_tools` (our
strict projection, the argument gate, the result gate with redaction, a tool span), its trace
in memory, and once more written to a file. Both flavours of tool: ``def`` (the SDK and our
`PythonTool` both run it in a worker thread) and ``async def``. The variants run interleaved,
round after round, in one event loop after a warm-up; each figure is the median over the rounds
of the whole run's time over its calls. The run's noise on this machine (2 cores, shared) is
larger than our part, so each variant's tool invoker is also timed alone, 1,000 calls outside
any run: what ours adds per call, quoted as a share of the SDK's own per-call cost.
Tracing of the SDK itself is off.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.peers_loop import Script, anoop, check_results, noop, sequential_script

TURNS = 200
_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://bench.example/schemas/tools/noop.json",
    "x-version": "1.0.0",
    "title": "noop",
    "description": "Return the index it was given.",
    "type": "object",
    "properties": {"i": {"type": "integer"}},
    "required": ["i"],
    "additionalProperties": False,
}
_OUTPUT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://bench.example/schemas/tools/noop.output.json",
    "x-version": "1.0.0",
    "type": "object",
    "properties": {"i": {"type": "integer"}},
    "required": ["i"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Row:
    """One variant's median cost per tool call, in µs."""

    flavour: str
    variant: str
    per_call_us: float


def _repository(folder: Path) -> Any:
    from schemawire import Repository

    tools = folder / "schemas" / "tools"
    tools.mkdir(parents=True)
    (tools / "noop.json").write_text(json.dumps(_SCHEMA), "utf-8")
    (tools / "noop.output.json").write_text(json.dumps(_OUTPUT), "utf-8")
    (folder / "schemawire.toml").write_text('[repository]\ntools = "schemas/tools"\n', "utf-8")
    return Repository.load(folder)


def _scripted_model(script: Script) -> Any:
    from agents import Model, ModelResponse, Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    turns = iter(script)

    class ScriptedModel(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            calls = next(turns)
            output: list[Any] = [
                ResponseFunctionToolCall(
                    id=f"fc_{call_id}",
                    call_id=call_id,
                    name="noop",
                    arguments=arguments,
                    type="function_call",
                    status="completed",
                )
                for call_id, arguments in calls
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
            return ModelResponse(output=output, usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the bench does not stream")

    return ScriptedModel()


Tools = Callable[[bool], list[Any]]  # is_async -> the agent's tools


async def _one_run(tools: list[Any], script: Script) -> float:
    """Seconds for the whole scripted run; its tool results checked after."""
    from agents import Agent, RunConfig, Runner, ToolCallOutputItem

    agent = Agent(name="bench", model=_scripted_model(script), tools=tools)
    config = RunConfig(tracing_disabled=True)
    gc.collect()
    start = time.perf_counter()
    result = await Runner.run(agent, "go", max_turns=len(script) + 1, run_config=config)
    elapsed = time.perf_counter() - start
    assert result.final_output == "done", result.final_output
    outputs = [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    check_results(script, [o if isinstance(o, dict) else json.loads(o) for o in outputs])
    return elapsed


def _variants(folder: Path) -> dict[str, Tools]:
    from agents import function_tool

    from schemawire.integrations.openai_agents import function_tools
    from schemawire.trace import Trace

    repository = _repository(folder / "repo")

    def plain(is_async: bool) -> list[Any]:
        return [function_tool(anoop if is_async else noop, name_override="noop")]

    def ours(is_async: bool) -> list[Any]:
        return function_tools(repository, {"noop": anoop if is_async else noop})

    def ours_file(is_async: bool) -> list[Any]:
        trace = Trace(path=folder / f"trace-{time.perf_counter_ns()}.jsonl")
        return function_tools(repository, {"noop": anoop if is_async else noop}, trace=trace)

    return {
        "SDK alone": plain,
        "schemawire, trace in memory": ours,
        "schemawire, trace to a file": ours_file,
    }


async def _invoke_cost(tools: list[Any], calls: int) -> float:
    """µs per ``on_invoke_tool`` of the tool alone (what the SDK awaits for one call), the
    median of the calls: the part of a call that differs between the variants, without the
    run's noise."""
    from agents.tool_context import ToolContext

    (tool,) = tools
    times = []
    for k in range(calls):
        arguments = json.dumps({"i": k})
        context = ToolContext(
            None, tool_name="noop", tool_call_id=f"c{k}", tool_arguments=arguments
        )
        start = time.perf_counter()
        await tool.on_invoke_tool(context, arguments)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


async def _measure(rounds: int, turns: int, folder: Path) -> list[Row]:
    variants = _variants(folder)
    rows = []
    for flavour, is_async in (("def", False), ("async def", True)):
        for name, build in variants.items():
            tools = build(is_async)
            await _invoke_cost(tools, 50)
            cost = _invoke_cost(tools, 1000)
            rows.append(Row(flavour, f"{name}: the tool's invoker", await cost))
    for flavour, is_async in (("def", False), ("async def", True)):
        for build in variants.values():  # warm-up: imports, schema caches, worker threads
            await _one_run(build(is_async), sequential_script(5))
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(rounds):
            for name, build in variants.items():
                seconds = await _one_run(build(is_async), sequential_script(turns))
                samples[name].append(seconds / turns * 1e6)
        rows += [Row(flavour, name, statistics.median(s)) for name, s in samples.items()]
    return rows


def run(rounds: int, turns: int = TURNS) -> list[Row]:
    """Median µs per tool call of each variant and tool flavour, over ``rounds`` rounds."""
    with tempfile.TemporaryDirectory() as folder:
        return asyncio.run(_measure(rounds, turns, Path(folder)))


def print_table(rows: list[Row]) -> None:
    """Each variant's cost per call and its overhead over the SDK alone, as a % of it."""
    from importlib.metadata import version

    print(f"OpenAI Agents SDK {version('openai-agents')}, {TURNS} sequential calls, per call:")
    runs = {row.flavour: row.per_call_us for row in rows if row.variant == "SDK alone"}
    invokers = {r.flavour: r.per_call_us for r in rows if r.variant.startswith("SDK alone:")}
    for row in rows:
        alone = row.variant.startswith("SDK alone")
        base = invokers[row.flavour] if row.variant.endswith("invoker") else runs[row.flavour]
        extra = row.per_call_us - base
        share = f"{extra:+,.0f} µs, {extra / runs[row.flavour]:+.1%} of the SDK's per-call cost"
        tail = "" if alone else f"  ({share})"
        print(f"  {row.flavour:9} {row.variant:46} {row.per_call_us:8,.0f} µs{tail}")
