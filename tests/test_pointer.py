"""`schemawire._pointer`: RFC 6901 pointers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire._pointer import escape, join, parent, resolve, split, to_pointer


def test_escapes_tilde_before_slash() -> None:
    assert escape("a/b~c") == "a~1b~0c"
    assert to_pointer(["a/b", 0, "~1"]) == "/a~1b/0/~01"


@given(st.lists(st.text() | st.integers(min_value=0)))
def test_split_inverts_to_pointer(tokens: list[str | int]) -> None:
    assert split(to_pointer(tokens)) == [str(token) for token in tokens]


def test_resolves_rfc_6901_examples() -> None:
    document = {"foo": ["bar", "baz"], "": 0, "a/b": 1, "m~n": 8, " ": 7}
    assert resolve(document, "") is document
    assert resolve(document, "/foo/0") == "bar"
    assert resolve(document, "/") == 0
    assert resolve(document, "/a~1b") == 1
    assert resolve(document, "/m~0n") == 8
    assert resolve(document, "/ ") == 7


@pytest.mark.parametrize("pointer", ["/foo/2", "/foo/01", "/foo/-", "/nope", "/foo/0/x"])
def test_resolve_refuses_what_is_not_there(pointer: str) -> None:
    with pytest.raises(KeyError):
        resolve({"foo": ["bar", "baz"]}, pointer)


def test_split_refuses_a_pointer_without_leading_slash() -> None:
    with pytest.raises(ValueError, match="start with"):
        split("foo")


def test_join_and_parent() -> None:
    assert join("/properties", "a/b", 0) == "/properties/a~1b/0"
    assert parent("/properties/a") == "/properties"
    assert parent("") == ""
