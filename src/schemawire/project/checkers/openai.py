"""OpenAI: Chat Completions and Responses function tools, and the two structured-output formats.

Rules from projections.md §1 (Chat, strict mode §1.3/§1.4), §2 (Responses, ``response_format``
and ``text.format``) and §8 (limits). Strict rules apply when ``strict`` is true, and always to
the two formats. Where sources conflict, the rule takes the side OpenAI cannot reject.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from schemawire._json import quoted
from schemawire._pointer import join
from schemawire.project.checkers import (
    Flaw,
    Member,
    Problem,
    SchemaTree,
    Subschema,
    describe,
    duplicate_names,
    each_schema,
    keywords_outside,
    malformed_json_schema,
    member_flaws,
    opens_level,
    regex_features,
    resolve_ref,
    run_rules,
    types_of,
    walk_schema,
    walk_stopped,
)

__all__ = ["RULE_IDS", "check_payload", "check_request"]

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# §1.2 / §11.5: enforced in early 2025, reportedly lifted since; a longer one may be refused.
MAX_DESCRIPTION = 1024
MAX_TOOLS = 128
MAX_PROPERTIES = 5000
MAX_LEVELS = 10
MAX_CHARS = 120_000
MAX_ENUM_VALUES = 1000
LONG_ENUM = 250
MAX_LONG_ENUM_CHARS = 15_000
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
# §1.3 rules 4-7. Everything else is refused, including keywords whose acceptance is disputed
# or undocumented (title, default, examples, minLength, maxLength, $schema: §11.1-3).
STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "$ref",
        "$defs",
        "description",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
_SHAPE_KEYWORDS = ("type", "anyOf", "enum", "const", "$ref")
_ROOT_COMBINATORS = ("anyOf", "oneOf", "allOf")


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where one OpenAI envelope keeps its name, description, schema and strict flag."""

    what: str
    kind: str
    outer: Mapping[str, Member]
    body_key: str | None
    body: Mapping[str, Member]
    schema_key: str
    always_strict: bool


def _members(schema_key: str, **extra: Member) -> dict[str, Member]:
    return {
        "name": Member("string", True),
        "description": Member("string"),
        schema_key: Member("object", True),
        "strict": Member("boolean", True),
        **extra,
    }


_TYPE = Member("string", True)
_LAYOUTS = {
    "openai.chat": _Layout(
        "a Chat Completions tool",
        "function",
        {"type": _TYPE, "function": Member("object", True)},
        "function",
        _members("parameters"),
        "parameters",
        always_strict=False,
    ),
    # One entry per format, alike by design: the table is what differs between them.
    "openai.responses": _Layout(
        "a Responses tool",
        "function",
        _members("parameters", type=_TYPE),
        None,
        {},
        "parameters",
        always_strict=False,
    ),
    "openai.response_format": _Layout(
        "a response_format",
        "json_schema",
        {"type": _TYPE, "json_schema": Member("object", True)},
        "json_schema",
        _members("schema"),
        "schema",
        always_strict=True,
    ),
    "openai.text_format": _Layout(
        "a text.format",
        "json_schema",
        _members("schema", type=_TYPE),
        None,
        {},
        "schema",
        always_strict=True,
    ),
}


@dataclass(frozen=True, slots=True)
class _Envelope:
    """One payload as its layout reads it: the outer object and the member holding the schema."""

    layout: _Layout
    outer: dict[Any, Any]
    body: dict[Any, Any] | None
    body_pointer: str

    @property
    def strict(self) -> bool:
        return self.layout.always_strict or (
            self.body is not None and self.body.get("strict") is True
        )


