"""Anthropic Messages: the scripted conversation, responses, streamed events, malformed bodies."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire._json import dumps
from schemawire.errors import ErrorCode, InputError, JSONError
from schemawire.types import ToolCall
from schemawire.wire import Request
from schemawire.wire.anthropic import DEFAULT_MAX_TOKENS, WIRE, accumulate
from tests.wire import scenario
from tests.wire.provider_schemas import errors
from tests.wire.strategies import fragments
from tests.wire.wire_case import WireCase

API = "anthropic"
TOOLS = scenario.tool_refs(API)
CALL_IDS = [
    "toolu_01A09q90qw90lq917835lq9",
    "toolu_01B7xK2mN4pQ8rS6tU0vW3y",
    "toolu_01C5zD8eF1gH4iJ7kL0mN2p",
]
WIRE_NAMES = ["get_weather", "lookup_order", "billing_refund"]
ARGUMENT_TEXTS = [dumps(arguments, indent=False) for arguments in scenario.ARGUMENTS]
THINKING = {
    "type": "thinking",
    "thinking": "Three independent questions: call the three tools at once.",
    "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
}
USAGE = {
    "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "inference_geo": "not_available",
    "input_tokens": 512,
    "output_tokens": 144,
    "output_tokens_details": None,
    "server_tool_use": None,
    "service_tier": "standard",
}


def message(content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
    """A message as the API answers (the shape of the API reference's example)."""
    return {
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "role": "assistant",
        "content": content,
        "model": "claude-sonnet-4-5-20250929",
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "stop_details": None,
        "usage": USAGE,
        "container": None,
    }


def tool_use(index: int, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": CALL_IDS[index],
        "name": WIRE_NAMES[index],
        "input": scenario.ARGUMENTS[index] if arguments is None else arguments,
        "caller": {"type": "direct"},
    }


LEAD_IN = {"type": "text", "text": "Let me check all three.", "citations": None}
TOOL_USE_RESPONSE = message([THINKING, LEAD_IN, *(tool_use(i) for i in range(3))], "tool_use")
FINAL_RESPONSE = message(
    [{"type": "text", "text": scenario.FINAL_TEXT, "citations": None}], "end_turn"
)


def test_the_first_request_carries_the_default_max_tokens() -> None:
    body = WIRE.body(scenario.first_request(API, TOOLS))
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS


def test_the_scripted_conversation_sends_all_results_in_one_user_message() -> None:
    body = CASE.conversation_body()
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][0] == THINKING  # replayed with its signature
    results = body["messages"][2]["content"]
    assert [r["tool_use_id"] for r in results] == CALL_IDS
    assert [r.get("is_error") for r in results] == [None, None, True]


def test_structured_output_goes_to_output_config_beside_an_effort_option() -> None:
    assert CASE.structured_body()["output_config"]["effort"] == "low"


def test_a_turn_from_elsewhere_is_rebuilt_with_input_objects() -> None:
    call = ToolCall("call_1", "billing.refund", '{"order_id":"A-1042","amount":5}', "openai.chat")
    body = WIRE.body(Request("claude", (scenario.QUESTION, scenario.host_turn(call)), TOOLS))
    assert body["messages"][1]["content"] == [
        {
            "type": "tool_use",
            "id": "call_1",
            "name": "billing_refund",
            "input": {"order_id": "A-1042", "amount": 5},
        }
    ]


def test_arguments_that_are_not_json_cannot_be_replayed() -> None:
    call = ToolCall("call_1", "billing.refund", '{"order_id": ', "openai.chat")
    with pytest.raises(JSONError):
        WIRE.body(Request("claude", (scenario.QUESTION, scenario.host_turn(call)), TOOLS))


# --- streaming ---------------------------------------------------------------------------------


