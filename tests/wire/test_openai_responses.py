"""Responses: the scripted conversation, responses, streamed events, malformed bodies."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire._json import dumps
from schemawire.errors import InputError
from schemawire.types import ToolCall
from schemawire.wire import Request
from schemawire.wire.openai_responses import WIRE, accumulate
from tests.wire import scenario
from tests.wire.provider_schemas import errors
from tests.wire.strategies import fragments
from tests.wire.wire_case import WireCase

API = "openai.responses"
TOOLS = scenario.tool_refs(API, strict=True)
CALL_IDS = ["call_Xl8mY2cFqG1", "call_H2rT9vKpW0a", "call_9QzB3nLdE7s"]
ITEM_IDS = ["fc_0a1b2c3d4e5f6071", "fc_0a1b2c3d4e5f6072", "fc_0a1b2c3d4e5f6073"]
WIRE_NAMES = ["get_weather", "lookup_order", "billing_refund"]
ARGUMENT_TEXTS = [dumps(arguments, indent=False) for arguments in scenario.ARGUMENTS]
REASONING = {"id": "rs_0a1b2c3d4e5f6070", "type": "reasoning", "summary": []}
USAGE = {
    "input_tokens": 236,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 93,
    "output_tokens_details": {"reasoning_tokens": 24},
    "total_tokens": 329,
}


def response(output: list[dict[str, Any]], status: str = "completed") -> dict[str, Any]:
    """A response object as the API answers (the shape of the API reference's example, less
    ``store``, which the published schema of a response does not list)."""
    return {
        "id": "resp_0a1b2c3d4e5f6000",
        "object": "response",
        "created_at": 1767225600,
        "completed_at": None if status == "in_progress" else 1767225603,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": scenario.SYSTEM,
        "max_output_tokens": None,
        "model": "gpt-5.1-2025-11-13",
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "low", "summary": None},
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [tool.payload for tool in TOOLS],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": USAGE,
        "metadata": {},
    }


def function_call(index: int, arguments: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": ITEM_IDS[index],
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": CALL_IDS[index],
        "name": WIRE_NAMES[index],
    }


MESSAGE = {
    "id": "msg_0a1b2c3d4e5f6080",
    "type": "message",
    "status": "completed",
    "role": "assistant",
    "content": [
        {"type": "output_text", "text": scenario.FINAL_TEXT, "annotations": [], "logprobs": []}
    ],
}
TOOL_CALLS_RESPONSE = response(
    [REASONING, *(function_call(i, text) for i, text in enumerate(ARGUMENT_TEXTS))]
)
FINAL_RESPONSE = response([MESSAGE])


def test_a_turn_keeps_the_whole_response_to_replay() -> None:
    assert WIRE.turn(TOOL_CALLS_RESPONSE, TOOLS).raw is TOOL_CALLS_RESPONSE


def test_the_scripted_conversation_replays_the_output_items_then_the_results() -> None:
    body = CASE.conversation_body()
    assert body["input"][1:5] == TOOL_CALLS_RESPONSE["output"]  # reasoning item included
    outputs = body["input"][5:]
    assert [item["call_id"] for item in outputs] == CALL_IDS
    assert {item["type"] for item in outputs} == {"function_call_output"}


def test_structured_output_merges_with_a_text_option() -> None:
    assert CASE.structured_body()["text"]["verbosity"] == "low"


def test_a_turn_from_elsewhere_is_rebuilt_as_a_message_and_function_calls() -> None:
    call = ToolCall("toolu_01", "billing.refund", {"order_id": "A-1042", "amount": 5}, "anthropic")
    turn = scenario.host_turn(call, text="Refunding now.")
    body = WIRE.body(Request("gpt-5.1", (scenario.QUESTION, turn), TOOLS))
    assert body["input"][1:] == [
        {"role": "assistant", "content": "Refunding now."},
        {
            "type": "function_call",
            "call_id": "toolu_01",
            "name": "billing_refund",
            "arguments": '{"order_id":"A-1042","amount":5}',
        },
    ]
    assert errors("openai", "CreateResponse", body) == []


def test_an_incomplete_response_says_why_it_stopped() -> None:
    body = {
        **response([MESSAGE], "incomplete"),
        "incomplete_details": {"reason": "max_output_tokens"},
    }
    assert WIRE.turn(body, TOOLS).stop == "max_output_tokens"


# --- streaming ---------------------------------------------------------------------------------


def call_events(pieces: list[list[str]], *, done: bool = True) -> list[dict[str, Any]]:
    """The events of a streamed turn (a reasoning item, then three calls) whose arguments
    arrive as ``pieces``; without ``done`` only the deltas build them."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response([], "in_progress")},
        {"type": "response.in_progress", "response": response([], "in_progress")},
        {"type": "response.output_item.added", "output_index": 0, "item": REASONING},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
    ]
    for index, parts in enumerate(pieces, start=0):
        events += _one_call(index, parts, done=done)
    events.append({"type": "response.completed", "response": TOOL_CALLS_RESPONSE})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def _one_call(index: int, parts: list[str], *, done: bool) -> list[dict[str, Any]]:
    at = {"output_index": index + 1, "item_id": ITEM_IDS[index]}
    events: list[dict[str, Any]] = [
        {
            "type": "response.output_item.added",
            "output_index": index + 1,
            "item": function_call(index, "", "in_progress"),
        }
    ]
    events += [
        {"type": "response.function_call_arguments.delta", **at, "delta": part} for part in parts
    ]
    if done:
        arguments = "".join(parts)
        events += [
            {
                "type": "response.function_call_arguments.done",
                **at,
                "name": WIRE_NAMES[index],
                "arguments": arguments,
            },
            {
                "type": "response.output_item.done",
                "output_index": index + 1,
                "item": function_call(index, arguments),
            },
        ]
    return events