def check_payload(target: str, payload: Any, options: Mapping[str, Any]) -> Iterator[Problem]:
    """Every rule of ``target`` (an ``openai.*`` target) that ``payload`` breaks."""
    layout = _LAYOUTS[target]
    if not isinstance(payload, dict):
        message = f"{layout.what} must be a JSON object, not {describe(payload)}"
        yield Problem("", "openai.envelope.not-object", message)
        return
    envelope = _read(layout, payload)
    yield from run_rules(ENVELOPE_RULES, envelope)
    schema = envelope.body.get(layout.schema_key) if envelope.body is not None else None
    if isinstance(schema, dict):
        tree = walk_schema(schema, join(envelope.body_pointer, layout.schema_key))
        yield from run_rules(SCHEMA_RULES, tree)
        if envelope.strict:
            yield from run_rules(STRICT_RULES, tree)


def _read(layout: _Layout, payload: dict[Any, Any]) -> _Envelope:
    if layout.body_key is None:
        return _Envelope(layout, payload, payload, "")
    body = payload.get(layout.body_key)
    return _Envelope(
        layout, payload, body if isinstance(body, dict) else None, join("", layout.body_key)
    )


# --- envelope rules ---------------------------------------------------------------------------


def _member_flaws(envelope: _Envelope, which: str) -> Iterator[Flaw]:
    layout = envelope.layout
    yield from member_flaws(envelope.outer, layout.outer, "", layout.what)[which]
    if layout.body_key is not None and envelope.body is not None:
        what = f"the {quoted(layout.body_key)} object of {layout.what}"
        yield from member_flaws(envelope.body, layout.body, envelope.body_pointer, what)[which]


def _body_member(envelope: _Envelope, name: str) -> Any:
    return envelope.body.get(name) if envelope.body is not None else None


def check_type(envelope: _Envelope) -> Iterator[Flaw]:
    declared, kind = envelope.outer.get("type"), envelope.layout.kind
    if isinstance(declared, str) and declared != kind:
        yield Flaw("/type", f'"type" is {describe(declared)}; {envelope.layout.what} says "{kind}"')


def check_format_strict(envelope: _Envelope) -> Iterator[Flaw]:
    if envelope.layout.always_strict and _body_member(envelope, "strict") is False:
        message = f"{envelope.layout.what} is projected for strict mode; strict must be true"
        yield Flaw(join(envelope.body_pointer, "strict"), message)


def check_name(envelope: _Envelope) -> Iterator[Flaw]:
    name = _body_member(envelope, "name")
    if isinstance(name, str) and not NAME.match(name):
        message = f"name {describe(name)} must match ^[a-zA-Z0-9_-]{{1,64}}$"
        yield Flaw(join(envelope.body_pointer, "name"), message)


def check_description(envelope: _Envelope) -> Iterator[Flaw]:
    text = _body_member(envelope, "description")
    if isinstance(text, str) and len(text) > MAX_DESCRIPTION:
        message = f"description has {len(text):,} characters; OpenAI has refused more than 1,024"
        yield Flaw(join(envelope.body_pointer, "description"), message)


ENVELOPE_RULES: dict[str, Callable[[_Envelope], Iterable[Flaw]]] = {
    "openai.envelope.type": check_type,
    "openai.envelope.missing": lambda envelope: _member_flaws(envelope, "missing"),
    "openai.envelope.field-type": lambda envelope: _member_flaws(envelope, "type"),
    "openai.envelope.unknown-field": lambda envelope: _member_flaws(envelope, "unknown"),
    "openai.envelope.not-strict": check_format_strict,
    "openai.name.pattern": check_name,
    "openai.description.too-long": check_description,
}


# --- schema rules (strict or not) -------------------------------------------------------------


def check_root_type(tree: SchemaTree) -> Iterator[Flaw]:
    if tree.root.schema.get("type") != "object":
        yield Flaw(tree.pointer, 'the schema root must be "type": "object"')


def check_root_combinator(tree: SchemaTree) -> Iterator[Flaw]:
    for keyword in _ROOT_COMBINATORS:
        if keyword in tree.root.schema:
            message = f"{keyword} is refused at the schema root; the root must be one object"
            yield Flaw(join(tree.pointer, keyword), message)


