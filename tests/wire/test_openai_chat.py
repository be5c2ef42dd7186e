"""Chat Completions: the scripted conversation, responses, streamed chunks, malformed bodies."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire._json import dumps
from schemawire.errors import InputError, UsageError
from schemawire.types import ToolCall
from schemawire.wire import Request
from schemawire.wire.openai_chat import WIRE, accumulate
from tests.wire import scenario
from tests.wire.provider_schemas import errors
from tests.wire.strategies import fragments
from tests.wire.wire_case import WireCase

API = "openai.chat"
TOOLS = scenario.tool_refs(API, strict=True)
CALL_IDS = ["call_Xl8mY2cFqG1", "call_H2rT9vKpW0a", "call_9QzB3nLdE7s"]
WIRE_NAMES = ["get_weather", "lookup_order", "billing_refund"]
ARGUMENT_TEXTS = [dumps(arguments, indent=False) for arguments in scenario.ARGUMENTS]
USAGE = {
    "prompt_tokens": 212,
    "completion_tokens": 71,
    "total_tokens": 283,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {
        "reasoning_tokens": 0,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    },
}


def completion(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    """A chat completion as the API answers (the shape of the API reference's examples)."""
    return {
        "id": "chatcmpl-CQ3kJ5bN8r1TfZx",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "gpt-5.1-2025-11-13",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": USAGE,
        "service_tier": "default",
        "system_fingerprint": "fp_6b68a8204b",
    }


TOOL_CALLS_RESPONSE = completion(
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in zip(CALL_IDS, WIRE_NAMES, ARGUMENT_TEXTS, strict=True)
        ],
        "refusal": None,
        "annotations": [],
    },
    "tool_calls",
)
FINAL_RESPONSE = completion(
    {"role": "assistant", "content": scenario.FINAL_TEXT, "refusal": None, "annotations": []},
    "stop",
)


def test_the_scripted_conversation_sends_every_result_after_the_calls() -> None:
    body = CASE.conversation_body()
    tool_messages = body["messages"][3:]
    assert [m["tool_call_id"] for m in tool_messages] == CALL_IDS
    assert tool_messages[0]["content"] == "18°C, light rain"
    assert tool_messages[2]["content"].startswith('{"error":{"code":"arguments_invalid"')


def test_a_structured_output_request_sends_no_tools() -> None:
    assert "tools" not in CASE.structured_body()


def test_parallel_tool_calls_is_sent_only_when_an_option_says_so() -> None:
    body = WIRE.body(scenario.first_request(API, TOOLS))
    assert "parallel_tool_calls" not in body


def test_an_option_cannot_replace_what_the_request_sets() -> None:
    request = Request("gpt-5.1", (scenario.QUESTION,), options={"messages": []})
    with pytest.raises(UsageError):
        WIRE.body(request)


def test_a_turn_from_another_api_is_replayed_with_string_arguments() -> None:
    call = ToolCall("toolu_01", "billing.refund", {"order_id": "A-1042", "amount": 5}, "anthropic")
    turn = scenario.host_turn(call)
    body = WIRE.body(Request("gpt-5.1", (scenario.QUESTION, turn), TOOLS))
    function = body["messages"][1]["tool_calls"][0]["function"]
    assert function == {"name": "billing_refund", "arguments": '{"order_id":"A-1042","amount":5}'}


def test_an_unknown_tool_name_passes_through_for_the_host_to_answer() -> None:
    body = completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "delete_everything", "arguments": "{}"},
                }
            ],
        },
        "tool_calls",
    )
    assert WIRE.turn(body, TOOLS).tool_calls[0].name == "delete_everything"