def test_the_recorded_events_follow_openais_schema() -> None:
    events = call_events([[text[:5], text[5:]] for text in ARGUMENT_TEXTS])
    events += text_events(["Paris", ": 18°C"])
    assert [e for e in events if errors("openai", "ResponseStreamEvent", e)] == []


def test_streamed_events_add_up_to_the_same_turn_as_the_whole_response() -> None:
    pieces = [[text[i : i + 4] for i in range(0, len(text), 4)] for text in ARGUMENT_TEXTS]
    streamed = accumulate(call_events(pieces), TOOLS)
    whole = WIRE.turn(TOOL_CALLS_RESPONSE, TOOLS)
    assert (streamed.tool_calls, streamed.stop, streamed.usage) == (
        whole.tool_calls,
        whole.stop,
        whole.usage,
    )
    assert streamed.raw["output"] == TOOL_CALLS_RESPONSE["output"]


def text_events(pieces: list[str]) -> list[dict[str, Any]]:
    """A message streamed as text deltas (content part announced first, as the API does)."""
    at = {"item_id": MESSAGE["id"], "output_index": 0, "content_index": 0}
    started = {**MESSAGE, "status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": started},
        {"type": "response.content_part.added", **at, "part": part},
        *({"type": "response.output_text.delta", **at, "delta": p, "logprobs": []} for p in pieces),
    ]
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def test_streamed_text_is_joined() -> None:
    words = scenario.FINAL_TEXT.split(" ")
    pieces = [w if i == 0 else " " + w for i, w in enumerate(words)]
    completed = {"type": "response.completed", "response": FINAL_RESPONSE}
    turn = accumulate([*text_events(pieces), completed])
    assert (turn.text, turn.stop, turn.tool_calls) == (scenario.FINAL_TEXT, "completed", ())


@given(st.tuples(*(fragments(text) for text in ARGUMENT_TEXTS)), st.booleans())
def test_any_split_of_the_arguments_accumulates_to_the_same_calls(
    pieces: tuple[list[str], ...], done: bool
) -> None:
    turn = accumulate(call_events(list(pieces), done=done), TOOLS)
    assert [call.arguments for call in turn.tool_calls] == ARGUMENT_TEXTS
    assert [call.name for call in turn.tool_calls] == scenario.CANONICAL_NAMES


# --- malformed bodies --------------------------------------------------------------------------

MALFORMED: list[tuple[Any, str]] = [
    ([], ""),
    ({"object": "response"}, "/output"),
    ({"output": [{"type": 1}]}, "/output/0/type"),
    ({"output": [{"type": "function_call", "name": "f", "arguments": "{}"}]}, "/output/0/call_id"),
    (
        {"output": [{"type": "message", "content": [{"type": "output_text"}]}]},
        "/output/0/content/0/text",
    ),
    ({"error": {"message": "The model `gpt-9` does not exist", "code": None}}, "/error"),
]


def test_a_delta_for_an_item_never_announced_is_refused() -> None:
    event = {"type": "response.function_call_arguments.delta", "output_index": 4, "delta": "{"}
    with pytest.raises(InputError) as caught:
        accumulate([event])
    assert caught.value.pointer == "/0/output_index"


def test_an_error_event_ends_the_stream_with_input_error() -> None:
    error = {"type": "error", "code": "server_error", "message": "overloaded", "param": None}
    with pytest.raises(InputError) as caught:
        accumulate([*call_events([["{}"]] * 3)[:3], error])
    assert caught.value.pointer == "/3"
    assert "overloaded" in caught.value.message


CASE = WireCase(
    api=API,
    tools=TOOLS,
    schemas="openai",
    request_schema="CreateResponse",
    response_schema="Response",
    calls_response=TOOL_CALLS_RESPONSE,
    final_response=FINAL_RESPONSE,
    call_ids=CALL_IDS,
    arguments=ARGUMENT_TEXTS,
    calls_text=None,
    calls_stop="completed",
    final_stop="completed",
    usage=USAGE,
    structured_options={"text": {"verbosity": "low"}, "reasoning": {"effort": "minimal"}},
    malformed=MALFORMED,
)
