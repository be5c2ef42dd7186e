"""Merging subschemas: ``allOf`` branches, a ``$ref`` and its siblings, a root's alternatives.

`merge_schemas` computes one subschema that means what both mean together, where it can say
that exactly (bounds take the stricter value, ``enum`` the common values, ``required`` the union);
a keyword whose two values cannot be combined is reported as a conflict and keeps the first.
`merge_alternatives` turns the ``anyOf``/``oneOf`` branches of a tool's root into one object that
takes the properties of every branch, which is what providers that refuse root combinators
need; which alternative holds is then for the gate to enforce.
"""

from __future__ import annotations

from typing import Any

__all__ = ["merge_alternatives", "merge_schemas"]

_LOWER_BOUNDS = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_UPPER_BOUNDS = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)
_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)


def merge_schemas(
    first: dict[str, Any], second: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """One subschema meaning ``first`` and ``second`` together, and the keywords that conflict.

    Annotations of ``second`` win (a ``$ref``'s own description says more than the target's).
    A ``$ref`` does not share a subschema with other constraints (targets that merge refuse
    ``$ref`` siblings): the side without it is kept, and ``$ref`` reported as a conflict.
    """
    if ("$ref" in first) != ("$ref" in second) and _constrains(first) and _constrains(second):
        kept = second if "$ref" in first else first
        return {**kept, **_annotations(first), **_annotations(second)}, ["$ref"]
    merged = dict(first)
    conflicts: list[str] = []
    for keyword, value in second.items():
        if keyword not in merged or keyword in _ANNOTATIONS:
            merged[keyword] = value
            continue
        combined = _combine(keyword, merged[keyword], value)
        if combined is _CONFLICT:
            conflicts.append(keyword)
        else:
            merged[keyword] = combined
    return merged, conflicts


def merge_alternatives(branches: list[Any]) -> tuple[dict[str, Any], list[str]]:
    """One object taking the properties of every branch; a property required by all stays
    required. Returns the object and the branch keywords it could not carry."""
    properties: dict[str, Any] = {}
    required: set[str] | None = None
    dropped: list[str] = []
    for branch in branches:
        if not isinstance(branch, dict):
            continue
        for name, schema in (branch.get("properties") or {}).items():
            properties[name] = _either(properties[name], schema) if name in properties else schema
        names = set(branch.get("required") or ())
        required = names if required is None else required & names
        dropped += [
            k
            for k in branch
            if k not in ("type", "properties", "required", "additionalProperties", "description")
        ]
    merged: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        merged["required"] = [name for name in properties if name in required]
    return merged, sorted(set(dropped))


def _constrains(schema: dict[str, Any]) -> bool:
    return any(keyword not in _ANNOTATIONS for keyword in schema)


def _annotations(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k in _ANNOTATIONS}


class _Conflict:
    """Marks two values of one keyword that cannot be combined."""


_CONFLICT = _Conflict()


def _combine(keyword: str, first: Any, second: Any) -> Any:
    if first == second and type(first) is type(second):
        return first
    if _numbers(first, second) and keyword in _LOWER_BOUNDS | _UPPER_BOUNDS:
        return max(first, second) if keyword in _LOWER_BOUNDS else min(first, second)
    combine = _COMBINERS.get(keyword)
    return combine(first, second) if combine is not None else _CONFLICT


def _union_required(first: Any, second: Any) -> Any:
    if not (isinstance(first, list) and isinstance(second, list)):
        return _CONFLICT
    return [*first, *(name for name in second if name not in first)]


def _common_enum(first: Any, second: Any) -> Any:
    if not (isinstance(first, list) and isinstance(second, list)):
        return _CONFLICT
    return [value for value in first if value in second] or _CONFLICT


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _common_type(first: Any, second: Any) -> Any:
    one = {first} if isinstance(first, str) else set(first or ())
    two = {second} if isinstance(second, str) else set(second or ())
    if "number" in one and "integer" in two:
        one.add("integer")
    if "number" in two and "integer" in one:
        two.add("integer")
    common = sorted(one & two)
    if not common:
        return _CONFLICT
    return common[0] if len(common) == 1 else common


def _merge_properties(first: Any, second: Any) -> Any:
    if not (isinstance(first, dict) and isinstance(second, dict)):
        return _CONFLICT
    merged = dict(first)
    for name, schema in second.items():
        if name not in merged:
            merged[name] = schema
        elif isinstance(merged[name], dict) and isinstance(schema, dict):
            combined, conflicts = merge_schemas(merged[name], schema)
            if conflicts:
                return _CONFLICT
            merged[name] = combined
        elif merged[name] != schema:
            return _CONFLICT
    return merged


_COMBINERS = {
    "required": _union_required,
    "enum": _common_enum,
    "type": _common_type,
    "properties": _merge_properties,
}


def _either(first: Any, second: Any) -> Any:
    if first == second:
        return first
    branches = first["anyOf"] if isinstance(first, dict) and set(first) == {"anyOf"} else [first]
    return {"anyOf": [*branches, second]}
