"""Checks of JSON values the gates share: limits on a parsed value, values that are not JSON,
and replacing one value inside another without changing the caller's copy."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import orjson

from schemawire._json import quoted
from schemawire._pointer import escape, join, split

__all__ = ["ValueLimits", "ValueProblem", "native_problem", "oversized", "plain_json", "replaced"]

_INT64 = (-(2**63), 2**64 - 1)  # what orjson and most JSON parsers keep exact


@dataclass(frozen=True, slots=True)
class ValueLimits:
    """How large a JSON value may be.

    Attributes:
        max_bytes: the value's JSON text, in bytes of UTF-8.
        max_depth: arrays and objects a value may sit inside.
        max_string: characters of one string (keys included).
        max_items: items of one array, or members of one object.
    """

    max_bytes: int = 1024 * 1024
    max_depth: int = 32
    max_string: int = 100_000
    max_items: int = 10_000

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= 250:
            raise ValueError("max_depth must be between 1 and 250")
        if min(self.max_bytes, self.max_string, self.max_items) < 1:
            raise ValueError("limits must be positive")


@dataclass(frozen=True, slots=True)
class ValueProblem:
    """What is wrong with a value, and where: ``too_large`` for limits, else ``malformed``."""

    kind: str  # "too_large" or "malformed"
    pointer: str
    keyword: str
    message: str


def oversized(value: Any, limits: ValueLimits) -> ValueProblem | None:
    """The first string, array or object of ``value`` over ``limits``, else None."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, str):
            if len(node) > limits.max_string:
                return _too_long(pointer, "string", len(node), limits.max_string)
        elif isinstance(node, list):
            if len(node) > limits.max_items:
                return _too_long(pointer, "array", len(node), limits.max_items)
            stack.extend((item, join(pointer, i)) for i, item in enumerate(node))
        elif isinstance(node, dict):
            if len(node) > limits.max_items:
                return _too_long(pointer, "object", len(node), limits.max_items)
            for key, item in node.items():
                if len(key) > limits.max_string:
                    return _too_long(join(pointer, key), "key", len(key), limits.max_string)
                stack.append((item, join(pointer, key)))
    return None


def native_problem(value: Any, limits: ValueLimits) -> ValueProblem | None:
    """For a value that arrived already parsed: the first part of it that JSON text could not
    have held (a non-string key, NaN, a tuple...), or that is over ``limits``; else None."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, pointer, depth = stack.pop()
        if depth > limits.max_depth:
            return ValueProblem(
                "too_large", pointer, "maxDepth", f"nested deeper than {limits.max_depth} levels"
            )
        problem = _not_json(node, pointer)
        if problem is not None:
            return problem
        if isinstance(node, dict):
            for key in node:
                if not isinstance(key, str):
                    return ValueProblem(
                        "malformed",
                        pointer,
                        "json_type",
                        f"object key {quoted(key)} is not a string",
                    )
                if not _is_unicode(key):  # reported at the object: the key cannot be written
                    return _lone_surrogate(pointer)
            stack.extend((item, join(pointer, key), depth + 1) for key, item in node.items())
        elif isinstance(node, list):
            stack.extend((item, join(pointer, i), depth + 1) for i, item in enumerate(node))
    return oversized(value, limits)


def plain_json(value: Any, limits: ValueLimits) -> tuple[Any, ValueProblem | None]:
    """For a value that arrived already parsed: the same value made of plain JSON types only
    (subclasses of str, int, float, dict and list, such as enums, become the base type), or
    what keeps it from being JSON."""
    problem = native_problem(value, limits)
    if problem is not None:
        return None, problem
    try:
        # (Keys that are str subclasses need the option; `native_problem` refused other keys.)
        return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)), None
    except orjson.JSONEncodeError:
        # Not reached: `native_problem` refuses what orjson cannot write.
        return None, ValueProblem("malformed", "", "json_type", "the value cannot be written")


def _is_unicode(text: str) -> bool:
    """Whether ``text`` holds no lone surrogate (which no JSON text can hold)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _lone_surrogate(pointer: str) -> ValueProblem:
    message = "lone surrogate in a string: JSON text must be valid Unicode"
    return ValueProblem("malformed", pointer, "json_lone_surrogate", message)


def _not_json(node: Any, pointer: str) -> ValueProblem | None:
    if isinstance(node, str):
        return None if _is_unicode(node) else _lone_surrogate(pointer)
    if node is None or isinstance(node, bool | dict | list):
        return None
    if isinstance(node, int):
        fits = _INT64[0] <= node <= _INT64[1]
        message = "integer beyond 64 bits: it cannot be kept exact; send a string"
        return None if fits else ValueProblem("malformed", pointer, "json_big_integer", message)
    if isinstance(node, float):
        message = "NaN and Infinity are not JSON numbers; use null or a string"
        finite = math.isfinite(node)
        return None if finite else ValueProblem("malformed", pointer, "json_non_finite", message)
    message = f"a {type(node).__name__} is not a JSON value"
    return ValueProblem("malformed", pointer, "json_type", message)


def _too_long(pointer: str, what: str, size: int, limit: int) -> ValueProblem:
    unit = "characters" if what in ("string", "key") else "items" if what == "array" else "members"
    keyword = "maxLength" if unit == "characters" else "maxItems"
    return ValueProblem(
        "too_large", pointer, keyword, f"{what} of {size} {unit}, over the limit of {limit}"
    )


def replaced(document: Any, pointer: str, value: Any) -> Any:
    """``document`` with the value at ``pointer`` replaced by ``value``: the containers on the
    way are copied, so ``document`` itself is left as it was."""
    tokens = split(pointer)
    if not tokens:
        return value
    head, rest = tokens[0], "".join("/" + escape(t) for t in tokens[1:])
    if isinstance(document, list):
        index = int(head)
        copy = list(document)
        copy[index] = replaced(document[index], rest, value)
        return copy
    copy_of = dict(document)
    copy_of[head] = replaced(document[head], rest, value)
    return copy_of
