"""`schemawire._jsonpos`: where each pointer of a JSON text sits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire._jsonpos import ScanError, excerpt, iter_nodes, pointer_offsets, position
from schemawire._pointer import resolve
from tests.strategies import json_values


def test_offsets_point_at_keys_of_members_and_at_array_items() -> None:
    text = '{\n  "a": [10, {"b/c": true}],\n  "~x": "上海"\n}'
    offsets = pointer_offsets(text)
    assert set(offsets) == {"", "/a", "/a/0", "/a/1", "/a/1/b~1c", "/~0x"}
    assert text[offsets["/a"] :].startswith('"a"')
    assert text[offsets["/a/0"] :].startswith("10")
    assert text[offsets["/a/1/b~1c"] :].startswith('"b/c"')
    assert position(text, offsets["/~0x"]) == (3, 3)


@pytest.mark.slow
@given(json_values, st.booleans())
@settings(max_examples=300)
def test_every_pointer_of_a_document_is_found(document: Any, indent: bool) -> None:
    text = json.dumps(document, ensure_ascii=False, indent=2 if indent else None)
    nodes = list(iter_nodes(text))
    for node in nodes:
        literal, _ = json.JSONDecoder().raw_decode(text, node.offset)
        assert literal == resolve(document, node.pointer)
    assert len(nodes) == _count_values(document)
    assert not any(node.duplicate for node in nodes)


def _count_values(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(_count_values(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(_count_values(item) for item in value)
    return 1


def test_duplicate_members_are_flagged() -> None:
    nodes = list(iter_nodes('{"a": 1, "b": {"a": 2}, "a": 3}'))
    assert [(n.pointer, n.duplicate) for n in nodes if n.duplicate] == [("/a", True)]


def test_depth_counts_enclosing_containers() -> None:
    assert [node.depth for node in iter_nodes("[[1], {}]")] == [0, 1, 2, 1]


def test_scanning_stops_with_the_offset_where_text_stops_being_json() -> None:
    with pytest.raises(ScanError) as caught:
        list(iter_nodes('{"a": [1, 2 3]}'))
    assert caught.value.offset == 12


def test_truncated_text_gives_offsets_found_so_far() -> None:
    assert set(pointer_offsets('{"a": 1, "b": [')) == {"", "/a", "/b"}


def test_excerpt_marks_control_characters_and_keeps_the_caret_aligned() -> None:
    line, caret = excerpt("ab\x00cd", 3).splitlines()
    assert line == "  ab\N{REPLACEMENT CHARACTER}cd"
    assert caret.index("^") == line.index("c")
