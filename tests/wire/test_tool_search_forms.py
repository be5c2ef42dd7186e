"""A tool search's result in each API's own form, checked against the published schemas.

The host's ``search_tools`` found two tools: one the model already has (``lookup_order``) and
one it does not (``billing.refund``, sent deferred). Chat Completions and Gemini take the
search as a function and its result as the shortlist JSON, with the found tool among the
tools; Anthropic lists the found tool with ``defer_loading`` and loads it by a
``tool_reference`` block beside the JSON; OpenAI Responses takes the search as a
client-executed ``tool_search`` and its result as a ``tool_search_output`` carrying the found
tool's definition (not in ``tools``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from schemawire._json import dumps
from schemawire.project import project
from schemawire.types import ToolCall, ToolSpec
from schemawire.wire import AssistantTurn, FoundTools, Request, ToolOutputs, ToolRef, wire_format
from schemawire.wire.openai_responses import accumulate
from schemawire.wire.stream import ArgumentsDelta, CallStarted
from tests.wire import scenario
from tests.wire.provider_schemas import errors

SEARCH = ToolSpec(
    "search_tools",
    {
        "type": "object",
        "description": "Find more tools.",
        "properties": {"query": {"type": "string"}, "k": {"type": "integer", "minimum": 1}},
        "required": ["query"],
        "additionalProperties": False,
    },
)
SHORTLIST = {
    "query": "refund an order",
    "k": 2,
    "tools": [
        {"name": "billing.refund", "score": 3.1, "matched": ["name"], "pinned": False},
        {"name": "lookup_order", "score": 1.2, "matched": ["description"], "pinned": False},
    ],
    "catalogue": {"size": 3, "sources": {}},
    "total_matches": 2,
    "returned": 2,
    "truncated": False,
}
DOCUMENT = {
    "openai.chat": ("openai", "CreateChatCompletionRequest"),
    "openai.responses": ("openai", "CreateResponse"),
    "anthropic": ("anthropic", "CreateMessageParams"),
    "gemini": ("gemini", "GenerateContentRequest"),
}


def request_tools(api: str) -> tuple[ToolRef, ...]:
    """search_tools first, then the model's tools: billing.refund found, so deferred."""
    weather, order, refund = scenario.tool_refs(api)
    projection = project(SEARCH, api)
    search = ToolRef(SEARCH.name, projection.projected_name, projection.payload, searches=True)
    return (search, weather, order, dataclasses.replace(refund, deferred=True))


def conversation() -> list[Any]:
    call = ToolCall("call_search_1", "search_tools", '{"query": "refund an order", "k": 2}')
    found = FoundTools("call_search_1", SHORTLIST, found=("billing.refund", "lookup_order"))
    return [scenario.QUESTION, AssistantTurn(tool_calls=(call,)), ToolOutputs((found,))]


def body(api: str) -> dict[str, Any]:
    request = Request(scenario.MODEL[api], conversation(), request_tools(api), scenario.SYSTEM)
    return wire_format(api).body(request)


@pytest.mark.parametrize("api", list(DOCUMENT))
def test_each_api_takes_a_search_and_its_result_as_its_schema_allows(api: str) -> None:
    assert errors(*DOCUMENT[api], emptied(body(api))) == []


def emptied(sent: dict[str, Any]) -> dict[str, Any]:
    """``sent`` with the search's parameters and a search call's arguments emptied. OpenAI's
    document types both as ``EmptyModelParam``, an object that lists no properties (its
    description: the search tool's "parameter schema", the call's "arguments"), which the
    tests' adapter closes as it closes every open object of that document; each is checked
    to be an object here instead."""
    copy = json.loads(dumps(sent, indent=False))
    for tool in copy.get("tools", []):
        if tool.get("type") == "tool_search":
            assert isinstance(tool.pop("parameters"), dict)
    for item in copy.get("input", []):
        if item.get("type") == "tool_search_call":
            assert isinstance(item["arguments"], dict)
            item["arguments"] = {}
    return copy


