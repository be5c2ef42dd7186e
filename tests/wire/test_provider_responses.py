"""Conformance with what real providers send: every case of the provider-response corpus
(tests/data/provider-responses), read through `schemawire.wire` with the tools under their own
names and renamed, agrees with its expected calls and text. Streams are also read an event at
a time: the live deltas agree with the turn, and the assembled body reads as the same turn.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from schemawire.errors import InputError
from schemawire.types import ToolCall
from schemawire.wire import AssistantTurn, ToolRef, wire_format
from schemawire.wire.openai_chat import WIRE as CHAT
from schemawire.wire.stream import ArgumentsDelta, CallStarted, StreamDelta, TextDelta
from tests.wire.provider_responses import CASES, api, case_id, disagreements, parsed, tool_refs

RUNS = pytest.mark.parametrize("renamed", [False, True], ids=["own-names", "renamed"])


def test_the_corpus_is_whole() -> None:
    """The counts its README gives: a lost or duplicated line would let failures hide."""
    assert len(CASES) == 437
    assert Counter(case["api"] for case in CASES) == {
        "openai_chat": 134,
        "openai_responses": 107,
        "anthropic": 106,
        "gemini": 90,
    }
    assert sum(case["streamed"] for case in CASES) == 103
    assert [case_id(case) for case in CASES if "optin" in case] == [
        case_id(case) for case in CASES if "partial_args_optin" in case["features"]
    ]
    assert len({case_id(case) for case in CASES}) == 437


def read_case(case: dict[str, Any], tools: tuple[ToolRef, ...]) -> AssistantTurn:
    wire = wire_format(api(case))
    if not case["streamed"]:
        return wire.turn(case["body"], tools)
    reader = wire.stream_reader(tools)
    for event in case["events"]:
        reader.feed(event)
    return reader.turn()


@RUNS
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_recorded_response_reads_as_expected(case: dict[str, Any], renamed: bool) -> None:
    turn = read_case(case, tool_refs(case, renamed))
    assert disagreements(turn, case, renamed) == []


STREAMS = [case for case in CASES if case["streamed"]]


@RUNS
@pytest.mark.parametrize("case", STREAMS, ids=case_id)
def test_a_streams_live_deltas_and_assembled_body_agree_with_its_turn(
    case: dict[str, Any], renamed: bool
) -> None:
    tools = tool_refs(case, renamed)
    wire = wire_format(api(case))
    reader = wire.stream_reader(tools)
    deltas = [delta for event in case["events"] for delta in reader.feed(event)]
    turn = reader.turn()
    assert wire.turn(json.loads(json.dumps(reader.body())), tools) == turn  # as plain JSON
    assert live_view(deltas) == (turn.text or None, [shown(call) for call in turn.tool_calls])


def live_view(deltas: list[StreamDelta]) -> tuple[str | None, list[tuple[str | None, str, Any]]]:
    """What a live display of ``deltas`` shows: the text, and each call's id, name and
    arguments (its pieces joined, read as JSON)."""
    text = "".join(delta.text for delta in deltas if isinstance(delta, TextDelta))
    starts = [delta for delta in deltas if isinstance(delta, CallStarted)]
    assert [start.index for start in starts] == list(range(len(starts)))
    pieces = {start.index: "" for start in starts}
    for delta in deltas:
        if isinstance(delta, ArgumentsDelta):
            pieces[delta.index] += delta.text
    calls = [(s.call_id, s.name, json.loads(pieces[s.index] or "{}")) for s in starts]
    return text or None, calls


def shown(call: ToolCall) -> tuple[str | None, str, Any]:
    """A call as the live display must have shown it (an id Gemini did not send is made up
    by `turn`, so the display had none)."""
    synthesized = call.provider == "gemini" and call.call_id.startswith(f"{call.name}-")
    return (None if synthesized else call.call_id, call.name, parsed(call.arguments))


# --- the failures the corpus found, each on its own ---------------------------------------------


def only(feature: str) -> dict[str, Any]:
    (case,) = [case for case in CASES if feature in case["features"]]
    return case


def test_a_chat_call_without_arguments_is_a_call_with_empty_arguments() -> None:
    case = only("args_missing")  # OpenRouter: function.arguments missing altogether
    call = case["body"]["choices"][0]["message"]["tool_calls"][0]
    assert "arguments" not in call["function"]
    turn = CHAT.turn(case["body"], tool_refs(case, False))
    assert [c.arguments for c in turn.tool_calls] == ["{}"]


@pytest.mark.parametrize("arguments", [None, ""], ids=["null", "empty"])
def test_null_or_empty_chat_arguments_are_empty_arguments_plain_and_streamed(
    arguments: str | None,
) -> None:
    function = {"name": "ping", "arguments": arguments}
    call = {"id": "call_1", "type": "function", "function": function}
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [call]}}]}
    assert CHAT.turn(body, ()).tool_calls[0].arguments == "{}"
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]}}]}
    reader = CHAT.stream_reader()
    reader.feed(chunk)
    assert reader.turn().tool_calls[0].arguments == "{}"


def test_chat_fragments_without_index_continue_the_last_call_until_a_new_id() -> None:
    case = only("no_index")  # Gemini's OpenAI-compatible endpoint
    assert "index" not in case["events"][0]["choices"][0]["delta"]["tool_calls"][0]
    head = {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": '{"x"'}}
    rest = {"function": {"arguments": ": 1}"}}
    second = {"id": "call_b", "type": "function", "function": {"name": "g", "arguments": "{}"}}
    events = [{"choices": [{"index": 0, "delta": {"tool_calls": [f]}}]} for f in (head, rest)]
    events.append({"choices": [{"index": 0, "delta": {"tool_calls": [second]}}]})
    reader = CHAT.stream_reader()
    deltas = [delta for event in events for delta in reader.feed(event)]
    calls = reader.turn().tool_calls
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("call_a", "f", '{"x": 1}'),
        ("call_b", "g", "{}"),
    ]
    assert deltas == [
        CallStarted(0, "call_a", "f"),
        ArgumentsDelta(0, '{"x"'),
        ArgumentsDelta(0, ": 1}"),
        CallStarted(1, "call_b", "g"),
        ArgumentsDelta(1, "{}"),
    ]


def test_a_fragment_without_index_or_id_before_any_call_is_refused() -> None:
    fragment = {"function": {"arguments": "{}"}}
    with pytest.raises(InputError) as caught:
        CHAT.stream_reader().feed({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]})
    assert caught.value.pointer == "/0/choices/0/delta/tool_calls/0/index"


@pytest.mark.parametrize(
    "case", [case for case in CASES if "optin" in case], ids=case_id
)  # the four Vertex streamFunctionCallArguments streams
def test_gemini_partial_args_build_each_call_from_its_json_paths(case: dict[str, Any]) -> None:
    reader = wire_format("gemini").stream_reader(tool_refs(case, False))
    for event in case["events"]:
        reader.feed(event)
    body = reader.body()
    parts = body["candidates"][0]["content"]["parts"]
    calls = [part["functionCall"] for part in parts if "functionCall" in part]
    expected = [call["arguments"] for call in case["expected"]["calls"]]
    assert [call.get("args", {}) for call in calls] == expected
    assert all("partialArgs" not in call and "willContinue" not in call for call in calls)
