"""schemawire's host loop on the conversation of `bench/loop.py`: one no-op tool, a scripted
model (OpenAI Chat Completions responses), both gates and the trace on.

A call's time runs from the model handing back its call to the model being asked again: the
host's own work (reading the call, the argument gate, running the tool, the result gate, the
trace, and building the next request), as for the peers.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio

from schemawire.gates import ResultGate
from schemawire.host import Host, HostOptions, PythonTool, ScriptedModel
from schemawire.trace import Trace
from schemawire.types import ToolSpec

NOOP = ToolSpec(
    "noop",
    {
        "description": "Does nothing.",
        "type": "object",
        "properties": {"i": {"type": "integer"}},
        "required": ["i"],
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
)


async def noop(i: int) -> dict[str, Any]:
    return {"i": i}


def _calls(numbers: range) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "noop", "arguments": json.dumps({"i": i})},
        }
        for i in numbers
    ]
    return {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": calls},
            }
        ]
    }


_DONE = {
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}
    ]
}


class _Timed(ScriptedModel):
    """Notes when each response leaves and when the next request arrives."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        super().__init__("openai.chat", responses, name="bench")
        self.asked: list[float] = []
        self.answered: list[float] = []

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(time.perf_counter())
        response = await super().respond(body)
        self.answered.append(time.perf_counter())
        return response


def _host(model: _Timed) -> Host:
    tool = PythonTool(NOOP, noop, ResultGate(NOOP))
    return Host(model, [tool], trace=Trace(), options=HostOptions(max_turns=10_000))


def sequential(n: int) -> list[float]:
    """Seconds per call, for ``n`` calls made one per turn."""
    model = _Timed([*(_calls(range(i, i + 1)) for i in range(n)), _DONE])
    result = anyio.run(_host(model).run, "go")
    assert result.stopped == "answer"
    assert len(result.calls) == n
    return [
        asked - answered for answered, asked in zip(model.answered, model.asked[1:], strict=False)
    ]


def parallel(n: int) -> float:
    """Seconds for one turn of ``n`` calls."""
    model = _Timed([_calls(range(n)), _DONE])
    result = anyio.run(_host(model).run, "go")
    assert result.stopped == "answer"
    assert len(result.calls) == n
    return model.asked[1] - model.answered[0]
