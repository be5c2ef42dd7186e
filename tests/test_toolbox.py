"""`schemawire.toolbox`: formatting is stable, diffs are patches that apply."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire._json import Limits, dumps
from schemawire.errors import ErrorCode, JSONError, SchemaError
from schemawire.schema.validator import compile_schema
from schemawire.toolbox import (
    diff_json,
    format_json,
    format_json_lines,
    load_schema,
    summarise_patch,
    validate_file,
)
from tests.helpers import EXAMPLES

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.slow
@given(values)
@settings(max_examples=200)
def test_format_is_idempotent(value: Any) -> None:
    once = format_json(dumps(value, indent=False))
    assert format_json(once) == once


@pytest.mark.slow
@given(values, values)
@settings(max_examples=300)
def test_diff_is_a_patch_that_turns_old_into_new(old: Any, new: Any) -> None:
    patch = diff_json(old, new)
    assert dumps(jsonpatch.apply_patch(old, patch), sort_keys=True) == dumps(new, sort_keys=True)
    assert (patch == []) == (dumps(old, sort_keys=True) == dumps(new, sort_keys=True))


def test_diff_tells_true_from_1() -> None:
    assert diff_json({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]


def test_summary_keeps_the_values_before_each_change() -> None:
    old = {"unit": "celsius", "tags": ["a", "b"]}
    new = {"unit": "kelvin", "tags": ["a"], "city": "上海"}
    changes = summarise_patch(old, diff_json(old, new))
    assert {(c.op, c.path, c.old, c.new) for c in changes} == {
        ("replace", "/unit", "celsius", "kelvin"),
        ("remove", "/tags/1", "b", None),
        ("add", "/city", None, "上海"),
    }


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
    small = Limits(max_bytes=12)
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