def tool_use_events(pieces: list[list[str]]) -> list[dict[str, Any]]:
    """The events of a streamed turn: thinking, a short text, then three tool_use blocks whose
    input JSON arrives as ``pieces`` (after an empty first fragment, as the API sends it)."""
    started = message([], None)
    started["usage"] = {**USAGE, "output_tokens": 3}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": started}]
    events += _block(
        0,
        {"type": "thinking", "thinking": "", "signature": ""},
        [
            {"type": "thinking_delta", "thinking": THINKING["thinking"][:20]},
            {"type": "thinking_delta", "thinking": THINKING["thinking"][20:]},
            {"type": "signature_delta", "signature": THINKING["signature"]},
        ],
    )
    events.append({"type": "ping"})
    events += _block(
        1,
        {"type": "text", "text": "", "citations": None},
        [
            {"type": "text_delta", "text": "Let me check"},
            {"type": "text_delta", "text": " all three."},
        ],
    )
    for index, parts in enumerate(pieces):
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *parts]]
        events += _block(index + 2, tool_use(index, {}), deltas)
    usage = {key: USAGE[key] for key in ("cache_creation_input_tokens", "cache_read_input_tokens")}
    usage |= {"input_tokens": 512, "output_tokens": 144}
    usage |= {"output_tokens_details": None, "server_tool_use": None}
    stop = {"container": None, "stop_details": None, "stop_reason": "tool_use"}
    stop["stop_sequence"] = None
    events.append({"type": "message_delta", "delta": stop, "usage": usage})
    return [*events, {"type": "message_stop"}]


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[Any]:
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def test_the_recorded_events_follow_anthropics_schema() -> None:
    events = tool_use_events([[text[:7], text[7:]] for text in ARGUMENT_TEXTS])
    # The streaming guide documents `ping` events; the published schema leaves them out.
    events = [e for e in events if e["type"] != "ping"]
    assert [e for e in events if errors("anthropic", "MessageStreamEvent", e)] == []


def test_streamed_events_add_up_to_the_same_turn_as_the_whole_response() -> None:
    pieces = [[text[i : i + 5] for i in range(0, len(text), 5)] for text in ARGUMENT_TEXTS]
    streamed = accumulate(tool_use_events(pieces), TOOLS)
    whole = WIRE.turn(TOOL_USE_RESPONSE, TOOLS)
    assert (streamed.text, streamed.tool_calls, streamed.stop) == (
        whole.text,
        whole.tool_calls,
        whole.stop,
    )
    assert streamed.raw["content"] == TOOL_USE_RESPONSE["content"]
    assert streamed.usage["output_tokens"] == 144


@given(st.tuples(*(fragments(text) for text in ARGUMENT_TEXTS)))
def test_any_split_of_the_input_json_accumulates_to_the_same_calls(
    pieces: tuple[list[str], ...],
) -> None:
    turn = accumulate(tool_use_events(list(pieces)), TOOLS)
    assert [call.arguments for call in turn.tool_calls] == list(scenario.ARGUMENTS)
    assert [call.name for call in turn.tool_calls] == scenario.CANONICAL_NAMES


def test_a_tool_use_without_input_fragments_keeps_its_starting_input() -> None:
    events = tool_use_events([[], [], []])
    turn = accumulate(events, TOOLS)
    assert [call.arguments for call in turn.tool_calls] == [{}, {}, {}]


# --- malformed bodies --------------------------------------------------------------------------

MALFORMED: list[tuple[Any, str]] = [
    (None, ""),
    ({"type": "message"}, "/content"),
    ({"content": [{"type": "text", "text": None}]}, "/content/0/text"),
    (
        {"content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{}"}]},
        "/content/0/input",
    ),
    ({"content": [{"type": "tool_use", "name": "f", "input": {}}]}, "/content/0/id"),
    ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "/error"),
]


def test_fragments_that_do_not_make_json_raise_json_error() -> None:
    events = tool_use_events([['{"city": "Par'], [], []])
    with pytest.raises(JSONError) as caught:
        accumulate(events, TOOLS)
    assert caught.value.code == ErrorCode.JSON_SYNTAX


def test_a_delta_for_a_block_never_opened_is_refused() -> None:
    text = {"type": "text_delta", "text": "x"}
    delta = {"type": "content_block_delta", "index": 3, "delta": text}
    with pytest.raises(InputError) as caught:
        accumulate([delta])
    assert caught.value.pointer == "/0/index"


def test_an_error_event_ends_the_stream_with_input_error() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(InputError) as caught:
        accumulate([*tool_use_events([[], [], []])[:4], error])
    assert (caught.value.pointer, "Overloaded" in caught.value.message) == ("/4", True)


CASE = WireCase(
    api=API,
    tools=TOOLS,
    schemas="anthropic",
    request_schema="CreateMessageParams",
    response_schema="Message",
    calls_response=TOOL_USE_RESPONSE,
    final_response=FINAL_RESPONSE,
    call_ids=CALL_IDS,
    arguments=list(scenario.ARGUMENTS),
    calls_text="Let me check all three.",
    calls_stop="tool_use",
    final_stop="end_turn",
    usage=USAGE,
    structured_options={
        "max_tokens": 4096,
        "output_config": {"effort": "low"},
        "temperature": 0.2,
    },
    malformed=MALFORMED,
)
