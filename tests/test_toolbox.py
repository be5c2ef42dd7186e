"""`schemawire.toolbox`: formatting is stable, diffs are patches that apply."""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire._json import dumps
from schemawire.errors import JSONError
from schemawire.toolbox import diff_json, format_json, format_json_lines, summarise_patch

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(values)
@settings(max_examples=200)
def test_format_is_idempotent(value: Any) -> None:
    once = format_json(dumps(value, indent=False))
    assert format_json(once) == once


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