SCHEMA_RULES: dict[str, Callable[[SchemaTree], Iterable[Flaw]]] = {
    "openai.schema.root-type": check_root_type,
    "openai.schema.root-combinator": check_root_combinator,
    "openai.schema.malformed": malformed_json_schema,
    "openai.schema.too-large": walk_stopped,
}


# --- strict rules (§1.3) ----------------------------------------------------------------------


def _is_object(schema: dict[Any, Any]) -> bool:
    return "object" in types_of(schema) or "properties" in schema


def check_additional_properties(node: Subschema) -> Iterator[Flaw]:
    if _is_object(node.schema) and node.schema.get("additionalProperties") is not False:
        yield Flaw(node.pointer, 'strict mode needs "additionalProperties": false on every object')


def check_properties(node: Subschema) -> Iterator[Flaw]:
    if _is_object(node.schema) and "properties" not in node.schema:
        yield Flaw(node.pointer, 'strict mode needs "properties" on every object, even empty')


def check_required(node: Subschema) -> Iterator[Flaw]:
    properties, required = node.schema.get("properties"), node.schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return
    at = join(node.pointer, "required") if "required" in node.schema else node.pointer
    missing = [str(key) for key in properties if key not in required]
    extra = [name for name in required if isinstance(name, str) and name not in properties]
    if missing:
        message = f"strict mode needs every property in required, and {quoted(missing[0])} is not"
        yield Flaw(at, message + " (make it nullable to keep it optional)")
    if extra:
        yield Flaw(at, f"required names {describe(extra[0])}, which is not a property")


def check_keywords(node: Subschema) -> Iterator[Flaw]:
    return keywords_outside(node, STRICT_KEYWORDS, "is not permitted in strict mode")


def check_format(node: Subschema) -> Iterator[Flaw]:
    name = node.schema.get("format")
    if isinstance(name, str) and name not in STRICT_FORMATS:
        message = f"format {describe(name)} is not one of {', '.join(sorted(STRICT_FORMATS))}"
        yield Flaw(join(node.pointer, "format"), message)


def check_ref_siblings(node: Subschema) -> Iterator[Flaw]:
    others = [str(keyword) for keyword in node.schema if keyword != "$ref"]
    if "$ref" in node.schema and others:
        yield Flaw(
            node.pointer, f"$ref cannot have sibling keywords in strict mode ({quoted(others[0])})"
        )


def check_ref_target(tree: SchemaTree) -> Iterator[Flaw]:
    for node in tree.nodes:
        ref = node.schema.get("$ref") if isinstance(node.schema, dict) else None
        if isinstance(ref, str) and resolve_ref(tree, ref) is None:
            message = f'$ref {describe(ref)} names no schema here; "#" and "#/..." refs resolve'
            yield Flaw(join(node.pointer, "$ref"), message)


def check_untyped(tree: SchemaTree) -> Iterator[Flaw]:
    for node in tree.nodes[1:]:
        schema = node.schema
        if node.keyword == "additionalProperties" or not isinstance(schema, dict | bool):
            continue  # additionalProperties: false is required; non-schemas are malformed
        if isinstance(schema, bool) or not any(k in schema for k in _SHAPE_KEYWORDS):
            message = "strict mode needs a type (or anyOf, enum, const, $ref) on every subschema"
            yield Flaw(node.pointer, message)


def check_items(node: Subschema) -> Iterator[Flaw]:
    if "array" in types_of(node.schema) and "items" not in node.schema:
        yield Flaw(node.pointer, 'strict mode needs "items" on every array')


def check_type_array(node: Subschema) -> Iterator[Flaw]:
    declared = node.schema.get("type")
    # [T, "null"] is the documented form; the order of the two is taken as irrelevant.
    if isinstance(declared, list) and not (len(declared) == 2 and declared.count("null") == 1):
        message = 'strict mode takes a type array only as [T, "null"]; use anyOf for other unions'
        yield Flaw(join(node.pointer, "type"), message)


