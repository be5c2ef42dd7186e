"""Sizes of a projected schema, and the limits targets put on them.

Limits are checked on what is sent, so that a schema too large for a target is reported by the
export, with the limit and the figure, instead of being discovered as a 400 from the provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from schemawire.schema.dialect import SUBSCHEMA_LISTS, SUBSCHEMA_MAPS, SUBSCHEMA_SINGLE
from schemawire.types import Loss

__all__ = ["PER_PROPERTY", "Size", "TargetLimit", "count_node", "exceeded", "measure"]

# The keywords `count_node` counts something of.
_COUNTED = frozenset({"properties", "$defs", "definitions", "enum", "const"})
# The `Size` fields that take a look at each property's schema and at ``required``: a walk whose
# limits bound none of them need not count them (OpenAI's limits do not; Anthropic's do, over a
# whole request).
PER_PROPERTY = frozenset({"optional", "unions"})


@dataclass(slots=True)
class Size:
    """What targets count in a schema.

    Attributes:
        properties: object properties, at every level.
        depth: levels of nested schemas below the root (the root object is level 1).
        chars: characters of property names, definition names, enum values and const values.
        enum_values: values of every ``enum``, together.
        long_enum_chars: characters of the largest string ``enum`` with more than 250 values.
        optional: properties not listed in their object's ``required``.
        unions: properties whose schema is an ``anyOf`` or a list of types.
    """

    properties: int = 0
    depth: int = 0
    chars: int = 0
    enum_values: int = 0
    long_enum_chars: int = 0
    optional: int = 0
    unions: int = 0


@dataclass(frozen=True, slots=True)
class TargetLimit:
    """One limit a target's API puts on the schemas of a request: the `Size` field it bounds,
    its maximum, and where it comes from."""

    field: str
    maximum: int
    source: str


def measure(schema: Any) -> Size:
    """The `Size` of ``schema``."""
    size = Size()
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict):
            continue
        size.depth = max(size.depth, depth)
        count_node(node, size)
        stack.extend((child, depth + 1) for child in _children(node))
    return size


def exceeded(size: Size, limits: tuple[TargetLimit, ...]) -> Iterator[Loss]:
    """A blocking ``LIMIT_EXCEEDED`` loss for each limit that ``size`` is over."""
    for limit in limits:
        figure = getattr(size, limit.field)
        if figure > limit.maximum:
            yield Loss(
                "LIMIT_EXCEEDED",
                "",
                f"{limit.field} is {figure}, over the limit of {limit.maximum} ({limit.source})",
                None,
                "tool",
                blocking=True,
            )


def count_node(node: dict[str, Any], size: Size, *, per_property: bool = True) -> None:
    """Add what ``node`` itself holds (not its subschemas) to ``size``; the `PER_PROPERTY`
    fields only when ``per_property``."""
    if _COUNTED.isdisjoint(node):
        return  # most subschemas: a type and a description
    properties = node.get("properties")
    if isinstance(properties, dict):
        size.properties += len(properties)
        size.chars += sum(map(len, properties))
        if per_property:
            _count_per_property(properties, node.get("required"), size)
    for key in ("$defs", "definitions"):
        if isinstance(node.get(key), dict):
            size.chars += sum(map(len, node[key]))
    enum = node.get("enum")
    if isinstance(enum, list):
        size.enum_values += len(enum)
        text = sum(map(len, map(str, enum)))
        size.chars += text
        if len(enum) > 250 and all(isinstance(value, str) for value in enum):
            size.long_enum_chars = max(size.long_enum_chars, text)
    if "const" in node:
        size.chars += len(str(node["const"]))


def _count_per_property(properties: dict[str, Any], required: Any, size: Size) -> None:
    listed = set(required) if isinstance(required, list) else set()
    size.optional += len(properties.keys() - listed)
    for value in properties.values():
        if isinstance(value, dict) and ("anyOf" in value or isinstance(value.get("type"), list)):
            size.unions += 1  # a union: an anyOf or a list of types


def _children(node: dict[str, Any]) -> Iterator[Any]:
    for key in SUBSCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            yield from node[key].values()
    for key in SUBSCHEMA_SINGLE:
        if isinstance(node.get(key), dict):
            yield node[key]
    for key in SUBSCHEMA_LISTS:
        if isinstance(node.get(key), list):
            yield from node[key]
