"""One conversation through each provider's API, over real HTTP on 127.0.0.1.

A loopback server answers like the provider, with responses written as that provider sends
them: five tool calls at once (a good one, one whose tool raises, one whose tool hangs, one to
a tool that does not exist, one with bad arguments), then the final answer. The host must
answer each call correctly, in the model's order, and go on. The request bodies it sent are
snapshot-tested as they crossed the wire, and checked against the provider's published schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from starlette.responses import JSONResponse, Response

from schemawire.gates import ResultGate
from schemawire.host import Host, HostOptions, HttpModel, PythonTool
from schemawire.types import ToolSpec
from tests.host.test_models import provider
from tests.wire.provider_schemas import errors
from tests.wire.test_provider_schemas import REQUESTS

pytestmark = pytest.mark.anyio

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
        "additionalProperties": False}  # fmt: skip
SPECS = {name: ToolSpec(name, CITY) for name in ("weather", "ledger", "slow")}
# (call id, tool, arguments as the model writes them); the last ones are wrong on purpose
CALLS = [("c1", "weather", {"city": "Paris"}), ("c2", "ledger", {"city": "Oslo"}),
         ("c3", "slow", {"city": "Rome"}), ("c4", "nowhere", {"city": "Nice"}),
         ("c5", "weather", {"city": 5})]  # fmt: skip
EXPECTED = {"c1": None, "c2": "tool_failed", "c3": "tool_failed", "c4": "arguments_invalid",
            "c5": "arguments_invalid"}  # fmt: skip
ANSWER = "Paris is sunny; the rest failed."


async def weather(city: str) -> dict[str, Any]:
    return {"city": city, "sky": "sunny"}


def ledger(city: str) -> dict[str, Any]:
    raise LookupError(f"no ledger for {city}")


async def slow(city: str) -> dict[str, Any]:
    await anyio.Event().wait()  # never set: the runner's timeout ends it
    return {}


def tools() -> list[PythonTool]:
    functions = {"weather": weather, "ledger": ledger, "slow": slow}
    return [PythonTool(spec, functions[name], ResultGate(spec), timeout=0.5)
            for name, spec in SPECS.items()]  # fmt: skip


# --- each provider's responses, as it writes them -----------------------------------------------


def chat(calls: list[tuple[str, str, Any]] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else ANSWER}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {
            "name": n, "arguments": json.dumps(a)}} for i, n, a in calls]  # fmt: skip
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5.1",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if calls else "stop"}]}  # fmt: skip


def responses(calls: list[tuple[str, str, Any]] | None) -> dict[str, Any]:
    if calls:
        output = [{"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": n,
                   "arguments": json.dumps(a), "status": "completed"}
                  for i, n, a in calls]  # fmt: skip
    else:
        text = {"type": "output_text", "text": ANSWER, "annotations": []}
        output = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                   "content": [text]}]  # fmt: skip
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
            "model": "gpt-5.1", "output": output}  # fmt: skip


def anthropic(calls: list[tuple[str, str, Any]] | None) -> dict[str, Any]:
    if calls:
        content = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    else:
        content = [{"type": "text", "text": ANSWER}]
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": content, "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip


def gemini(calls: list[tuple[str, str, Any]] | None) -> dict[str, Any]:
    if calls:
        parts = [{"functionCall": {"id": i, "name": n, "args": a}} for i, n, a in calls]
    else:
        parts = [{"text": ANSWER}]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                            "index": 0}], "modelVersion": "gemini-2.5-flash"}  # fmt: skip


Writer = Callable[[list[tuple[str, str, Any]] | None], dict[str, Any]]
APIS: dict[str, tuple[Writer, str, str]] = {
    "openai.chat": (chat, "gpt-5.1", "/v1"),
    "openai.responses": (responses, "gpt-5.1", "/v1"),
    "anthropic": (anthropic, "claude-sonnet-4-5", ""),
    "gemini": (gemini, "gemini-2.5-flash", ""),
}


def results_sent(api: str, body: dict[str, Any]) -> dict[str, str]:
    """The tool results a request body sends back, by call id, in the order sent."""
    if api == "openai.chat":
        return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    if api == "openai.responses":
        return {i["call_id"]: i["output"] for i in body["input"]
                if i.get("type") == "function_call_output"}  # fmt: skip
    if api == "anthropic":
        return {b["tool_use_id"]: b["content"] for m in body["messages"] if m["role"] == "user"
                and isinstance(m["content"], list) for b in m["content"]}  # fmt: skip
    return {p["functionResponse"]["id"]: json.dumps(p["functionResponse"]["response"])
            for c in body["contents"] for p in c["parts"] if "functionResponse" in p}  # fmt: skip


@pytest.mark.parametrize("api", list(APIS))
async def test_one_conversation_per_provider(api: str, snapshot: Any) -> None:
    write, name, prefix = APIS[api]
    script = [write(CALLS), write(None)]

    def answer(attempt: int, body: dict[str, Any]) -> Response:
        return JSONResponse(script[attempt - 1])

    async with provider(answer) as (url, app):
        model = HttpModel(api, name, base_url=url + prefix, api_key="test-key")
        host = Host(model, tools(), options=HostOptions(system="Be brief."))
        result = await host.run("Weather everywhere?")
    assert (result.stopped, result.answer) == ("answer", ANSWER)
    bodies = [body for _, _, body in app.requests]
    sent = results_sent(api, bodies[1])
    assert list(sent) == [call_id for call_id, _, _ in CALLS]  # matched by id, in order
    codes = {i: (json.loads(text).get("error") or {}).get("code") for i, text in sent.items()}
    assert codes == EXPECTED
    provider_name, component = REQUESTS[api]
    for body in bodies:  # as the provider's own published schema says a request must be
        assert errors(provider_name, component, body) == []
    snapshot(f"host-{api}-requests", bodies)