def check_pattern(node: Subschema) -> Iterator[Flaw]:
    # pydantic-ai moves lookaround out of strict schemas (§9.3); backreferences go with them.
    pattern = node.schema.get("pattern")
    features = regex_features(pattern) if isinstance(pattern, str) else frozenset()
    refused = sorted(features & {"lookaround", "backreference"})
    if refused:
        message = f"pattern uses a {refused[0]}, which strict mode does not support"
        yield Flaw(join(node.pointer, "pattern"), message)


# --- strict limits (§1.3 rule 12) -------------------------------------------------------------


def _first_past(amounts: Iterable[tuple[str, int]], limit: int) -> str | None:
    """The pointer where the running total of ``amounts`` first passes ``limit``, if it does."""
    total = 0
    for pointer, amount in amounts:
        total += amount
        if total > limit:
            return pointer
    return None


def _sizes(tree: SchemaTree, keyword: str) -> Iterator[tuple[str, int]]:
    for node in tree.nodes:
        value = node.schema.get(keyword) if isinstance(node.schema, dict) else None
        if isinstance(value, dict | list):
            yield join(node.pointer, keyword), len(value)


def check_property_count(tree: SchemaTree) -> Iterator[Flaw]:
    pointer = _first_past(_sizes(tree, "properties"), MAX_PROPERTIES)
    if pointer is not None:
        yield Flaw(pointer, f"strict mode allows {MAX_PROPERTIES:,} properties in all; here, more")


def check_enum_count(tree: SchemaTree) -> Iterator[Flaw]:
    pointer = _first_past(_sizes(tree, "enum"), MAX_ENUM_VALUES)
    if pointer is not None:
        yield Flaw(
            pointer, f"strict mode allows {MAX_ENUM_VALUES:,} enum values in all; here, more"
        )


def check_text_size(tree: SchemaTree) -> Iterator[Flaw]:
    pointer = _first_past(_counted_texts(tree), MAX_CHARS)
    if pointer is not None:
        message = "property and definition names, enum and const values pass 120,000 characters"
        yield Flaw(pointer, message + " in all here; strict mode allows no more")


def _counted_texts(tree: SchemaTree) -> Iterator[tuple[str, int]]:
    for node in tree.nodes:
        if not isinstance(node.schema, dict):
            continue
        for keyword in ("properties", "$defs", "definitions"):
            names = node.schema.get(keyword)
            for name in names if isinstance(names, dict) else ():
                yield join(node.pointer, keyword, str(name)), len(str(name))
        enum = node.schema.get("enum")
        for index, value in enumerate(enum if isinstance(enum, list) else ()):
            yield join(node.pointer, "enum", index), _text_length(value)
        if "const" in node.schema:
            yield join(node.pointer, "const"), _text_length(node.schema["const"])


