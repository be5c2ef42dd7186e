"""Integral floats handed on as integers where the schema says ``integer``.

JSON does not tell 5 from 5.0, and JSON Schema calls both an integer, so the argument gate
rightly accepts ``"limit": 5.0`` for ``{"type": "integer"}``. Python tells them apart, and so do
servers whose parsers map ``integer`` to a machine integer: the tool would get a float and fail
(``range(5.0)``). The gate hands on ``5``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urldefrag, urljoin

from schemawire._json import dumps
from schemawire._pointer import join
from schemawire.gates._schema_view import SchemaView
from schemawire.gates._values import replaced

__all__ = ["IntegerPlaces"]

# Floats are exact integers up to 2**53; past that, 1e20 as an int is not what the model wrote
# to the digit, and past 64 bits no JSON writer of ours (orjson) could send it on.
_EXACT = 2**53
# How orjson writes an integral float of at most 2**53 in magnitude: its digits, then ".0" and
# no other digit (from 1e16 on it writes an exponent). No other number it writes ends so.
_INTEGRAL_FLOAT_WRITTEN = re.compile(rb"\.0(?![0-9])")


class IntegerPlaces:
    """Where a schema wants integers, asked only of values that hold an integral float."""

    def __init__(self, schema: Any, documents: Mapping[str, Any] | None = None) -> None:
        self._view = SchemaView(schema, documents)

    @classmethod
    def of(cls, schema: Any, documents: Mapping[str, Any] | None = None) -> IntegerPlaces | None:
        """The integer places of ``schema``; None when it (and what it references) has none,
        so that a gate asks nothing of its calls."""
        return cls(schema, documents) if _mentions_integer(schema, documents or {}) else None

    def apply(self, value: Any, written: bytes | None = None) -> Any:
        """``value`` with each integral float the schema types ``integer`` made an ``int`` (a
        new value where anything changed; ``value`` itself is never changed).

        ``written`` is orjson's text of ``value`` (`loads_written`), when the caller has it:
        one search of it decides the usual call, where a walk of the value costs as much as
        parsing it. A string that happens to hold ``.0`` only costs that walk.
        """
        if written is not None and _INTEGRAL_FLOAT_WRITTEN.search(written) is None:
            return value
        if not _holds_integral_float(value):
            return value  # nearly every call: no such float
        for pointer, number in _integral_floats(value):
            if abs(number) <= _EXACT and self._view.says_integer(pointer):
                value = replaced(value, pointer, int(number))
        return value


def _mentions_integer(schema: Any, documents: Mapping[str, Any]) -> bool:
    """Whether ``schema``, or a document its ``$ref``s reach, says ``"integer"`` anywhere (a
    text search: it may say so where no value goes, which only costs a walk per call)."""
    seen: set[str] = set()
    pending = [schema]
    while pending:
        document = pending.pop()
        text = dumps(document, indent=False)
        if '"integer"' in text:
            return True
        for uri in _referenced(document, text):
            if uri not in seen and uri in documents:
                seen.add(uri)
                pending.append(documents[uri])
    return False


def _referenced(document: Any, text: str) -> list[str]:
    """The documents (absolute URIs, no fragment) ``document``'s references name."""
    if '"$ref"' not in text:
        return []
    base = document.get("$id", "") if isinstance(document, dict) else ""
    base = base if isinstance(base, str) else ""
    found: list[str] = []
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str):
                found.append(urldefrag(urljoin(base, reference)).url)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _holds_integral_float(value: Any) -> bool:
    """Whether ``value`` is, or holds, a float with no fractional part (no pointers made: this
    runs on every accepted call)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            node = node.values()
        elif type(node) is not list:
            if type(node) is float and node.is_integer():
                return True
            continue
        for item in node:  # the members of the usual flat object, without the stack
            if type(item) is float:
                if item.is_integer():
                    return True
            elif type(item) is dict or type(item) is list:
                stack.append(item)
    return False


def _integral_floats(value: Any) -> list[tuple[str, float]]:
    """Every float of ``value`` with no fractional part, with its pointer."""
    found: list[tuple[str, float]] = []
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, pointer = stack.pop()
        if type(node) is float:
            if node.is_integer():
                found.append((pointer, node))
        elif type(node) is dict:
            stack.extend((item, join(pointer, key)) for key, item in node.items())
        elif type(node) is list:
            stack.extend((item, join(pointer, index)) for index, item in enumerate(node))
    return found
