"""What every API's wire format must do with the scripted conversation, the same way: requests
that follow the API's published schema (and their snapshots), the three parallel calls read
back under their canonical names, the final answer, and malformed bodies refused saying where.
What is particular to one API is tested in its own module (``test_<api>.py``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from schemawire.errors import ErrorCode, InputError
from schemawire.wire import APIS, wire_format
from tests.wire import scenario
from tests.wire.provider_schemas import errors
from tests.wire.test_anthropic import CASE as ANTHROPIC
from tests.wire.test_gemini import CASE as GEMINI
from tests.wire.test_openai_chat import CASE as OPENAI_CHAT
from tests.wire.test_openai_responses import CASE as OPENAI_RESPONSES
from tests.wire.wire_case import WireCase

CASES = [OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, GEMINI]
each_api = pytest.mark.parametrize("case", CASES, ids=[case.api for case in CASES])
Snapshot = Callable[[str, Any], None]


@each_api
def test_the_api_is_found_by_name(case: WireCase) -> None:
    wire = importlib.import_module(f"schemawire.wire.{APIS[case.api]}").WIRE
    assert wire_format(case.api) is wire
    assert (wire.name, wire.target) == (case.api, case.api)


@each_api
def test_the_recorded_responses_follow_the_apis_schema(case: WireCase) -> None:
    for body in (case.calls_response, case.final_response):
        assert errors(case.schemas, case.response_schema, body) == []


@each_api
def test_the_first_request_follows_the_apis_schema(case: WireCase, snapshot: Snapshot) -> None:
    body = wire_format(case.api).body(scenario.first_request(case.api, case.tools))
    snapshot(f"wire-{case.api}-first", body)
    assert errors(case.schemas, case.request_schema, body) == []


@each_api
def test_three_parallel_calls_come_back_with_canonical_names(case: WireCase) -> None:
    turn = wire_format(case.api).turn(case.calls_response, case.tools)
    assert (turn.text, turn.stop, turn.usage) == (case.calls_text, case.calls_stop, case.usage)
    assert list(turn.tool_calls) == case.expected_calls()


@each_api
def test_the_scripted_conversation_follows_the_apis_schema_to_the_final_answer(
    case: WireCase, snapshot: Snapshot
) -> None:
    body = case.conversation_body()
    snapshot(f"wire-{case.api}-conversation", body)
    assert errors(case.schemas, case.request_schema, body) == []
    final = wire_format(case.api).turn(case.final_response, case.tools)
    assert (final.text, final.tool_calls, final.stop) == (scenario.FINAL_TEXT, (), case.final_stop)


@each_api
def test_a_structured_output_request_follows_the_apis_schema(
    case: WireCase, snapshot: Snapshot
) -> None:
    body = case.structured_body()
    snapshot(f"wire-{case.api}-structured", body)
    assert errors(case.schemas, case.request_schema, body) == []


@pytest.mark.parametrize(
    ("case", "body", "pointer"),
    [(case, body, pointer) for case in CASES for body, pointer in case.malformed],
    ids=[f"{case.api}-{i}" for case in CASES for i in range(len(case.malformed))],
)
def test_a_malformed_body_raises_input_error_saying_where(
    case: WireCase, body: Any, pointer: str
) -> None:
    with pytest.raises(InputError) as caught:
        wire_format(case.api).turn(body, case.tools)
    assert (caught.value.code, caught.value.pointer) == (ErrorCode.JSON_SYNTAX, pointer)
