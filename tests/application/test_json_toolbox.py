"""`schemawire.application.json_toolbox`: formatting is stable, validation names the cause."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from schemawire._json import ParseLimits, dumps
from schemawire.application.json_toolbox import (
    format_json,
    format_json_lines,
    load_schema,
    validate_file,
)
from schemawire.errors import ErrorCode, JSONError, SchemaError
from schemawire.schema.validator import compile_schema
from tests.helpers import EXAMPLES
from tests.strategies import json_values


@pytest.mark.slow
@given(json_values)
@settings(max_examples=200)
def test_format_is_idempotent(value: Any) -> None:
    once = format_json(dumps(value, indent=False))
    assert format_json(once) == once


def test_json_lines_are_formatted_compactly_and_errors_name_the_line() -> None:
    assert format_json_lines('{ "a" : 1 }\n\n[ 1 ]\n') == '{"a":1}\n[1]\n'
    with pytest.raises(JSONError) as caught:
        format_json_lines('{"a": 1}\n{"a": }\n')
    assert caught.value.line == 2


def test_a_schema_whose_shared_definition_is_broken_is_refused_at_the_definition(
    tmp_path: Path,
) -> None:
    desk = tmp_path / "desk"
    shutil.copytree(EXAMPLES / "support-desk", desk)
    common = desk / "schemas/common/order.json"
    common.write_text(common.read_text().replace('"A-1042"', '"A-1042",'))
    for reference in ("create_refund", str(desk / "schemas/tools/create_refund.json")):
        with pytest.raises(SchemaError) as caught:
            load_schema(reference, repository_dir=desk)
        error = caught.value
        assert (error.code, error.source, error.line, error.column) == (
            ErrorCode.SCHEMA_INVALID,
            "schemas/common/order.json",
            12,
            17,
        )
        assert error.message.startswith("schemas/tools/create_refund.json depends on")


def test_a_schema_that_does_not_compile_is_refused_where_the_pattern_is(tmp_path: Path) -> None:
    desk = tmp_path / "desk"
    shutil.copytree(EXAMPLES / "support-desk", desk)
    common = desk / "schemas/common/order.json"
    common.write_text(common.read_text().replace('"^A-[0-9]{4,}$"', '"(unclosed"'))
    with pytest.raises(SchemaError) as caught:
        load_schema("create_refund", repository_dir=desk)
    assert (caught.value.source, caught.value.pointer) == (
        "schemas/common/order.json",
        "/$defs/order_id",
    )


def test_limits_reach_every_instance(tmp_path: Path) -> None:
    compiled = compile_schema({"type": "object"})
    lines = tmp_path / "calls.jsonl"
    lines.write_text('{"a": 1}\n{"a": "a much longer line"}\n')
    small = ParseLimits(max_bytes=12)
    results = list(validate_file(compiled, lines, limits=small))
    assert [r.error.code if r.error else None for r in results] == [
        None,
        ErrorCode.JSON_TOO_LARGE,
    ]
    one = tmp_path / "one.json"
    one.write_text('{"a": "a much longer text"}')
    (result,) = validate_file(compiled, one, limits=small)
    assert result.error is not None
    assert result.error.code == ErrorCode.JSON_TOO_LARGE
