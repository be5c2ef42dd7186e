"""`schemawire._patch`: a diff is a patch that applies; each edit keeps the value it replaced."""

from __future__ import annotations

from typing import Any

import jsonpatch
from hypothesis import given, settings

from schemawire._json import dumps
from schemawire._patch import diff_json, summarise_patch
from tests.strategies import json_values


@given(json_values, json_values)
@settings(max_examples=300)
def test_diff_is_a_patch_that_turns_old_into_new(old: Any, new: Any) -> None:
    patch = diff_json(old, new)
    assert dumps(jsonpatch.apply_patch(old, patch), sort_keys=True) == dumps(new, sort_keys=True)
    assert (patch == []) == (dumps(old, sort_keys=True) == dumps(new, sort_keys=True))


def test_diff_tells_true_from_1() -> None:
    assert diff_json({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]


def test_summary_keeps_the_value_before_each_edit() -> None:
    old = {"unit": "celsius", "tags": ["a", "b"]}
    new = {"unit": "kelvin", "tags": ["a"], "city": "上海"}
    edits = summarise_patch(old, diff_json(old, new))
    assert {(c.op, c.path, c.old, c.new) for c in edits} == {
        ("replace", "/unit", "celsius", "kelvin"),
        ("remove", "/tags/1", "b", None),
        ("add", "/city", None, "上海"),
    }
