"""What strict and typed targets make of a subschema once it is walked: objects closed, optional
properties made required and nullable, maps sent as key/value pairs, and every value typed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from schemawire._pointer import join
from schemawire.project._policy import (
    ANNOTATIONS_KEPT_ON_PAIRS,
    ANY_SCALAR,
    NULL,
    Node,
    Where,
    is_object,
)
from schemawire.project._walker import Walker

__all__ = ["TYPING_KEYWORDS", "require_type", "strict_object"]

# Keywords that say what an object does with keys it does not name.
_OTHER_KEYS = frozenset({"additionalProperties", "unevaluatedProperties", "patternProperties"})
# Keywords that say what type a value has, directly or through other schemas.
TYPING_KEYWORDS = frozenset({"type", "anyOf", "enum", "const", "$ref", "allOf", "oneOf"})


def strict_object(walk: Walker, node: Node, schema: dict[str, Any], where: Where) -> None:
    """A strict target's object: closed, or sent as key/value pairs (a map)."""
    an_object = is_object(node.out)
    if node.map_values is None and an_object:
        _open_by_default(walk, node, schema, where)
    if node.map_values is not None:
        _map_to_pairs(walk, node, schema, where)
    elif an_object:
        _close_object(walk, node, where)


def _open_by_default(walk: Walker, node: Node, schema: dict[str, Any], where: Where) -> None:
    """An object that says nothing of other keys takes any: JSON Schema's default, which a
    strict target reverses. A free-form object (no properties) below the root is sent as
    pairs like any map; otherwise the closing is reported."""
    if not _OTHER_KEYS.isdisjoint(schema):
        return  # their handlers decided
    if "properties" in schema:
        detail = "keys other than the named ones are refused: the target takes no open objects"
    elif walk.policy.maps == "pairs" and where.out:
        node.map_values = {}
        return
    else:
        detail = "a free-form object can only be empty: the target takes no open objects"
    walk.lose("MAP_CLOSED", where, None, detail)


def _map_to_pairs(walk: Walker, node: Node, schema: dict[str, Any], where: Where) -> None:
    walk.reshaped()
    kept = {k: v for k, v in node.out.items() if k in ANNOTATIONS_KEPT_ON_PAIRS}
    for keyword in node.out:  # in the schema's order: the loss report is the same every run
        if keyword not in kept and keyword != "additionalProperties":
            walk.lose("MAP_TO_PAIRS", where, keyword, "the object is sent as a list of pairs")
    value_where = where.child(("additionalProperties",), ("items", "properties", "value"))
    values, arguments = walk.schema(node.map_values, value_where)
    pair = {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": values},
        "required": ["key", "value"],
        "additionalProperties": False,
    }
    node.out.clear()
    node.out.update({"type": "array", "items": pair, **kept})
    node.restated.append("send the entries as a list of {key, value} objects")
    node.argument_map = replace(
        node.argument_map, pairs=True, values=None if arguments.is_identity else arguments
    )
    walk.lose(
        "MAP_TO_PAIRS",
        where,
        "additionalProperties",
        "a map is sent as a list of {key, value} objects, turned back before the gate",
    )


def _close_object(walk: Walker, node: Node, where: Where) -> None:
    out = node.out
    properties: dict[str, Any] = out.setdefault("properties", {})
    out["additionalProperties"] = False
    required = out.get("required", [])
    declared = [name for name in required if name in properties]
    listed = set(declared)
    optional = [name for name in properties if name not in listed]
    if len(declared) < len(required):
        walk.lose(
            "KEYWORD_DROPPED",
            where,
            "required",
            "required names a property that is "
            "not defined; strict objects take defined properties only",
        )
    out["required"] = declared + optional
    if not optional:
        return
    renames = node.argument_map.renames
    canonical = {name: renames.get(name, name) for name in optional}
    walk.lose(
        "OPTIONAL_TO_NULLABLE",
        where,
        "required",
        f"optional {', '.join(canonical.values())} made required; null stands for absent",
    )
    for name in optional:
        child = where.child(("properties", canonical[name]), ("properties", name))
        properties[name] = _nullable(walk, properties[name], child)
    node.argument_map = node.argument_map.with_optional_nulls(canonical.values())


def _nullable(walk: Walker, schema: Any, where: Where) -> Any:
    """``schema`` that also takes ``null`` (an optional property made required)."""
    if not isinstance(schema, dict):
        return schema
    nullable = dict(schema)
    declared = nullable.get("type")
    changed: list[str] = []
    if isinstance(nullable.get("enum"), list):
        if None not in nullable["enum"]:
            nullable["enum"] = [*nullable["enum"], None]
            changed.append("enum")
    elif "const" in nullable or (declared is None and "anyOf" not in nullable):
        return _null_or(walk, schema, where)
    if isinstance(declared, str) and declared != "null":
        nullable["type"] = [declared, "null"]
        changed.append("type")
    elif isinstance(declared, list) and "null" not in declared:
        nullable["type"] = [*declared, "null"]
        changed.append("type")
    elif declared is None and NULL not in nullable.get("anyOf", [NULL]):
        nullable["anyOf"] = [*nullable["anyOf"], dict(NULL)]
        changed.append("anyOf")
    for keyword in changed:
        walk.lose("OPTIONAL_TO_NULLABLE", where, keyword, "also takes null, for absent")
    return nullable


def _null_or(walk: Walker, schema: dict[str, Any], where: Where) -> dict[str, Any]:
    """``{"anyOf": [schema, null]}``, with the origins below ``schema`` moved along."""
    _move_origins(walk, where.out, join(where.out, "anyOf", 0))
    walk.lose("OPTIONAL_TO_NULLABLE", where, None, "wrapped to also take null, for absent")
    return {"anyOf": [schema, dict(NULL)]}


def _move_origins(walk: Walker, old: str, new: str) -> None:
    moved = {
        key: value for key, value in walk.origins.items() if key == old or key.startswith(old + "/")
    }
    for key, value in moved.items():
        del walk.origins[key]
        walk.origins[new + key[len(old) :]] = value


def require_type(walk: Walker, out: dict[str, Any], where: Where) -> None:
    """A typed target's subschema: one that says no type takes any scalar (and so do the
    items of an array that says none)."""
    if not TYPING_KEYWORDS.isdisjoint(out):
        if out.get("type") == "array" and "items" not in out:
            out["items"] = {"anyOf": list(ANY_SCALAR)}
            walk.lose("TYPE_NARROWED", where, "items", "untyped items narrowed to scalars")
        return
    out["anyOf"] = list(ANY_SCALAR)
    walk.lose("TYPE_NARROWED", where, None, "any value narrowed to any scalar")