# --- streaming ---------------------------------------------------------------------------------


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` event."""
    return {
        "id": "chatcmpl-CQ3kJ5bN8r1TfZx",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-5.1-2025-11-13",
        "system_fingerprint": "fp_6b68a8204b",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }


def tool_call_chunks(pieces: list[list[str]]) -> list[dict[str, Any]]:
    """The chunks of a streamed turn whose calls' arguments arrive as ``pieces``: the first
    chunk of each call has its id and name and empty arguments, as the API sends them."""
    events = [chunk({"role": "assistant", "content": None, "refusal": None})]
    for index, (call_id, name, parts) in enumerate(zip(CALL_IDS, WIRE_NAMES, pieces, strict=True)):
        head = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        events.append(chunk({"tool_calls": [{"index": index, **head}]}))
        events.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
            for part in parts
        )
    events.append(chunk({}, "tool_calls"))
    usage_chunk = {**chunk({}), "choices": [], "usage": USAGE}
    return [*events, usage_chunk]


def split_every(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_streamed_fragments_add_up_to_the_same_turn_as_the_whole_response() -> None:
    events = tool_call_chunks([split_every(text, 3) for text in ARGUMENT_TEXTS])
    assert all(errors("openai", "CreateChatCompletionStreamResponse", e) == [] for e in events)
    streamed = accumulate(events, TOOLS)
    whole = WIRE.turn(TOOL_CALLS_RESPONSE, TOOLS)
    assert (streamed.tool_calls, streamed.stop, streamed.usage) == (
        whole.tool_calls,
        whole.stop,
        whole.usage,
    )


def test_streamed_text_is_joined() -> None:
    words = scenario.FINAL_TEXT.split(" ")
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": w if i == 0 else " " + w}) for i, w in enumerate(words)]
    turn = accumulate([*events, chunk({}, "stop")])
    assert (turn.text, turn.stop, turn.tool_calls) == (scenario.FINAL_TEXT, "stop", ())


@given(st.tuples(*(fragments(text) for text in ARGUMENT_TEXTS)))
def test_any_split_of_the_arguments_accumulates_to_the_same_calls(
    pieces: tuple[list[str], ...],
) -> None:
    turn = accumulate(tool_call_chunks(list(pieces)), TOOLS)
    assert [call.arguments for call in turn.tool_calls] == ARGUMENT_TEXTS
    assert [call.name for call in turn.tool_calls] == scenario.CANONICAL_NAMES


# --- malformed bodies --------------------------------------------------------------------------

MALFORMED: list[tuple[Any, str]] = [
    ("not json", ""),
    ({}, "/choices"),
    ({"choices": []}, "/choices"),
    ({"choices": [{"message": "hi"}]}, "/choices/0/message"),
    ({"choices": [{"message": {"content": 3}}]}, "/choices/0/message/content"),
    (
        {
            "choices": [
                {
                    "message": {
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}]
                    }
                }
            ]
        },
        "/choices/0/message/tool_calls/0/function/arguments",
    ),
    (
        {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}},
        "/error",
    ),
]


def test_a_malformed_chunk_raises_input_error_saying_which() -> None:
    events = [chunk({"content": "Hi"}), chunk({"tool_calls": [{"function": {"arguments": "{"}}]})]
    with pytest.raises(InputError) as caught:
        accumulate(events)
    assert caught.value.pointer == "/1/choices/0/delta/tool_calls/0/index"


def test_a_call_never_named_in_the_stream_is_refused() -> None:
    events = [chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]})]
    with pytest.raises(InputError):
        accumulate(events, TOOLS)


# One declarative record per provider, alike by design: the values are what differs.
CASE = WireCase(
    api=API,
    tools=TOOLS,
    schemas="openai",
    request_schema="CreateChatCompletionRequest",
    response_schema="CreateChatCompletionResponse",
    calls_response=TOOL_CALLS_RESPONSE,
    final_response=FINAL_RESPONSE,
    call_ids=CALL_IDS,
    arguments=ARGUMENT_TEXTS,
    calls_text=None,
    calls_stop="tool_calls",
    final_stop="stop",
    usage=USAGE,
    structured_options={
        "temperature": 0.2,
        "parallel_tool_calls": False,
        "max_completion_tokens": 500,
    },
    malformed=MALFORMED,
)
