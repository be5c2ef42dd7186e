"""JSON Schema's type names, and the names other languages give the same types.

Public function-calling collections (the Berkeley Function Calling Leaderboard, xLAM) write
types as Python or Java names (``dict``, ``float``, ``HashMap``). One table, here in the schema
layer, serves both the linter (SW106 suggests the JSON Schema name) and the projections' importers
(which read such names as the JSON Schema they mean).
"""

from __future__ import annotations

__all__ = [
    "ANY_TYPES",
    "ARRAY_TYPES",
    "JSON_TYPES",
    "OBJECT_TYPES",
    "SCALAR_TYPES",
    "json_type_for",
]

JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
SCALAR_TYPES = {
    **{name: name for name in JSON_TYPES},
    "str": "string",
    "text": "string",
    "char": "string",
    "character": "string",
    "date": "string",
    "datetime": "string",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "int32": "integer",
    "int64": "integer",
    "float": "number",
    "double": "number",
    "decimal": "number",
    "numeric": "number",
    "bool": "boolean",
    "none": "null",
    "nonetype": "null",
    "nil": "null",
}
ARRAY_TYPES = frozenset(
    {
        "list",
        "tuple",
        "set",
        "frozenset",
        "sequence",
        "iterable",
        "array",
        "arraylist",
        "linkedlist",
        "vector",
    }
)
OBJECT_TYPES = frozenset(
    {"dict", "map", "mapping", "hashmap", "hash", "struct", "record", "dictionary", "object"}
)
ANY_TYPES = frozenset({"any", "mixed", "unknown"})


def json_type_for(name: str) -> str | None:
    """The JSON Schema type a lower-case type ``name`` means (``"hashmap"``: ``"object"``);
    None for a name that means no one type."""
    if name in SCALAR_TYPES:
        return SCALAR_TYPES[name]
    if name in ARRAY_TYPES:
        return "array"
    return "object" if name in OBJECT_TYPES else None