@pytest.mark.parametrize("api", ["openai.chat", "gemini"])
def test_without_a_form_of_its_own_the_result_is_the_shortlist_json(api: str) -> None:
    sent = body(api)
    text = dumps(sent, indent=False)
    assert "defer_loading" not in text
    assert "tool_reference" not in text
    assert "tool_search" not in text
    if api == "openai.chat":
        names = [tool["function"]["name"] for tool in sent["tools"]]
        (result,) = [m for m in sent["messages"] if m["role"] == "tool"]
        assert json.loads(result["content"]) == SHORTLIST
    else:
        names = [tool["name"] for tool in sent["tools"][0]["functionDeclarations"]]
        response = sent["contents"][-1]["parts"][0]["functionResponse"]["response"]
        assert response == SHORTLIST
    assert names[0] == "search_tools"
    assert len(names) == 4  # the found tool is sent as any other


def test_anthropic_defers_the_found_tool_and_references_it() -> None:
    sent = body("anthropic")
    flags = {tool["name"]: tool.get("defer_loading") for tool in sent["tools"]}
    assert flags == {
        "search_tools": None,
        "get_weather": None,
        "lookup_order": None,
        "billing_refund": True,
    }
    (result,) = sent["messages"][-1]["content"]
    text, *references = result["content"]
    assert json.loads(text["text"]) == SHORTLIST
    # lookup_order is already loaded: only the deferred tool is referenced
    assert references == [{"type": "tool_reference", "tool_name": "billing_refund"}]


def test_openai_responses_searches_client_side_and_loads_the_found_tool_in_the_output() -> None:
    sent = body("openai.responses")
    kinds = [(tool["type"], tool.get("name")) for tool in sent["tools"]]
    assert kinds == [
        ("tool_search", None),
        ("function", "get_weather"),
        ("function", "lookup_order"),
    ]
    assert sent["tools"][0]["execution"] == "client"
    assert "query" in sent["tools"][0]["parameters"]["required"]
    call, output, note = sent["input"][1:]
    assert call == {
        "type": "tool_search_call",
        "execution": "client",
        "call_id": "call_search_1",
        "arguments": {"query": "refund an order", "k": 2},
    }
    refund = request_tools("openai.responses")[3].payload
    assert output == {
        "type": "tool_search_output",
        "call_id": "call_search_1",
        "execution": "client",
        "tools": [refund],
        "status": "completed",
    }
    # the item has no place for text: the shortlist JSON follows as a developer message
    assert note["role"] == "developer"
    said = "Your tool_search call call_search_1 answered: "
    assert note["content"].startswith(said)
    assert json.loads(note["content"].removeprefix(said)) == SHORTLIST


SEARCH_CALL = {
    "id": "tsc_0a1b2c",
    "type": "tool_search_call",
    "call_id": "call_search_2",
    "execution": "client",
    "arguments": {"query": "refund an order"},
    "status": "completed",
}


def response(output: list[dict[str, Any]]) -> dict[str, Any]:
    from tests.wire.test_openai_responses import response as whole

    return whole(output)


def test_a_client_tool_search_call_is_read_as_a_call_of_search_tools() -> None:
    answered = response([SEARCH_CALL])
    assert errors("openai", "Response", answered) == []  # ToolSearchCall leaves arguments open
    turn = wire_format("openai.responses").turn(answered, request_tools("openai.responses"))
    (call,) = turn.tool_calls
    assert (call.call_id, call.name, call.arguments) == (
        "call_search_2",
        "search_tools",
        {"query": "refund an order"},
    )


def test_a_server_tool_search_call_is_the_apis_own() -> None:
    hosted = {**SEARCH_CALL, "execution": "server"}
    tools = request_tools("openai.responses")
    turn = wire_format("openai.responses").turn(response([hosted]), tools)
    assert turn.tool_calls == ()


def test_a_streamed_client_tool_search_call_starts_a_call_of_search_tools() -> None:
    started = {**SEARCH_CALL, "status": "in_progress", "arguments": {}}
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": started},
        {"type": "response.output_item.done", "output_index": 0, "item": SEARCH_CALL},
        {"type": "response.completed", "response": response([SEARCH_CALL])},
    ]
    events = [{**event, "sequence_number": n} for n, event in enumerate(events)]
    assert [e for e in events if errors("openai", "ResponseStreamEvent", e)] == []
    tools = request_tools("openai.responses")
    reader = wire_format("openai.responses").stream_reader(tools)
    deltas = [delta for event in events for delta in reader.feed(event)]
    assert deltas == [
        CallStarted(0, "call_search_2", "search_tools"),
        ArgumentsDelta(0, '{"query":"refund an order"}'),
    ]
    (call,) = accumulate(events, tools).tool_calls
    assert call.name == "search_tools"