def _text_length(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    scalar = value is None or isinstance(value, bool | int | float)
    return len(describe(value)) if scalar else 0


def check_long_enum(node: Subschema) -> Iterator[Flaw]:
    enum = node.schema.get("enum")
    strings = [value for value in enum if isinstance(value, str)] if isinstance(enum, list) else []
    size = sum(map(len, strings))
    if len(strings) > LONG_ENUM and size > MAX_LONG_ENUM_CHARS:
        message = (
            f"a string enum of over {LONG_ENUM} values may total 15,000 characters, not {size:,}"
        )
        yield Flaw(join(node.pointer, "enum"), message)


def check_depth(tree: SchemaTree) -> Iterator[Flaw]:
    levels, pointer = _deepest(tree, tree.root, {}, set())
    if levels > MAX_LEVELS:
        message = f"schema nests {levels} objects and arrays deep, through $ref too; at most 10"
        yield Flaw(pointer, message)


def _deepest(
    tree: SchemaTree, top: Subschema, memo: dict[str, tuple[int, str]], active: set[str]
) -> tuple[int, str]:
    """The most levels of nesting from ``top`` down (``top`` included, ``$ref``s followed).

    The limit text does not say how levels are counted; arrays count as well as objects, which
    can only over-count. A recursive ``$ref`` (allowed, §1.3 rule 7) is followed once.
    """
    if top.pointer in memo:
        return memo[top.pointer]
    if top.pointer in active or len(active) > 2 * MAX_LEVELS:
        return 0, top.pointer
    active.add(top.pointer)
    above = top.levels - opens_level(top.schema)
    best = (0, top.pointer)
    for node in tree.subtree(top):
        here = node.levels - above
        ref = node.schema.get("$ref") if isinstance(node.schema, dict) else None
        target = resolve_ref(tree, ref)
        if target is not None:
            here += _deepest(tree, target, memo, active)[0]
        best = max(best, (here, node.pointer), key=lambda found: found[0])
    active.discard(top.pointer)
    memo[top.pointer] = best
    return best


STRICT_RULES: dict[str, Callable[[SchemaTree], Iterable[Flaw]]] = {
    "openai.strict.additional-properties": each_schema(check_additional_properties),
    "openai.strict.properties": each_schema(check_properties),
    "openai.strict.required": each_schema(check_required),
    "openai.strict.keyword": each_schema(check_keywords),
    "openai.strict.format": each_schema(check_format),
    "openai.strict.ref-siblings": each_schema(check_ref_siblings),
    "openai.strict.ref-unresolved": check_ref_target,
    "openai.strict.untyped": check_untyped,
    "openai.strict.items": each_schema(check_items),
    "openai.strict.type-array": each_schema(check_type_array),
    "openai.strict.pattern": each_schema(check_pattern),
    "openai.strict.too-many-properties": check_property_count,
    "openai.strict.too-deep": check_depth,
    "openai.strict.too-many-chars": check_text_size,
    "openai.strict.too-many-enum-values": check_enum_count,
    "openai.strict.long-enum-too-long": each_schema(check_long_enum),
}


# --- request rules ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Request:
    layout: _Layout
    payloads: list[Any]


def check_request(
    target: str, payloads: list[Any], options: Mapping[str, Any]
) -> Iterator[Problem]:
    """Every request-wide rule of ``target`` that ``payloads``, sent together, break."""
    yield from run_rules(REQUEST_RULES, _Request(_LAYOUTS[target], payloads))


def check_tool_count(request: _Request) -> Iterator[Flaw]:
    # §1.2 gives 128 for Chat; Responses states none and is assumed the same (§11.4).
    if request.layout.kind == "function" and len(request.payloads) > MAX_TOOLS:
        yield Flaw(f"/{MAX_TOOLS}", f"a request takes at most {MAX_TOOLS} function tools")


def check_format_count(request: _Request) -> Iterator[Flaw]:
    if request.layout.kind == "json_schema" and len(request.payloads) > 1:
        yield Flaw("/1", "a request carries one structured-output format")


def check_duplicate_names(request: _Request) -> Iterator[Flaw]:
    named = []
    for index, payload in enumerate(request.payloads):
        envelope = _read(request.layout, payload) if isinstance(payload, dict) else None
        if envelope is not None and envelope.body is not None:
            pointer = join(f"/{index}{envelope.body_pointer}", "name")
            named.append((pointer, envelope.body.get("name")))
    yield from duplicate_names(named)


REQUEST_RULES: dict[str, Callable[[_Request], Iterable[Flaw]]] = {
    "openai.request.too-many-tools": check_tool_count,
    "openai.request.too-many-formats": check_format_count,
    "openai.request.duplicate-name": check_duplicate_names,
}

RULE_IDS = (
    "openai.envelope.not-object",
    *ENVELOPE_RULES,
    *SCHEMA_RULES,
    *STRICT_RULES,
    *REQUEST_RULES,
)
