"""The forms a host's tool search takes (``HostOptions(search_form=...)``), and what stays put
across a run: the plain function form by default on every API, each API's own form when asked
for; a refused search answered in the form its call came in; a tool keeps the form it was first
sent in; a host reused for another run starts that run afresh.

Scripted models play the model (their requests are read exactly as they would go over the
wire, and checked against the providers' published schemas); the streamed case goes over HTTP
to a local provider.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from starlette.responses import JSONResponse, Response

from schemawire._json import dumps
from schemawire.errors import UsageError
from schemawire.host import Host, HostOptions, HttpModel
from schemawire.trace import Trace
from schemawire.wire import CallStarted, StreamDelta
from tests.host.chat_script import calls, says
from tests.host.loopback import provider
from tests.host.shortlist_catalogue import SHORTLIST_SCHEMA, desk_tools
from tests.host.test_shortlist import (
    QUESTION,
    anthropic_message,
    names,
    responses_output,
    shortlisting_host,
    tool_use,
)
from tests.wire.provider_responses import sse_for
from tests.wire.provider_schemas import errors

pytestmark = pytest.mark.anyio

CONVERT = {"amount": 5, "source": "EUR", "target": "GBP"}


def search_call(arguments: dict[str, Any], call_id: str = "call_s1") -> dict[str, Any]:
    """A client-executed ``tool_search_call`` item of OpenAI Responses."""
    return {
        "id": "tsc_1",
        "type": "tool_search_call",
        "call_id": call_id,
        "execution": "client",
        "arguments": arguments,
        "status": "completed",
    }


def function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"fc_{call_id}",
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
}


def responses_names(body: dict[str, Any]) -> list[str]:
    return [tool.get("name", tool["type"]) for tool in body.get("tools", [])]


def valid_responses_bodies(bodies: list[dict[str, Any]]) -> None:
    from tests.wire.test_tool_search_forms import emptied

    for body in bodies:
        assert errors("openai", "CreateResponse", emptied(body)) == []


# --- the form: function by default, native when asked for ------------------------------------


def test_the_search_form_is_function_or_native() -> None:
    with pytest.raises(UsageError, match='"function" or "native", not "hosted"'):
        HostOptions(shortlist=2, search_form="hosted")  # type: ignore[arg-type]


async def test_by_default_responses_gets_search_tools_as_a_function() -> None:
    script = [
        responses_output(function_call("call_s1", "search_tools", {"query": "convert currency"})),
        responses_output(function_call("call_c1", "currency_convert", CONVERT)),
        responses_output(ANSWER),
    ]
    host, model, ran = shortlisting_host(script, api="openai.responses", shortlist=2)
    await host.run(QUESTION)
    first, second, third = model.requests
    valid_responses_bodies(model.requests)
    assert first["tools"][0] == {**first["tools"][0], "type": "function", "name": "search_tools"}
    output = second["input"][-1]
    assert (output["type"], output["call_id"]) == ("function_call_output", "call_s1")
    assert SHORTLIST_SCHEMA.is_valid(json.loads(output["output"]))
    assert "currency_convert" in responses_names(second)  # a plain tool, in tools
    assert dumps(third["tools"], indent=False) == dumps(second["tools"], indent=False)
    assert ran == [("currency_convert", CONVERT)]


async def test_by_default_anthropic_gets_found_tools_as_plain_tools() -> None:
    script = [
        tool_use("toolu_1", "search_tools", {"query": "convert currency", "k": 1}),
        anthropic_message([{"type": "text", "text": "Done."}], "end_turn"),
    ]
    host, model, _ = shortlisting_host(script, api="anthropic", shortlist=2)
    await host.run(QUESTION)
    second = model.requests[1]
    assert errors("anthropic", "CreateMessageParams", second) == []
    assert all("defer_loading" not in tool for tool in second["tools"])
    assert "currency_convert" in [tool["name"] for tool in second["tools"]]
    (result,) = second["messages"][-1]["content"]
    assert isinstance(result["content"], str)  # the shortlist JSON, no tool_reference
    assert SHORTLIST_SCHEMA.is_valid(json.loads(result["content"]))


# --- OpenAI Responses, native: every search result is a tool_search_output -------------------


async def test_a_refused_native_search_is_an_incomplete_tool_search_output() -> None:
    script = [
        responses_output(search_call({"query": "convert currency", "k": 99})),
        responses_output(ANSWER),
    ]
    host, model, _ = shortlisting_host(
        script, api="openai.responses", shortlist=2, search_form="native"
    )
    result = await host.run(QUESTION)
    assert not result.calls[0].argument_verdict.accepted
    second = model.requests[1]
    valid_responses_bodies(model.requests)
    call, output, note = second["input"][-3:]
    assert call["type"] == "tool_search_call"
    # never a function_call_output for a search's call id: the API refuses that request
    assert output == {
        "type": "tool_search_output",
        "call_id": "call_s1",
        "execution": "client",
        "tools": [],
        "status": "incomplete",
    }
    assert note["role"] == "developer"
    said = "Your tool_search call call_s1 was refused: "
    assert note["content"].startswith(said)
    error = json.loads(note["content"].removeprefix(said))["error"]
    assert (error["code"], error["violations"][0]["pointer"]) == ("arguments_invalid", "/k")
    # the hint names the tool as the model knows it on this API
    assert error["hint"] == "Call tool_search again with arguments that satisfy its schema."


async def test_an_unknown_tool_on_native_responses_points_to_tool_search() -> None:
    script = [
        responses_output(function_call("call_t1", "teleport", {})),
        responses_output(ANSWER),
    ]
    host, _, _ = shortlisting_host(
        script, api="openai.responses", shortlist=2, search_form="native"
    )
    result = await host.run(QUESTION)
    rejection = result.calls[0].argument_verdict.rejection
    assert rejection is not None
    assert (rejection.code, rejection.hint) == (
        "tool_unknown",
        "Call one of your tools, or tool_search to find one.",
    )


async def test_a_native_search_that_finds_nothing_says_what_to_try() -> None:
    script = [
        responses_output(search_call({"query": "zzqx frobnicate"})),
        responses_output(ANSWER),
    ]
    host, model, _ = shortlisting_host(
        script, api="openai.responses", shortlist=2, search_form="native"
    )
    await host.run(QUESTION)
    output, note = model.requests[1]["input"][-2:]
    assert (output["tools"], output["status"]) == ([], "completed")
    shortlist = json.loads(note["content"].split(": ", 1)[1])
    assert shortlist["tools"] == []
    assert "try other words" in shortlist["hint"]


@pytest.mark.slow
async def test_a_streamed_native_search_is_named_search_tools_in_the_deltas() -> None:
    item = search_call({"query": "convert currency", "k": 1})
    body = responses_output(item)
    events = [
        {"type": "response.created", "response": {**body, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": body},
    ]
    streamed = sse_for("openai.responses", events)

    def answer(attempt: int, request: dict[str, Any]) -> Response:
        if attempt == 1:
            return Response(streamed, media_type="text/event-stream")
        return JSONResponse(responses_output(ANSWER))

    seen: list[StreamDelta] = []
    async with provider(answer) as (url, _):
        model = HttpModel(
            "openai.responses", "gpt-5.4", base_url=url + "/v1", api_key="k", stream=True
        )
        options = HostOptions(shortlist=2, search_form="native")
        host = Host(model, desk_tools([]), options=options, trace=Trace(), on_delta=seen.append)
        with anyio.fail_after(10):
            result = await host.run(QUESTION)
    assert [record.call.name for record in result.calls] == ["search_tools"]
    started = [delta for delta in seen if isinstance(delta, CallStarted)]
    assert [(delta.call_id, delta.name) for delta in started] == [("call_s1", "search_tools")]


# --- a tool keeps the form it was first sent in ----------------------------------------------


async def test_on_anthropic_a_tool_called_then_found_stays_a_plain_tool() -> None:
    script = [
        tool_use("toolu_1", "currency_convert", {"amount": 5, "source": "EUR", "target": "JPY"}),
        tool_use("toolu_2", "search_tools", {"query": "convert currency", "k": 1}),
        anthropic_message([{"type": "text", "text": "Done."}], "end_turn"),
    ]
    host, model, _ = shortlisting_host(script, api="anthropic", shortlist=2, search_form="native")
    await host.run(QUESTION)
    _, second, third = model.requests
    assert errors("anthropic", "CreateMessageParams", third) == []
    assert "currency_convert" in [tool["name"] for tool in second["tools"]]
    # the search found it again: it stays as it was (no defer_loading, the cache holds)
    assert dumps(third["tools"], indent=False) == dumps(second["tools"], indent=False)
    (result,) = third["messages"][-1]["content"]
    assert isinstance(result["content"], str)  # nothing to load: no tool_reference


async def test_on_responses_a_tool_called_then_found_stays_in_tools() -> None:
    script = [
        responses_output(function_call("call_c1", "currency_convert", CONVERT)),
        responses_output(search_call({"query": "convert currency", "k": 1})),
        responses_output(ANSWER),
    ]
    host, model, _ = shortlisting_host(
        script, api="openai.responses", shortlist=2, search_form="native"
    )
    await host.run(QUESTION)
    _, second, third = model.requests
    valid_responses_bodies(model.requests)
    assert "currency_convert" in responses_names(second)
    assert dumps(third["tools"], indent=False) == dumps(second["tools"], indent=False)
    output, note = third["input"][-2:]
    assert (output["type"], output["tools"]) == ("tool_search_output", [])
    # nothing to load, yet not "nothing found": the note's shortlist names the tool
    shortlist = json.loads(note["content"].split(": ", 1)[1])
    assert [tool["name"] for tool in shortlist["tools"]] == ["currency_convert"]


async def test_on_anthropic_a_tool_found_then_called_stays_deferred() -> None:
    script = [
        tool_use("toolu_1", "search_tools", {"query": "convert currency", "k": 1}),
        tool_use("toolu_2", "currency_convert", {"amount": 5, "source": "EUR", "target": "JPY"}),
        tool_use("toolu_3", "search_tools", {"query": "convert currency", "k": 1}),
        anthropic_message([{"type": "text", "text": "Done."}], "end_turn"),
    ]
    host, model, _ = shortlisting_host(script, api="anthropic", shortlist=2, search_form="native")
    await host.run(QUESTION)
    second, third, fourth = model.requests[1:]
    deferred = [tool["name"] for tool in second["tools"] if tool.get("defer_loading")]
    assert deferred == ["currency_convert"]
    assert dumps(fourth["tools"], indent=False) == dumps(second["tools"], indent=False)
    assert dumps(third["tools"], indent=False) == dumps(second["tools"], indent=False)


# --- one host, two runs ------------------------------------------------------------------------


async def test_a_host_reused_for_another_run_carries_no_found_or_called_tools() -> None:
    script = [
        calls(("s1", "search_tools", {"query": "convert money between currencies"})),
        calls(("c1", "order_refund", {"order_id": "A-1042", "amount": 20})),
        says("Done."),
        says("Mild."),
    ]
    host, model, _ = shortlisting_host(script, shortlist=2)
    await host.run(QUESTION)
    await host.run(QUESTION)
    first, second, third, fourth = model.requests
    assert "currency_convert" in names(second)
    assert {"currency_convert", "order_refund"} <= set(names(third))
    # the second run starts from its own pre-selection, byte for byte the first run's
    assert dumps(fourth["tools"], indent=False) == dumps(first["tools"], indent=False)


async def test_an_unchanged_selection_is_the_same_tuple_even_with_unknown_calls() -> None:
    """A call of a tool that does not exist changes nothing the request carries: the same
    tuple of tools goes out (the run's renderings are kept by its identity)."""
    script = [calls(("t1", "teleport", {})), calls(("t2", "teleport", {})), says("Mild.")]
    host, _, _ = shortlisting_host(script, shortlist=2)
    shown: list[Any] = []
    wire = host.wire

    class Watching:
        """The host's wire format, keeping each request's tools (by identity)."""

        name, target = wire.name, wire.target

        def body(self, request: Any, rendered: Any = None) -> dict[str, Any]:
            shown.append(request.tools)
            return wire.body(request, rendered)

        def __getattr__(self, member: str) -> Any:
            return getattr(wire, member)

    host.wire = Watching()  # type: ignore[assignment]
    await host.run(QUESTION)
    assert len(shown) == 3
    assert shown[0] is shown[1] is shown[2]
