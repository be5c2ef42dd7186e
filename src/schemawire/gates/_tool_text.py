"""What the shortlist index reads of a tool: its words, by field, from the canonical schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from schemawire._words import tokens
from schemawire.schema.dialect import SUBSCHEMA_LISTS, SUBSCHEMA_MAPS, SUBSCHEMA_SINGLE
from schemawire.types import ToolSpec

__all__ = ["FIELDS", "field_tokens"]

# Every field a query can match, in the order `ShortlistedTool.matched` lists them.
FIELDS = ("name", "title", "description", "properties", "enum", "keywords")

# Where subschemas sit (the schema layer's one table): their properties, titles, descriptions
# and enums count as the tool's. Sorted, so the words come in one order in every process.
_MAPS = tuple(sorted(SUBSCHEMA_MAPS))
_LISTS = tuple(sorted(SUBSCHEMA_LISTS))
_SINGLE = tuple(sorted(SUBSCHEMA_SINGLE))
# Far deeper than any real tool schema; stops a cyclic dict built in Python.
_MAX_DEPTH = 32


def field_tokens(spec: ToolSpec) -> dict[str, list[str]]:
    """The tokens of each field of ``spec``: its name (split on ``._-``, camelCase and the
    namespace prefix), the schema's ``title``, ``description`` and ``x-keywords``, and every
    nested property's name, title and description and every ``enum`` value."""
    schema = spec.input_schema
    nested: list[str] = []
    enums: list[str] = []
    for subschema, depth in _subschemas(schema, 0):
        _read_subschema(subschema, nested, enums, top=depth == 0)
    keywords = schema.get("x-keywords")
    return {
        "name": tokens(spec.name),
        "title": tokens(_text(schema.get("title"))),
        "description": tokens(spec.description),
        "properties": tokens(" ".join(nested)),
        "enum": tokens(" ".join(enums)),
        "keywords": tokens(" ".join(k for k in keywords if isinstance(k, str)))
        if isinstance(keywords, list)
        else [],
    }


def _read_subschema(schema: dict[str, Any], nested: list[str], enums: list[str], top: bool) -> None:
    properties = schema.get("properties")
    if isinstance(properties, dict):
        nested.extend(str(name) for name in properties)
    if not top:  # the top-level title and description are fields of their own
        nested.extend((_text(schema.get("title")), _text(schema.get("description"))))
    values = schema.get("enum")
    if isinstance(values, list):
        enums.extend(str(value) for value in values if isinstance(value, str | int | float))


def _subschemas(schema: Any, depth: int) -> Iterator[tuple[dict[str, Any], int]]:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return
    yield schema, depth
    for key in _MAPS:
        children = schema.get(key)
        if isinstance(children, dict):
            for child in children.values():
                yield from _subschemas(child, depth + 1)
    for key in _LISTS:  # draft-07 `items` may be a list: a list is read as one here
        children = schema.get(key)
        if isinstance(children, list):
            for child in children:
                yield from _subschemas(child, depth + 1)
    for key in _SINGLE:
        yield from _subschemas(schema.get(key), depth + 1)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
