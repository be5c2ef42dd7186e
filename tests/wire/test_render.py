"""What the four APIs share: results as text and as objects, names, options, shape errors."""

from __future__ import annotations

from typing import Any

import pytest

from schemawire.errors import ErrorCode, InputError, JSONError, UsageError
from schemawire.types import ToolResult
from schemawire.wire import APIS, ToolRef, wire_format
from schemawire.wire._render import (
    Cursor,
    arguments_object,
    arguments_text,
    canonical_name,
    result_object,
    result_text,
    wire_name,
    with_options,
)

TOOLS = (ToolRef("billing.refund", "billing_refund", {}), ToolRef("get_weather", "get_weather", {}))
IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ([{"type": "text", "text": "18°C"}, {"type": "text", "text": "rain"}], "18°C\nrain"),
        (
            [{"type": "text", "text": "a chart:"}, IMAGE],
            'a chart:\n{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}',
        ),
        ("plain text", "plain text"),
        ({"temp": 18, "sky": "rain"}, '{"temp":18,"sky":"rain"}'),
        ([1, 2], "[1,2]"),
        ([], "[]"),
        (None, "null"),
    ],
)
def test_results_become_the_text_a_tool_message_carries(content: Any, text: str) -> None:
    assert result_text(ToolResult("c", content)) == text


@pytest.mark.parametrize(
    ("result", "response"),
    [
        (ToolResult("c", {"temp": 18}), {"temp": 18}),
        (ToolResult("c", [{"type": "text", "text": "18°C"}]), {"result": "18°C"}),
        (ToolResult("c", 18), {"result": 18}),
        (ToolResult("c", [1, 2]), {"result": [1, 2]}),
        (ToolResult("c", {"error": {"code": "x"}}, is_error=True), {"error": {"code": "x"}}),
        (ToolResult("c", {"reason": "down"}, is_error=True), {"error": {"reason": "down"}}),
        (ToolResult("c", [{"type": "text", "text": "boom"}], is_error=True), {"error": "boom"}),
    ],
)
def test_results_become_objects_for_apis_that_take_only_objects(
    result: ToolResult, response: dict[str, Any]
) -> None:
    assert result_object(result) == response


def test_names_map_both_ways_and_unknown_names_pass_through() -> None:
    assert wire_name("billing.refund", TOOLS) == "billing_refund"
    assert canonical_name("billing_refund", TOOLS) == "billing.refund"
    assert canonical_name("rm_rf", TOOLS) == wire_name("rm_rf", TOOLS) == "rm_rf"


def test_arguments_keep_the_models_text_and_parse_only_when_an_object_is_needed() -> None:
    assert arguments_text('{"a": 1 }') == '{"a": 1 }'
    assert arguments_text({"a": 1}) == '{"a":1}'
    assert arguments_object('{"a": 1}', "<x>") == {"a": 1}
    with pytest.raises(UsageError):
        arguments_object("[1]", "<x>")
    with pytest.raises(JSONError):
        arguments_object("{", "<x>")


def test_options_are_added_merged_or_refused() -> None:
    body = {"model": "m", "text": {"format": {"type": "json_schema"}}}
    merged = with_options(body, {"text": {"verbosity": "low"}, "top_p": 1}, frozenset({"text"}))
    assert merged == {
        "model": "m",
        "text": {"verbosity": "low", "format": {"type": "json_schema"}},
        "top_p": 1,
    }
    with pytest.raises(UsageError):
        with_options(body, {"model": "other"})


def test_a_cursor_says_what_it_expected_what_came_and_where() -> None:
    root = Cursor({"choices": [{"index": "0"}]}, "<api response>")
    with pytest.raises(InputError) as caught:
        root.at("choices").at(0).at("index").integer()
    error = caught.value
    assert (error.code, error.source, error.pointer) == (
        ErrorCode.JSON_SYNTAX,
        "<api response>",
        "/choices/0/index",
    )
    assert error.message == "expected an integer, got string"
    assert not root.at("missing").at(3).present


def test_every_api_has_a_wire_format_that_names_itself() -> None:
    for api in APIS:
        wire = wire_format(api)
        assert (wire.name, wire.target) == (api, api)
    with pytest.raises(UsageError):
        wire_format("openai.completions")
