"""Anthropic Messages API tools, non-strict and strict (``"strict": true``).

Rules from projections.md §3 (envelope §3.1, strict tool use §3.3) and §8. Some rules rest on
API errors observed in the wild rather than on the docs (top-level combinators, property keys);
where docs and observations differ, the rule takes the side the API cannot reject.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from schemawire._pointer import join

# The checkers' shared pieces: each target module imports what its own rules use.
from schemawire.project.checkers import (
    Flaw,
    Member,
    Problem,
    SchemaTree,
    Subschema,
    describe,
    duplicate_payload_names,
    each_schema,
    keywords_outside,
    malformed_json_schema,
    member_flaws,
    regex_features,
    resolve_ref,
    run_rules,
    types_of,
    walk_schema,
    walk_stopped,
)

__all__ = ["RULE_IDS", "check_payload", "check_request"]

# The docs say 64; the API has been seen to take 128 (§3.1, §11.7): 64 cannot be refused.
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Observed (§3.1): only top-level keys are said to be checked; every level is, here.
PROPERTY_KEY = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
MAX_STRICT_TOOLS = 20
MAX_OPTIONAL = 24
MAX_UNIONS = 16
SHAPE = {
    "name": Member("string", True),
    "description": Member("string"),
    "input_schema": Member("object", True),
    "strict": Member("boolean"),
}
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
# §3.3 "Supported"; anything else (oneOf, not, prefixItems, numeric and length limits...) may
# be refused with a 400, documented or merely observed (§11.8).
STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
        "default",
        "format",
        "minItems",
        "pattern",
        "description",
        "title",
    }
)
_ROOT_COMBINATORS = ("anyOf", "oneOf", "allOf")


def check_payload(target: str, payload: Any, options: Mapping[str, Any]) -> Iterator[Problem]:
    """Every rule of the Anthropic target that ``payload`` (one tool) breaks."""
    if not isinstance(payload, dict):
        message = f"an Anthropic tool must be a JSON object, not {describe(payload)}"
        yield Problem("", "anthropic.envelope.not-object", message)
        return
    yield from run_rules(ENVELOPE_RULES, payload)
    schema = payload.get("input_schema")
    if isinstance(schema, dict):
        tree = walk_schema(schema, "/input_schema")
        yield from run_rules(SCHEMA_RULES, tree)
        if payload.get("strict") is True:
            yield from run_rules(STRICT_RULES, tree)


# --- envelope ---------------------------------------------------------------------------------


def _members(payload: dict[Any, Any], which: str) -> list[Flaw]:
    return member_flaws(payload, SHAPE, "", "an Anthropic tool")[which]


def check_name(payload: dict[Any, Any]) -> Iterator[Flaw]:
    name = payload.get("name")
    if isinstance(name, str) and not NAME.match(name):
        yield Flaw("/name", f"name {describe(name)} must match ^[a-zA-Z0-9_-]{{1,64}}$")


# Deliberately like the other targets' checkers: each restates its provider's own rules.
ENVELOPE_RULES: dict[str, Callable[[dict[Any, Any]], Iterable[Flaw]]] = {
    "anthropic.envelope.missing": lambda payload: _members(payload, "missing"),
    "anthropic.envelope.field-type": lambda payload: _members(payload, "type"),
    "anthropic.envelope.unknown-field": lambda payload: _members(payload, "unknown"),
    "anthropic.name.pattern": check_name,
}


# --- every tool -------------------------------------------------------------------------------


# Like the other targets' root rules, in Anthropic's words: each checker stands alone.
def check_root_type(tree: SchemaTree) -> Iterator[Flaw]:
    if tree.root.schema.get("type") != "object":
        yield Flaw(tree.pointer, 'input_schema must be "type": "object" at its root')


def check_root_combinators(tree: SchemaTree) -> Iterator[Flaw]:
    for keyword in _ROOT_COMBINATORS:
        if keyword in tree.root.schema:
            message = f"input_schema does not support {keyword} at the top level"
            yield Flaw(join(tree.pointer, keyword), message)


def check_property_keys(node: Subschema) -> Iterator[Flaw]:
    properties = node.schema.get("properties")
    for key in properties if isinstance(properties, dict) else ():
        if not isinstance(key, str) or not PROPERTY_KEY.match(key):
            message = f"property key {describe(key)} must match ^[a-zA-Z0-9_.-]{{1,64}}$"
            yield Flaw(join(node.pointer, "properties", str(key)), message)


SCHEMA_RULES: dict[str, Callable[[SchemaTree], Iterable[Flaw]]] = {
    "anthropic.schema.root-type": check_root_type,
    "anthropic.schema.root-combinator": check_root_combinators,
    "anthropic.schema.property-key": each_schema(check_property_keys),
    "anthropic.schema.malformed": malformed_json_schema,
    "anthropic.schema.too-large": walk_stopped,
}


# --- strict tools (§3.3) ----------------------------------------------------------------------


def check_additional_properties(node: Subschema) -> Iterator[Flaw]:
    schema = node.schema
    is_object = "object" in types_of(schema) or "properties" in schema
    if is_object and schema.get("additionalProperties") is not False:
        message = 'strict tools need "additionalProperties": false on every object'
        yield Flaw(node.pointer, message)


def check_keywords(node: Subschema) -> Iterator[Flaw]:
    return keywords_outside(node, STRICT_KEYWORDS, "is not supported by strict tools")


def check_format(node: Subschema) -> Iterator[Flaw]:
    name = node.schema.get("format")
    if isinstance(name, str) and name not in STRICT_FORMATS:
        message = f"format {describe(name)} is not one strict tools support"
        yield Flaw(join(node.pointer, "format"), message)


def check_min_items(node: Subschema) -> Iterator[Flaw]:
    count = node.schema.get("minItems")
    if isinstance(count, int) and not isinstance(count, bool) and count not in (0, 1):
        yield Flaw(join(node.pointer, "minItems"), "strict tools support minItems 0 or 1 only")


def check_pattern(node: Subschema) -> Iterator[Flaw]:
    pattern = node.schema.get("pattern")
    features = regex_features(pattern) if isinstance(pattern, str) else frozenset()
    if features:
        message = f"pattern uses a {sorted(features)[0]}, which strict tools do not support"
        yield Flaw(join(node.pointer, "pattern"), message)


def check_enum_values(node: Subschema) -> Iterator[Flaw]:
    enum = node.schema.get("enum")
    for index, value in enumerate(enum if isinstance(enum, list) else ()):
        if isinstance(value, dict | list):
            message = "strict tools take enum values that are strings, numbers, booleans or null"
            yield Flaw(join(node.pointer, "enum", index), message)


def check_all_of_ref(node: Subschema) -> Iterator[Flaw]:
    branches = node.schema.get("allOf")
    if not isinstance(branches, list):
        return
    if "$ref" in node.schema or any(isinstance(b, dict) and "$ref" in b for b in branches):
        yield Flaw(join(node.pointer, "allOf"), "strict tools do not support allOf with $ref")


def check_ref_target(tree: SchemaTree) -> Iterator[Flaw]:
    for node, ref, target in _refs(tree):
        if target is None:
            message = f"$ref {describe(ref)} names no schema here; strict tools take local refs"
            yield Flaw(join(node.pointer, "$ref"), message)


def check_recursion(tree: SchemaTree) -> Iterator[Flaw]:
    edges = [(node, target) for node, _, target in _refs(tree) if target is not None]
    inner = {t.pointer: [t2 for n, t2 in edges if _inside(n, t)] for _, t in edges}
    for node, target in edges:
        if _leads_back(node, target, inner):
            message = "this $ref leads back to itself; strict tools refuse recursive schemas"
            yield Flaw(join(node.pointer, "$ref"), message)


def _refs(tree: SchemaTree) -> Iterator[tuple[Subschema, Any, Subschema | None]]:
    for node in tree.nodes:
        if isinstance(node.schema, dict) and "$ref" in node.schema:
            ref = node.schema["$ref"]
            yield node, ref, resolve_ref(tree, ref)


def _leads_back(start: Subschema, target: Subschema, inner: dict[str, list[Subschema]]) -> bool:
    """Whether expanding ``target`` (what ``start`` references) ever meets ``start`` again."""
    seen: set[str] = set()
    todo = [target]
    while todo:
        current = todo.pop()
        if current.pointer not in seen:
            if _inside(start, current):
                return True
            seen.add(current.pointer)
            todo.extend(inner.get(current.pointer, ()))
    return False


def _inside(node: Subschema, top: Subschema) -> bool:
    return node.pointer == top.pointer or node.pointer.startswith(top.pointer + "/")


STRICT_RULES: dict[str, Callable[[SchemaTree], Iterable[Flaw]]] = {
    "anthropic.strict.additional-properties": each_schema(check_additional_properties),
    "anthropic.strict.keyword": each_schema(check_keywords),
    "anthropic.strict.format": each_schema(check_format),
    "anthropic.strict.min-items": each_schema(check_min_items),
    "anthropic.strict.pattern": each_schema(check_pattern),
    "anthropic.strict.enum-value": each_schema(check_enum_values),
    "anthropic.strict.allof-ref": each_schema(check_all_of_ref),
    "anthropic.strict.ref-unresolved": check_ref_target,
    "anthropic.strict.recursion": check_recursion,
}


# --- request budgets (§3.3 complexity limits) -------------------------------------------------


def check_request(
    target: str, payloads: list[Any], options: Mapping[str, Any]
) -> Iterator[Problem]:
    """Every request-wide rule that ``payloads``, sent as the tools of one request, break."""
    yield from run_rules(REQUEST_RULES, payloads)


def _strict_tools(payloads: list[Any]) -> Iterator[tuple[int, dict[Any, Any]]]:
    for index, payload in enumerate(payloads):
        if isinstance(payload, dict) and payload.get("strict") is True:
            yield index, payload


def check_strict_tool_count(payloads: list[Any]) -> Iterator[Flaw]:
    for count, (index, _) in enumerate(_strict_tools(payloads), start=1):
        if count > MAX_STRICT_TOOLS:
            yield Flaw(f"/{index}", f"a request takes at most {MAX_STRICT_TOOLS} strict tools")
            return


def _budget(
    payloads: list[Any], count: Callable[[dict[Any, Any]], int], limit: int, what: str
) -> Iterator[Flaw]:
    """A flaw at the strict tool whose schema takes the request's total of ``what`` past
    ``limit``; the limit holds for the sum over all strict tools."""
    total = 0
    for index, payload in _strict_tools(payloads):
        schema = payload.get("input_schema")
        nodes = walk_schema(schema, "").nodes if isinstance(schema, dict) else ()
        total += sum(count(node.schema) for node in nodes if isinstance(node.schema, dict))
        if total > limit:
            message = f"strict tools of one request may have {limit} {what} in all; {total} here"
            yield Flaw(f"/{index}/input_schema", message)
            return


def _optional_count(schema: dict[Any, Any]) -> int:
    properties, required = schema.get("properties"), schema.get("required")
    if not isinstance(properties, dict):
        return 0
    names = required if isinstance(required, list) else []
    return sum(1 for key in properties if key not in names)


def _union_count(schema: dict[Any, Any]) -> int:
    # Counted on every subschema, not only on properties: over-counting cannot be refused.
    declared = schema.get("type")
    return int(
        isinstance(schema.get("anyOf"), list) or (isinstance(declared, list) and len(declared) > 1)
    )


REQUEST_RULES: dict[str, Callable[[list[Any]], Iterable[Flaw]]] = {
    "anthropic.request.too-many-strict-tools": check_strict_tool_count,
    "anthropic.request.too-many-optional-parameters": lambda payloads: _budget(
        payloads, _optional_count, MAX_OPTIONAL, "optional parameters"
    ),
    "anthropic.request.too-many-union-parameters": lambda payloads: _budget(
        payloads, _union_count, MAX_UNIONS, "parameters using unions"
    ),
    "anthropic.request.duplicate-name": duplicate_payload_names,
}

RULE_IDS = (
    "anthropic.envelope.not-object",
    *ENVELOPE_RULES,
    *SCHEMA_RULES,
    *STRICT_RULES,
    *REQUEST_RULES,
)
