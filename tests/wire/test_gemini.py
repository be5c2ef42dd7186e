"""Gemini generateContent: the scripted conversation, responses, streamed chunks, malformed
bodies, and function calls without ids."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire.errors import InputError, UsageError
from schemawire.project import project
from schemawire.types import ToolCall, ToolResult, ToolSpec
from schemawire.wire import AssistantTurn, Request, ToolOutputs, ToolRef
from schemawire.wire.gemini import WIRE, accumulate
from schemawire.wire.stream import CallStarted
from tests.helpers import same_json
from tests.wire import scenario
from tests.wire.provider_schemas import errors
from tests.wire.strategies import fragments
from tests.wire.wire_case import WireCase

API = "gemini"
TOOLS = scenario.tool_refs(API)
SYNTHESIZED_IDS = ["get_weather-0", "lookup_order-1", "billing.refund-2"]
SIGNATURE = "CiQBcsjafJ7dOgzTJ4fcLM2tN5gEH1vYBBLnjJxE8d0Ct0yS1ggKXwFyyNp8"
USAGE = {
    "promptTokenCount": 180,
    "candidatesTokenCount": 45,
    "totalTokenCount": 280,
    "thoughtsTokenCount": 55,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 180}],
}


def response(parts: list[dict[str, Any]], finish: str | None = "STOP") -> dict[str, Any]:
    """A GenerateContentResponse as the API answers (the shape of the API reference's
    function-calling example)."""
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": USAGE,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mFxXaYyVLuXq7M8Pj9ej2Qg",
    }


def call_part(index: int, **extra: Any) -> dict[str, Any]:
    name = scenario.CANONICAL_NAMES[index]
    return {"functionCall": {"name": name, "args": scenario.ARGUMENTS[index]}, **extra}


CALL_PARTS = [call_part(0, thoughtSignature=SIGNATURE), call_part(1), call_part(2)]
FUNCTION_CALLS_RESPONSE = response(CALL_PARTS)
FINAL_RESPONSE = response([{"text": scenario.FINAL_TEXT}])


def test_calls_without_ids_get_stable_ids_from_their_name_and_place() -> None:
    turn = WIRE.turn(FUNCTION_CALLS_RESPONSE, TOOLS)
    assert [call.call_id for call in turn.tool_calls] == SYNTHESIZED_IDS
    assert WIRE.turn(FUNCTION_CALLS_RESPONSE, TOOLS) == turn


def test_the_scripted_conversation_answers_each_call_by_name_without_made_up_ids() -> None:
    body = CASE.conversation_body()
    assert body["contents"][1]["parts"][0]["thoughtSignature"] == SIGNATURE
    responses = [part["functionResponse"] for part in body["contents"][2]["parts"]]
    assert [r["name"] for r in responses] == scenario.CANONICAL_NAMES
    assert all("id" not in r for r in responses)
    assert responses[0]["response"] == {"result": "18°C, light rain"}
    assert responses[2]["response"]["error"]["code"] == "arguments_invalid"


def test_ids_the_model_gave_go_back_with_the_results() -> None:
    call = {"id": "fc-7Hq2", "name": "lookup_order", "args": {"order_id": "A-1"}}
    parts = [{"functionCall": call}]
    turn = WIRE.turn(response(parts), TOOLS)
    assert turn.tool_calls[0].call_id == "fc-7Hq2"
    outputs = ToolOutputs((ToolResult("fc-7Hq2", "shipped"),))
    body = WIRE.body(Request("gemini-2.5-flash", (scenario.QUESTION, turn, outputs), TOOLS))
    assert body["contents"][2]["parts"][0]["functionResponse"] == {
        "name": "lookup_order",
        "id": "fc-7Hq2",
        "response": {"result": "shipped"},
    }


def test_structured_output_and_generation_options_go_to_generation_config() -> None:
    body = CASE.structured_body()
    assert body["generationConfig"]["responseMimeType"] == "application/json"


def test_a_renamed_tool_is_declared_under_its_wire_name_and_mapped_back() -> None:
    spec = ToolSpec("3d-print", {"type": "object", "properties": {}})
    projection = project(spec, API)
    tools = (ToolRef(spec.name, projection.projected_name, projection.payload),)
    assert projection.projected_name == "_3d-print"
    body = {**response([{"functionCall": {"name": "_3d-print", "args": {}}}])}
    turn = WIRE.turn(body, tools)
    assert (turn.tool_calls[0].name, turn.tool_calls[0].call_id) == ("3d-print", "3d-print-0")
    outputs = ToolOutputs((ToolResult("3d-print-0", {"queued": True}),))
    request = WIRE.body(Request("gemini-2.5-flash", (scenario.QUESTION, turn, outputs), tools))
    assert request["contents"][2]["parts"][0]["functionResponse"]["name"] == "_3d-print"


def test_a_turn_from_elsewhere_is_rebuilt_with_its_ids() -> None:
    call = ToolCall("call_1", "lookup_order", '{"order_id":"A-1042"}', "openai.chat")
    outputs = ToolOutputs((ToolResult("call_1", [{"type": "text", "text": "shipped"}]),))
    turn = scenario.host_turn(call)
    body = WIRE.body(Request("gemini-2.5-flash", (scenario.QUESTION, turn, outputs), TOOLS))
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "name": "lookup_order",
                        "args": {"order_id": "A-1042"},
                        "id": "call_1",
                    }
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "lookup_order",
                        "id": "call_1",
                        "response": {"result": "shipped"},
                    }
                }
            ],
        },
    ]


def test_a_result_that_answers_no_call_is_a_usage_error() -> None:
    outputs = ToolOutputs((ToolResult("nobody", "x"),))
    with pytest.raises(UsageError):
        WIRE.body(Request("gemini-2.5-flash", (scenario.QUESTION, AssistantTurn(), outputs)))


def test_a_blocked_prompt_is_a_turn_that_says_why() -> None:
    body = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"totalTokenCount": 9}}
    turn = WIRE.turn(body, TOOLS)
    assert (turn.text, turn.tool_calls, turn.stop) == (None, (), "SAFETY")


def test_thoughts_are_not_the_answer() -> None:
    parts = [{"text": "Let me think.", "thought": True}, {"text": "Paris is rainy."}]
    assert WIRE.turn(response(parts), TOOLS).text == "Paris is rainy."


# --- streaming ---------------------------------------------------------------------------------


def text_chunks(pieces: list[str]) -> list[dict[str, Any]]:
    """A streamed answer: each piece of text its own chunk, the last with the finish reason."""
    chunks = [response([{"text": piece}], None) for piece in pieces]
    return [*chunks, response([{"text": ""}], "STOP")]


def test_the_recorded_chunks_follow_googles_schema() -> None:
    chunks = [*text_chunks(["Paris", " is rainy."]), response([CALL_PARTS[0]])]
    assert [c for c in chunks if errors("gemini", "GenerateContentResponse", c)] == []


def test_streamed_calls_come_whole_and_keep_their_order_and_signature() -> None:
    chunks = [
        response([{"text": "Checking."}], None),
        response(CALL_PARTS[:2], None),
        response(CALL_PARTS[2:], "STOP"),
    ]
    streamed = accumulate(chunks, TOOLS)
    whole = WIRE.turn(FUNCTION_CALLS_RESPONSE, TOOLS)
    assert (streamed.tool_calls, streamed.stop, streamed.usage) == (
        whole.tool_calls,
        whole.stop,
        whole.usage,
    )
    assert streamed.text == "Checking."
    assert streamed.raw["parts"][1] == CALL_PARTS[0]


def test_a_text_signature_closes_the_text_part_it_arrives_on() -> None:
    chunks = [
        response([{"text": "Paris"}], None),
        response([{"text": " is rainy.", "thoughtSignature": SIGNATURE}], None),
        response([{"text": " Anything else?"}], "STOP"),
    ]
    raw = accumulate(chunks).raw
    assert raw["parts"] == [
        {"text": "Paris is rainy.", "thoughtSignature": SIGNATURE},
        {"text": " Anything else?"},
    ]


@given(fragments(scenario.FINAL_TEXT))
def test_any_split_of_the_text_accumulates_to_the_same_answer(pieces: list[str]) -> None:
    turn = accumulate(text_chunks(pieces), TOOLS)
    assert (turn.text, turn.stop) == (scenario.FINAL_TEXT, "STOP")
    assert len(turn.raw["parts"]) == 1


# --- malformed bodies --------------------------------------------------------------------------

MALFORMED: list[tuple[Any, str]] = [
    (42, ""),
    ({"candidates": []}, "/candidates"),
    ({"candidates": [{"content": {"parts": {"text": "x"}}}]}, "/candidates/0/content/parts"),
    ({"candidates": [{"content": {"parts": [{"text": 1}]}}]}, "/candidates/0/content/parts/0/text"),
    (
        {"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]},
        "/candidates/0/content/parts/0/functionCall/name",
    ),
    (
        {"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}},
        "/error",
    ),
]


def test_an_error_chunk_ends_the_stream_with_input_error() -> None:
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    with pytest.raises(InputError) as caught:
        accumulate([*text_chunks(["Par"])[:1], error])
    assert caught.value.pointer == "/1/error"


# --- streamed arguments (Vertex AI streamFunctionCallArguments) -----------------------------------

LEAVES = st.one_of(
    st.text(max_size=12),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
KEYS = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=6).filter(
    lambda key: not ("'" in key and '"' in key)
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(KEYS, inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)
ARGUMENTS = st.dictionaries(KEYS, VALUES, min_size=1, max_size=4)


def json_path(steps: tuple[str | int, ...]) -> str:
    """The JSONPath of ``steps``, each in the notation it allows (``.a``, ``['a.b']``, ``[0]``)."""
    path = "$"
    for step in steps:
        if isinstance(step, int):
            path += f"[{step}]"
        elif not set(step) & set(".[]'\""):
            path += f".{step}"
        else:
            path += f"['{step}']" if "'" not in step else f'["{step}"]'
    return path


def leaves(value: Any, steps: tuple[str | int, ...] = ()) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in leaves(item, (*steps, key))]
    if isinstance(value, list):
        return [leaf for index, item in enumerate(value) for leaf in leaves(item, (*steps, index))]
    return [(json_path(steps), value)]


def partial_args(arguments: dict[str, Any], data: st.DataObject) -> list[dict[str, Any]]:
    """The ``partialArgs`` entries a model streams ``arguments`` as: one value per entry, a
    string in pieces (each but the last with ``willContinue``)."""
    entries: list[dict[str, Any]] = []
    for path, value in leaves(arguments):
        if isinstance(value, str):
            pieces = data.draw(fragments(value), label="pieces")
            head = [{"jsonPath": path, "stringValue": piece} for piece in pieces[:-1]]
            entries += [entry | {"willContinue": True} for entry in head]
            entries.append({"jsonPath": path, "stringValue": pieces[-1]})
        elif isinstance(value, bool):
            entries.append({"jsonPath": path, "boolValue": value})
        elif value is None:
            entries.append({"jsonPath": path, "nullValue": "NULL_VALUE"})
        else:
            entries.append({"jsonPath": path, "numberValue": value})
    return entries


def call_chunks(entries: list[dict[str, Any]], data: st.DataObject) -> list[dict[str, Any]]:
    """One streamed call: the part that opens it, the entries over parts (several to a part,
    or one), the empty part that closes it, each part its own chunk."""
    opening = {"functionCall": {"name": "billing.refund", "willContinue": True}}
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=len(entries), max_size=len(entries)))
    parts, start = [opening], 0
    for size in sizes:
        if start < len(entries):
            group = entries[start : start + size]
            parts.append({"functionCall": {"partialArgs": group, "willContinue": True}})
            start += size
    parts.append({"functionCall": {}})
    return [response([part], None) for part in parts] + [response([{"text": ""}], "STOP")]


@given(ARGUMENTS, st.data())
def test_any_arguments_streamed_as_partial_args_are_rebuilt(
    arguments: dict[str, Any], data: st.DataObject
) -> None:
    reader = WIRE.stream_reader(TOOLS)
    chunks = call_chunks(partial_args(arguments, data), data)
    deltas = [delta for chunk in chunks for delta in reader.feed(chunk)]
    (call,) = reader.turn().tool_calls
    assert same_json(call.arguments, arguments)
    assert (call.name, deltas[0]) == ("billing.refund", CallStarted(0, None, "billing.refund"))
    assert same_json(json.loads(deltas[-1].text), arguments)  # type: ignore[union-attr]


PARTIAL = "/1/candidates/0/content/parts/0/functionCall/partialArgs/0"


@pytest.mark.parametrize(
    ("entry", "pointer"),
    [
        ({"jsonPath": "city", "stringValue": "Paris"}, f"{PARTIAL}/jsonPath"),
        ({"jsonPath": "$", "stringValue": "Paris"}, f"{PARTIAL}/jsonPath"),
        ({"jsonPath": "$.city"}, PARTIAL),
        ({"jsonPath": "$.city[0]", "stringValue": "Paris"}, f"{PARTIAL}/jsonPath"),
        # an index past the next item: refused, not filled with a billion nulls
        ({"jsonPath": "$.ids[999999999]", "numberValue": 1}, f"{PARTIAL}/jsonPath"),
    ],
)
def test_a_partial_argument_without_a_path_or_value_that_fits_is_refused(
    entry: dict[str, Any], pointer: str
) -> None:
    opening = {"functionCall": {"name": "billing.refund", "willContinue": True}}
    first = {"jsonPath": "$.city", "stringValue": "Oslo"}
    entries = [entry] if "[0]" not in entry["jsonPath"] else [first, entry]
    pointer = pointer if len(entries) == 1 else pointer.replace("partialArgs/0", "partialArgs/1")
    reader = WIRE.stream_reader(TOOLS)
    reader.feed(response([opening], None))
    with pytest.raises(InputError) as caught:
        reader.feed(response([{"functionCall": {"partialArgs": entries}}], None))
    assert caught.value.pointer == pointer


def test_a_part_of_a_call_never_opened_is_refused() -> None:
    part = {"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "Paris"}]}}
    with pytest.raises(InputError) as caught:
        WIRE.stream_reader(TOOLS).feed(response([part], None))
    assert caught.value.pointer == "/0/candidates/0/content/parts/0/functionCall/name"


CASE = WireCase(
    api=API,
    tools=TOOLS,
    schemas="gemini",
    request_schema="GenerateContentRequest",
    response_schema="GenerateContentResponse",
    calls_response=FUNCTION_CALLS_RESPONSE,
    final_response=FINAL_RESPONSE,
    call_ids=SYNTHESIZED_IDS,
    arguments=list(scenario.ARGUMENTS),
    calls_text=None,
    calls_stop="STOP",
    final_stop="STOP",
    usage=USAGE,
    structured_options={
        "temperature": 0.2,
        "maxOutputTokens": 512,
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    },
    malformed=MALFORMED,
)
