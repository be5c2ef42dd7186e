"""Keyword handlers of the projection walk: what each keyword becomes for a target.

Each handler takes (walk, node, value, schema, where) and writes into ``node.out`` what the
target gets for that keyword, recording every change as a loss on the walk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from schemawire._json import quoted
from schemawire.project._arguments import IDENTITY, ArgumentMap
from schemawire.project._merge import merge_schemas
from schemawire.project._names import unique_name
from schemawire.project._policy import (
    NULL,
    Node,
    Where,
    enum_value_ok,
    is_object,
    short,
    upper_case_types,
)
from schemawire.project._walker import Walker

__all__ = ["HANDLERS"]


def _properties(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    if not isinstance(value, dict):
        node.out["properties"] = value
        return
    rule = walk.policy.property_keys
    renames: dict[str, str] = {}
    children: dict[str, ArgumentMap] = {}
    projected: dict[str, Any] = {}
    for key, subschema in value.items():
        name = key if rule is None else unique_name(rule.fix(key), projected, rule.max_length)
        if name != key:
            renames[name] = key
            walk.lose(
                "PROPERTY_KEY_RENAMED",
                where.child(("properties", key), ()),
                None,
                f"property {quoted(key)} is sent as {quoted(name)}",
            )
        projected[name], child = walk.child(
            subschema, where, ("properties", key), ("properties", name)
        )
        if child is not IDENTITY and not child.is_identity:
            children[key] = child
    node.out["properties"] = projected
    if renames or children:
        node.argument_map = node.argument_map.with_properties(renames, children)
        if renames and isinstance(schema.get("required"), list):
            walk.lose("PROPERTY_KEY_RENAMED", where, "required", "required names renamed keys")


def _required(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    node.out["required"] = value  # renamed keys are mapped once all properties are known


def _items(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    if isinstance(value, list):  # draft-07 tuple form
        node.out["items"] = walk.subschemas("items", value, where)
        return
    projected, arguments = walk.child(value, where, ("items",), ("items",))
    node.out["items"] = projected
    if not arguments.is_identity:
        node.argument_map = replace(node.argument_map, items=arguments)


def _additional_properties(
    walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where
) -> None:
    policy = walk.policy
    if value is False and (policy.strict or "additionalProperties" in policy.keep):
        node.out["additionalProperties"] = False
    elif not policy.strict:
        _kept_or_dropped(walk, node, "additionalProperties", value, where)
    elif (
        policy.maps == "pairs" and where.out and not schema.get("properties") and is_object(schema)
    ):  # a tool's root must stay an object
        node.map_values = value if isinstance(value, dict) else {}
    else:
        walk.lose(
            "MAP_CLOSED",
            where,
            "additionalProperties",
            "extra keys are refused: the target takes no open objects",
        )


def _type(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    mode = walk.policy.type_lists
    if not isinstance(value, list) or mode == "keep":
        node.out["type"] = value
        return
    others = [t for t in value if t != "null"]
    if len(others) == 1:
        if mode == "nullable":
            node.out["type"], node.out["nullable"] = others[0], "null" in value
            if "null" in value:
                walk.lose("TYPE_ARRAY_TO_NULLABLE", where, "type", "written as nullable")
        else:
            node.out["type"] = value if len(value) > 1 else others[0]
        return
    branches = [{"type": t} for t in others] + ([dict(NULL)] if "null" in value else [])
    if walk.policy.upper_case_types:
        for branch in branches:
            upper_case_types(branch)
    node.out["anyOf"] = [*node.out.get("anyOf", []), *branches]
    walk.lose("TYPE_ARRAY_TO_ANYOF", where, "type", "a list of types written as anyOf")


def _enum(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    if "enum" not in walk.policy.keep:
        walk.drop(node, "enum", value, where)
        return
    kept = (
        [v for v in value if enum_value_ok(v, walk.policy.enum_values)]
        if isinstance(value, list)
        else value
    )
    if kept != value:
        walk.lose(
            "ENUM_VALUES_DROPPED", where, "enum", "values the target cannot list were dropped"
        )
        node.restated.append(f"one of {short(value)}")
    if kept:
        node.out["enum"] = kept


def _const(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    if walk.policy.const_to_enum:
        walk.lose("CONST_TO_ENUM", where, "const", "written as a one-value enum")
        _enum(walk, node, [value], schema, where)
    elif "const" in walk.policy.keep:
        node.out["const"] = value
    else:
        walk.drop(node, "const", value, where)


def _one_of(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    if not walk.policy.one_of_to_any_of:
        _kept_or_dropped(walk, node, "oneOf", value, where)
        return
    if "anyOf" in schema or not isinstance(value, list):
        walk.drop(node, "oneOf", value, where)
        return
    walk.lose("ONEOF_TO_ANYOF", where, "oneOf", "exactly one of the branches became at least one")
    node.out["anyOf"] = [
        walk.child(v, where, ("oneOf", i), ("anyOf", i))[0] for i, v in enumerate(value)
    ]


def _all_of(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    if not walk.policy.merge_all_of or not isinstance(value, list):
        _kept_or_dropped(walk, node, "allOf", value, where)
        return
    walk.lose("ALLOF_MERGED", where, "allOf", "the branches were merged into one schema")
    for index, branch in enumerate(value):
        projected, arguments = walk.schema(branch, where.child(("allOf", index), ()))
        if isinstance(projected, dict):
            walk.reshaped()
            merged, conflicts = merge_schemas(node.out, projected)
            node.out.clear()
            node.out.update(merged)
            for keyword in conflicts:
                walk.lose(
                    "ALLOF_MERGED",
                    where.child(("allOf", index), ()),
                    keyword,
                    f"{keyword} conflicts with another branch and was dropped",
                )
        if node.argument_map.is_identity:
            node.argument_map = arguments


def _format(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    formats = walk.policy.formats
    if "format" in walk.policy.keep and (formats is None or value in formats):
        node.out["format"] = value
    else:
        node.restated.append(f"format: {value}")
        walk.lose("FORMAT_DROPPED", where, "format", f"format {quoted(value)} is not supported")


def _pattern(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    ok = walk.policy.pattern_ok
    if "pattern" in walk.policy.keep and (ok is None or (isinstance(value, str) and ok(value))):
        node.out["pattern"] = value
    else:
        node.restated.append(f"pattern: {short(value)}")
        walk.lose(
            "CONSTRAINT_TO_DESCRIPTION",
            where,
            "pattern",
            "pattern is not supported here; restated in the description",
        )


def _min_items(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    limit = walk.policy.max_min_items
    if "minItems" in walk.policy.keep and (
        limit is None or (isinstance(value, int) and value <= limit)
    ):
        node.out["minItems"] = value
    else:
        walk.drop(node, "minItems", value, where)


def _kept_or_dropped(walk: Walker, node: Node, keyword: str, value: Any, where: Where) -> None:
    if keyword in walk.policy.keep:
        node.out[keyword] = walk.subschemas(keyword, value, where)
    else:
        walk.drop(node, keyword, value, where)


def _ref(walk: Walker, node: Node, value: Any, schema: dict[str, Any], where: Where) -> None:
    """A ``$ref`` that stays (the walk inlines the others before keywords are looked at)."""
    node.out["$ref"] = value
    walk.kept_reference(value)


Handler = Callable[[Walker, Node, Any, dict[str, Any], Where], None]
HANDLERS: dict[str, Handler] = {
    "$ref": _ref,
    "properties": _properties,
    "required": _required,
    "items": _items,
    "additionalProperties": _additional_properties,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "oneOf": _one_of,
    "allOf": _all_of,
    "format": _format,
    "pattern": _pattern,
    "minItems": _min_items,
}
