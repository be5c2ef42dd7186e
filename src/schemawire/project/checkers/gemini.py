"""Google Gemini: one FunctionDeclaration, in REST camelCase.

A declaration carries its parameters either as JSON Schema (``parametersJsonSchema``, with an
optional ``responseJsonSchema``) or as the OpenAPI-subset ``Schema`` (``parameters``, with an
optional ``response``). Rules from projections.md §4 (§4.2 names, §4.3 the OpenAPI subset, §4.4
the JSON Schema subset) and §8. Where sources conflict, the rule takes the side Gemini cannot
reject.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from schemawire._json import quoted
from schemawire._pointer import join

# The checkers' shared pieces: each target module imports what its own rules use.
from schemawire.project.checkers import (
    JSON_TYPES,
    Flaw,
    Member,
    Problem,
    SchemaTree,
    Subschema,
    describe,
    duplicate_payload_names,
    each_schema,
    keywords_outside,
    malformed_keywords,
    member_flaws,
    resolve_ref,
    run_rules,
    walk_schema,
    walk_stopped,
)

__all__ = ["RULE_IDS", "check_payload", "check_request"]

# REST docs: 64, no colons; the newest SDK docstring allows 128 and colons (§4.2, §11.10).
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
OPENAPI_PROPERTY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# The brief and the newest docs say 128; older Vertex docs said 64 (§4.2).
MAX_DECLARATIONS = 128
SHAPE = {
    "name": Member("string", True),
    "description": Member("string"),
    "parameters": Member("object"),
    "parametersJsonSchema": Member("object"),
    "response": Member("object"),
    "responseJsonSchema": Member("object"),
}
# §4.4: documented for responseJsonSchema and assumed the same for parameters (§11.9); whether
# Gemini ignores or refuses other keywords is unconfirmed, so they count as refused.
JSON_SCHEMA_KEYWORDS = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    }
)
# §4.3: the fields of the current Schema class; additionalProperties has a rule of its own.
OPENAPI_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "anyOf",
        "default",
        "example",
        "propertyOrdering",
        "$defs",
        "$ref",
        "additionalProperties",
    }
)
OPENAPI_TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
_FORMS = {"parameters": "response", "parametersJsonSchema": "responseJsonSchema"}


def check_payload(target: str, payload: Any, options: Mapping[str, Any]) -> Iterator[Problem]:
    """Every rule of the Gemini target that ``payload`` (one FunctionDeclaration) breaks."""
    if not isinstance(payload, dict):
        message = f"a FunctionDeclaration must be a JSON object, not {describe(payload)}"
        yield Problem("", "gemini.envelope.not-object", message)
        return
    yield from run_rules(ENVELOPE_RULES, payload)
    for key, rules in _SCHEMA_TABLES.items():
        schema = payload.get(key)
        if isinstance(schema, dict):
            yield from run_rules(rules, walk_schema(schema, join("", key)))


# --- envelope ---------------------------------------------------------------------------------


def _members(payload: dict[Any, Any], which: str) -> list[Flaw]:
    return member_flaws(payload, SHAPE, "", "a FunctionDeclaration")[which]


def check_parameters_form(payload: dict[Any, Any]) -> Iterator[Flaw]:
    given = [key for key in _FORMS if key in payload]
    if len(given) != 1:
        message = "a FunctionDeclaration needs exactly one of parameters and parametersJsonSchema"
        yield Flaw(join("", given[1]) if given else "", message)


def check_response_form(payload: dict[Any, Any]) -> Iterator[Flaw]:
    for parameters, response in _FORMS.items():
        other = next(key for key in _FORMS if key != parameters)
        if response in payload and other in payload:
            message = f"{response} goes with {parameters}, not with {other}"
            yield Flaw(join("", response), message)


def check_name(payload: dict[Any, Any]) -> Iterator[Flaw]:
    name = payload.get("name")
    if isinstance(name, str) and not NAME.match(name):
        message = f"name {describe(name)} must match ^[A-Za-z_][A-Za-z0-9_.-]{{0,63}}$"
        yield Flaw("/name", message)


# Deliberately like the other targets' checkers: each restates its provider's own rules.
ENVELOPE_RULES: dict[str, Callable[[dict[Any, Any]], Iterable[Flaw]]] = {
    "gemini.envelope.missing": lambda payload: _members(payload, "missing"),
    "gemini.envelope.field-type": lambda payload: _members(payload, "type"),
    "gemini.envelope.unknown-field": lambda payload: _members(payload, "unknown"),
    "gemini.envelope.parameters-form": check_parameters_form,
    "gemini.envelope.response-form": check_response_form,
    "gemini.name.pattern": check_name,
}


# --- parametersJsonSchema and responseJsonSchema (§4.4) ---------------------------------------


# Like the other targets' root rules, in Gemini's words: each checker stands alone.
def check_json_root_type(tree: SchemaTree) -> Iterator[Flaw]:
    if tree.root.schema.get("type") != "object":
        yield Flaw(tree.pointer, 'parametersJsonSchema must be "type": "object" at its root')


def check_json_keywords(node: Subschema) -> Iterator[Flaw]:
    return keywords_outside(node, JSON_SCHEMA_KEYWORDS, "is not in Gemini's JSON Schema subset")


def check_ref_siblings(node: Subschema) -> Iterator[Flaw]:
    others = [str(k) for k in node.schema if not str(k).startswith("$")]
    if "$ref" in node.schema and others:
        message = f"$ref takes no sibling keywords except $-keywords ({quoted(others[0])})"
        yield Flaw(node.pointer, message)


def check_json_enum(node: Subschema) -> Iterator[Flaw]:
    enum = node.schema.get("enum")
    for index, value in enumerate(enum if isinstance(enum, list) else ()):
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            message = f"enum value {describe(value)} is neither a string nor a number"
            yield Flaw(join(node.pointer, "enum", index), message)


def check_json_malformed(tree: SchemaTree) -> Iterator[Flaw]:
    for node in tree.nodes:
        yield from malformed_keywords(node, JSON_TYPES)


JSON_SCHEMA_RULES: dict[str, Callable[[SchemaTree], Iterable[Flaw]]] = {
    "gemini.json-schema.keyword": each_schema(check_json_keywords),
    "gemini.json-schema.ref-siblings": each_schema(check_ref_siblings),
    "gemini.json-schema.enum-value": each_schema(check_json_enum),
    "gemini.schema.malformed": check_json_malformed,
    "gemini.schema.too-large": walk_stopped,
}


# --- parameters and response: the OpenAPI subset (§4.3) ---------------------------------------


def check_openapi_root_type(tree: SchemaTree) -> Iterator[Flaw]:
    declared = tree.root.schema.get("type")
    if not isinstance(declared, str) or declared.upper() != "OBJECT":
        yield Flaw(tree.pointer, 'parameters must be "type": "OBJECT" at its root')


def check_fields(node: Subschema) -> Iterator[Flaw]:
    return keywords_outside(node, OPENAPI_FIELDS, "is not a field of Gemini's Schema")


def check_type(node: Subschema) -> Iterator[Flaw]:
    declared = node.schema.get("type")
    known = isinstance(declared, str) and declared in OPENAPI_TYPES
    if "type" in node.schema and not isinstance(declared, list) and not known:
        message = f"type {describe(declared)} must be one of {', '.join(sorted(OPENAPI_TYPES))}"
        yield Flaw(join(node.pointer, "type"), message)


def check_type_array(node: Subschema) -> Iterator[Flaw]:
    if isinstance(node.schema.get("type"), list):
        message = 'Schema takes one type; write "nullable": true for [T, "null"]'
        yield Flaw(join(node.pointer, "type"), message)


def check_openapi_enum(node: Subschema) -> Iterator[Flaw]:
    enum = node.schema.get("enum")
    for index, value in enumerate(enum if isinstance(enum, list) else ()):
        if not isinstance(value, str):
            message = f"enum value {describe(value)} must be a string in Gemini's Schema"
            yield Flaw(join(node.pointer, "enum", index), message)


def check_additional_properties(node: Subschema) -> Iterator[Flaw]:
    # Vertex takes it; the Gemini Developer API answers "Unknown name" (§4.3).
    if "additionalProperties" in node.schema:
        message = "additionalProperties is refused by the Gemini Developer API"
        yield Flaw(join(node.pointer, "additionalProperties"), message)


def check_property_names(node: Subschema) -> Iterator[Flaw]:
    properties = node.schema.get("properties")
    for key in properties if isinstance(properties, dict) else ():
        if not isinstance(key, str) or not OPENAPI_PROPERTY.match(key):
            message = f"parameter name {describe(key)} must match ^[A-Za-z_][A-Za-z0-9_]{{0,63}}$"
            yield Flaw(join(node.pointer, "properties", str(key)), message)


def check_defs_location(tree: SchemaTree) -> Iterator[Flaw]:
    for node in tree.nodes[1:]:
        if isinstance(node.schema, dict) and "$defs" in node.schema:
            yield Flaw(join(node.pointer, "$defs"), "$defs is only allowed at the schema root")


def check_ref_target(tree: SchemaTree) -> Iterator[Flaw]:
    for node in tree.nodes:
        if not isinstance(node.schema, dict) or "$ref" not in node.schema:
            continue
        target = resolve_ref(tree, node.schema["$ref"])
        if target is None or target.keyword != "$defs" or target.depth != 1:
            message = f"$ref {describe(node.schema['$ref'])} must name a definition in root $defs"
            yield Flaw(join(node.pointer, "$ref"), message)


def check_openapi_malformed(tree: SchemaTree) -> Iterator[Flaw]:
    for node in tree.nodes:
        if isinstance(node.schema, bool):
            yield Flaw(node.pointer, "a Schema must be an object; true and false are not Schemas")
        yield from malformed_keywords(node, None)


OPENAPI_RULES: dict[str, Callable[[SchemaTree], Iterable[Flaw]]] = {
    "gemini.openapi.field": each_schema(check_fields),
    "gemini.openapi.type": each_schema(check_type),
    "gemini.openapi.type-array": each_schema(check_type_array),
    "gemini.openapi.enum-value": each_schema(check_openapi_enum),
    "gemini.openapi.additional-properties": each_schema(check_additional_properties),
    "gemini.openapi.property-name": each_schema(check_property_names),
    "gemini.openapi.defs-location": check_defs_location,
    "gemini.openapi.ref-target": check_ref_target,
    "gemini.schema.malformed": check_openapi_malformed,
    "gemini.schema.too-large": walk_stopped,
}

# Parameters must describe an object; a response may be any schema.
_SCHEMA_TABLES: dict[str, Mapping[str, Callable[[SchemaTree], Iterable[Flaw]]]] = {
    "parametersJsonSchema": {
        "gemini.json-schema.root-type": check_json_root_type,
        **JSON_SCHEMA_RULES,
    },
    "responseJsonSchema": JSON_SCHEMA_RULES,
    "parameters": {"gemini.openapi.root-type": check_openapi_root_type, **OPENAPI_RULES},
    "response": OPENAPI_RULES,
}


# --- request ----------------------------------------------------------------------------------


def check_request(
    target: str, payloads: list[Any], options: Mapping[str, Any]
) -> Iterator[Problem]:
    """Every request-wide rule that ``payloads``, the declarations of one request, break."""
    yield from run_rules(REQUEST_RULES, payloads)


def check_declaration_count(payloads: list[Any]) -> Iterator[Flaw]:
    if len(payloads) > MAX_DECLARATIONS:
        message = f"a request takes at most {MAX_DECLARATIONS} function declarations"
        yield Flaw(f"/{MAX_DECLARATIONS}", message)


REQUEST_RULES: dict[str, Callable[[list[Any]], Iterable[Flaw]]] = {
    "gemini.request.too-many-functions": check_declaration_count,
    "gemini.request.duplicate-name": duplicate_payload_names,
}

RULE_IDS = tuple(
    dict.fromkeys(
        (
            "gemini.envelope.not-object",
            *ENVELOPE_RULES,
            *_SCHEMA_TABLES["parametersJsonSchema"],
            *_SCHEMA_TABLES["parameters"],
            *REQUEST_RULES,
        )
    )
)
