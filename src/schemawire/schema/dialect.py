"""The JSON Schema dialects schemawire accepts: draft 2020-12 (the default) and draft-07.

A `Dialect` knows its metaschema URI, its keywords, and which keywords hold subschemas (one, a map
of them, or a list of them), which is what a walker needs to visit every subschema and nothing that
is data (an ``enum`` or ``default`` value that happens to contain ``"$ref"`` is not a reference).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonschema_rs

__all__ = [
    "DEFAULT_DIALECT",
    "DIALECTS",
    "DRAFT_07",
    "DRAFT_2020_12",
    "KNOWN_FORMATS",
    "SUBSCHEMA_LISTS",
    "SUBSCHEMA_MAPS",
    "SUBSCHEMA_SINGLE",
    "Dialect",
    "dialect_named",
]

_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "readOnly", "writeOnly", "$comment"}
)
_VALIDATION = frozenset(
    {
        "type",
        "const",
        "enum",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxProperties",
        "minProperties",
        "required",
        "format",
        "contentEncoding",
        "contentMediaType",
    }
)
_SHARED_SINGLE = frozenset(
    {"additionalProperties", "propertyNames", "contains", "not", "if", "then", "else"}
)
_SHARED_MAP = frozenset({"properties", "patternProperties", "definitions", "$defs"})
_SHARED_LIST = frozenset({"allOf", "anyOf", "oneOf"})

# Formats defined by draft 2020-12; draft-07 defines all but "duration" and "uuid", which
# validators (jsonschema-rs, ajv-formats) accept there too.
KNOWN_FORMATS = frozenset(
    {
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    }
)


@dataclass(frozen=True, slots=True)
class Dialect:
    """One JSON Schema dialect.

    Attributes:
        name: ``"2020-12"`` or ``"draft-07"``.
        uri: the canonical ``$schema`` value.
        draft: the jsonschema-rs draft constant.
        keywords: every keyword the dialect defines.
        single: keywords whose value is one subschema.
        mapping: keywords whose value maps names to subschemas.
        listing: keywords whose value is a list of subschemas.
    """

    name: str
    uri: str
    draft: int
    keywords: frozenset[str]
    single: frozenset[str]
    mapping: frozenset[str]
    listing: frozenset[str]

    def subschema_keywords(self) -> frozenset[str]:
        """Keywords that hold subschemas in any form."""
        return self.single | self.mapping | self.listing

    def holds_subschemas(self, keyword: str, value: Any) -> bool:
        """Whether ``keyword: value`` holds subschemas (draft-07 ``items`` may be a list)."""
        return (
            (keyword in self.single and isinstance(value, dict | bool))
            or (keyword in self.mapping and isinstance(value, dict))
            or (keyword in self.listing and isinstance(value, list))
        )


_2020_SINGLE = _SHARED_SINGLE | {
    "items",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
}
_2020_MAP = _SHARED_MAP | {"dependentSchemas", "dependencies"}
_2020_LIST = _SHARED_LIST | {"prefixItems"}

DRAFT_2020_12 = Dialect(
    name="2020-12",
    uri="https://json-schema.org/draft/2020-12/schema",
    draft=jsonschema_rs.Draft202012,
    keywords=_ANNOTATIONS
    | _VALIDATION
    | _2020_SINGLE
    | _2020_MAP
    | _2020_LIST
    | {
        "$schema",
        "$id",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "deprecated",
        "maxContains",
        "minContains",
        "dependentRequired",
    },
    single=_2020_SINGLE,
    mapping=_2020_MAP,
    listing=_2020_LIST,
)

# draft-07 "items" is a subschema or a list of them; "dependencies" maps to subschemas or arrays.
_07_SINGLE = _SHARED_SINGLE | {"items", "additionalItems"}
_07_MAP = _SHARED_MAP | {"dependencies"}
_07_LIST = _SHARED_LIST | {"items"}

DRAFT_07 = Dialect(
    name="draft-07",
    uri="http://json-schema.org/draft-07/schema#",
    draft=jsonschema_rs.Draft7,
    keywords=_ANNOTATIONS
    | _VALIDATION
    | _07_SINGLE
    | _07_MAP
    | _07_LIST
    | {"$schema", "$id", "$ref"},
    single=_07_SINGLE,
    mapping=_07_MAP,
    listing=_07_LIST,
)

# The keywords that hold subschemas in either dialect, for code that walks or rewrites schemas
# of both. A value may be of another form in one dialect (draft-07 ``items`` is one subschema or
# a list): check its type before taking its subschemas.
SUBSCHEMA_SINGLE = DRAFT_2020_12.single | DRAFT_07.single
"""Keywords whose value is one subschema."""
SUBSCHEMA_MAPS = (DRAFT_2020_12.mapping | DRAFT_07.mapping) - {"dependencies"}
"""Keywords whose value maps names to subschemas (not ``dependencies``: its values may be lists
of property names)."""
SUBSCHEMA_LISTS = DRAFT_2020_12.listing | DRAFT_07.listing
"""Keywords whose value is a list of subschemas."""

DEFAULT_DIALECT = DRAFT_2020_12
DIALECTS = (DRAFT_2020_12, DRAFT_07)

_BY_URI = {
    "https://json-schema.org/draft/2020-12/schema": DRAFT_2020_12,
    "http://json-schema.org/draft-07/schema": DRAFT_07,
    "https://json-schema.org/draft-07/schema": DRAFT_07,
}


def dialect_named(uri: str | None) -> Dialect | None:
    """The dialect a ``$schema`` value names (None means the default), or None if unsupported."""
    if uri is None:
        return DEFAULT_DIALECT
    return _BY_URI.get(uri.removesuffix("#"))
