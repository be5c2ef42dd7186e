"""Lint: schemas that are valid JSON Schema but let bad data through or trip a model or provider.

Each rule is a function from one subschema (a `Site`) or one file to findings, in a table keyed by
rule id (`SITE_CHECKS`, `FILE_CHECKS`); ids, names, severities and rationales live in the
catalogue in `schema.rules`. Rules switched off in the configuration (everywhere, or per file
pattern) are never run.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from schemawire._json import canonical, quoted
from schemawire._pointer import join
from schemawire.schema._type_names import ANY_TYPES, JSON_TYPES, json_type_for
from schemawire.schema._walk import Site
from schemawire.schema._x_keywords import check_keywords
from schemawire.schema.config import LintConfig
from schemawire.schema.dialect import KNOWN_FORMATS
from schemawire.schema.repository import Repository
from schemawire.schema.rules import Finding, rule
from schemawire.schema.schema_file import SchemaFile

__all__ = ["FILE_CHECKS", "SITE_CHECKS", "lint_file", "lint_repository"]

PORTABLE_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
PORTABLE_PROPERTY_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

# Keywords from other schema languages, and the JSON Schema way to say the same.
_FOREIGN_KEYWORDS = {
    "nullable": 'nullable is OpenAPI 3.0; write "type": [T, "null"]',
    "optional": "JSON Schema has no optional; leave the property out of required",
    "example": "use examples (a list)",
    "require": 'did you mean "required"?',
    "item": 'did you mean "items"?',
}
_SHAPE_KEYWORDS = ("type", "enum", "const", "$ref", "$dynamicRef", "anyOf", "oneOf", "allOf")
_VALUE_SHAPES = (
    "properties",
    "patternProperties",
    "propertyNames",
    "$ref",
    "$dynamicRef",
    "allOf",
    "anyOf",
    "oneOf",
    "if",
)
_ROOT_COMBINATORS = ("anyOf", "oneOf", "allOf", "not", "if")
# Subschemas under these keywords add conditions to a value that another schema shapes.
_CONSTRAINT_KEYWORDS = frozenset(
    {"if", "then", "else", "not", "contains", "propertyNames", "dependentSchemas"}
)
_BRANCH_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf"})
# Keywords through which properties may be defined somewhere else than in "properties".
_COMPOSITION_KEYWORDS = ("$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "if", "dependentSchemas")


@dataclass(frozen=True, slots=True)
class LintContext:
    """What a rule may know besides the subschema: the file, the settings, and the references.

    ``referenced`` maps the URI of each resource that something references to the fragments
    referenced in it.
    """

    file: SchemaFile
    config: LintConfig
    referenced: Mapping[str, frozenset[str]]

    def finding(self, rule_id: str, pointer: str, message: str, hint: str | None = None) -> Finding:
        """A finding of ``rule_id`` in this file."""
        return Finding(rule(rule_id), self.file.relpath, pointer, message, hint)


SiteCheck = Callable[[LintContext, Site], Iterable[Finding]]
FileCheck = Callable[[LintContext], Iterable[Finding]]


def lint_repository(repository: Repository) -> tuple[Finding, ...]:
    """Every lint finding in every usable file of ``repository``."""
    fragments: dict[str, set[str]] = defaultdict(set)
    for reference in repository.references:
        fragments[reference.target].add(reference.fragment)
    referenced = {target: frozenset(found) for target, found in fragments.items()}
    findings: list[Finding] = []
    for file in repository.files:
        if file.usable:
            context = LintContext(file, repository.config.lint, referenced)
            findings.extend(lint_file(context, repository.sites(file)))
    return tuple(findings)


def lint_file(context: LintContext, sites: Iterable[Site]) -> Iterator[Finding]:
    """Every lint finding in ``context.file``, whose subschemas are ``sites``."""
    config, relpath = context.config, context.file.relpath
    site_checks = [c for rid, c in SITE_CHECKS.items() if not config.ignores(rid, relpath)]
    file_checks = [c for rid, c in FILE_CHECKS.items() if not config.ignores(rid, relpath)]
    for site in sites:
        if isinstance(site.schema, dict) or site.is_property:
            for check in site_checks:
                yield from check(context, site)
    for file_check in file_checks:
        yield from file_check(context)


# --- site rules -------------------------------------------------------------------------------


def _types_of(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    return [t for t in declared if isinstance(t, str)] if isinstance(declared, list) else []


def _is_open_object_property(context: LintContext, site: Site) -> bool:
    return site.is_property and site.key in context.config.open_objects


def _shapes_an_object(context: LintContext, site: Site) -> bool:
    """Whether the subschema says what an object holds (rather than adding a condition to an
    object that another subschema shapes), and is not an escape hatch such as ``metadata``."""
    schema = site.schema
    if not isinstance(schema, dict) or "object" not in _types_of(schema):
        return False
    if site.keyword in _CONSTRAINT_KEYWORDS or _is_open_object_property(context, site):
        return False
    return site.keyword not in _BRANCH_KEYWORDS or "properties" in schema


def _is_closed(schema: Any) -> bool:
    """Whether ``schema`` refuses unknown properties (a ``$ref`` is trusted to)."""
    return isinstance(schema, dict) and (
        schema.get("additionalProperties") is False
        or schema.get("unevaluatedProperties") is False
        or "$ref" in schema
    )


def _closed_by_branches(schema: dict[str, Any]) -> bool:
    """Whether the branches of a composition close the object: one closed ``allOf`` branch, or
    every branch of an ``anyOf`` or ``oneOf``."""
    all_of, any_of, one_of = (schema.get(k) for k in ("allOf", "anyOf", "oneOf"))
    return (
        (isinstance(all_of, list) and any(map(_is_closed, all_of)))
        or (isinstance(any_of, list) and bool(any_of) and all(map(_is_closed, any_of)))
        or (isinstance(one_of, list) and bool(one_of) and all(map(_is_closed, one_of)))
    )


def check_open_object(context: LintContext, site: Site) -> Iterator[Finding]:
    schema = site.schema
    if not isinstance(schema, dict) or not _shapes_an_object(context, site):
        return
    if _is_closed(schema) or _closed_by_branches(schema):
        return
    if isinstance(schema.get("additionalProperties"), dict):
        return  # a map whose values have a schema is open by design, not by accident
    parent = site.parent.schema if site.parent else None
    if isinstance(parent, dict) and parent.get("unevaluatedProperties") is False:
        return  # a branch of a composition closed by its parent
    yield context.finding(
        "SW101",
        site.pointer,
        "object accepts any extra property",
        hint='add "additionalProperties": false; keep extensions in a "metadata" property',
    )


def check_untyped_property(context: LintContext, site: Site) -> Iterator[Finding]:
    if not site.is_property or site.schema is False:
        return
    schema = site.schema
    if isinstance(schema, dict) and any(keyword in schema for keyword in _SHAPE_KEYWORDS):
        return
    if _is_open_object_property(context, site):
        return
    yield context.finding(
        "SW102", site.pointer, f"property {quoted(site.key)} accepts any value", hint='add a "type"'
    )


def check_undescribed_property(context: LintContext, site: Site) -> Iterator[Finding]:
    if not context.file.is_tool_input or not site.is_property:
        return
    schema = site.schema
    if isinstance(schema, dict) and ("description" in schema or "$ref" in schema):
        return  # a $ref takes its description from the definition it names
    yield context.finding(
        "SW103",
        site.pointer,
        f"property {quoted(site.key)} has no description",
        hint="say what the value means and give an example",
    )


def check_required_defined(context: LintContext, site: Site) -> Iterator[Finding]:
    schema = site.schema
    if not isinstance(schema, dict):
        return
    required, properties = schema.get("required"), schema.get("properties")
    if not isinstance(required, list) or not isinstance(properties, dict):
        return
    if any(keyword in schema for keyword in _COMPOSITION_KEYWORDS):
        return  # the property may be defined in a referenced or composed schema
    pattern_properties = schema.get("patternProperties")
    patterns = list(pattern_properties) if isinstance(pattern_properties, dict) else []
    for index, name in enumerate(required):
        if not isinstance(name, str) or name in properties:
            continue
        if any(_search(pattern, name) for pattern in patterns):
            continue
        close = difflib.get_close_matches(name, list(properties), n=1)
        hint = f"did you mean {quoted(close[0])}?" if close else "add it to properties"
        yield context.finding(
            "SW104",
            join(site.pointer, "required", index),
            f"required property {quoted(name)} is not defined",
            hint,
        )


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def check_unknown_keyword(context: LintContext, site: Site) -> Iterator[Finding]:
    schema, dialect = site.schema, context.file.dialect
    if not isinstance(schema, dict) or dialect is None:
        return
    for keyword in schema:
        if keyword in dialect.keywords or keyword.startswith("x-"):
            continue
        if keyword in context.config.keywords:
            continue
        yield context.finding(
            "SW105",
            join(site.pointer, keyword),
            f"unknown keyword {quoted(keyword)} is ignored by validators",
            _keyword_hint(keyword, dialect.keywords),
        )


def _keyword_hint(keyword: str, known: frozenset[str]) -> str:
    if keyword in _FOREIGN_KEYWORDS:
        return _FOREIGN_KEYWORDS[keyword]
    close = difflib.get_close_matches(keyword, sorted(known), n=1, cutoff=0.75)
    if close:
        return f"did you mean {quoted(close[0])}?"
    return 'prefix your own keywords with "x-", or list them under [lint] keywords'


def check_type_names(context: LintContext, site: Site) -> Iterator[Finding]:
    schema = site.schema
    if not isinstance(schema, dict) or "type" not in schema:
        return
    declared = schema["type"]
    names = declared if isinstance(declared, list) else [declared]
    for index, name in enumerate(names):
        if not isinstance(name, str) or name in JSON_TYPES:
            continue
        pointer = (
            join(site.pointer, "type", index)
            if isinstance(declared, list)
            else join(site.pointer, "type")
        )
        yield context.finding(
            "SW106", pointer, f"{quoted(name)} is not a JSON Schema type", _type_hint(name)
        )


def _type_hint(name: str) -> str:
    lowered = name.lower()
    if lowered in JSON_TYPES:
        return f'write "{lowered}" (type names are lower case)'
    if lowered in ANY_TYPES or lowered == "object?":
        return "leave type out to accept any value, or list the types the value may have"
    fix = json_type_for(lowered)
    types = ", ".join(sorted(JSON_TYPES))
    return f'use "{fix}"' if fix else f"use one of {types}"


def check_value_types(context: LintContext, site: Site) -> Iterator[Finding]:
    schema = site.schema
    if not isinstance(schema, dict):
        return
    types = [t for t in _types_of(schema) if t in JSON_TYPES]
    if types:
        for pointer, value in _declared_values(schema, site.pointer):
            if not any(_has_type(value, t) for t in types):
                yield context.finding(
                    "SW107", pointer, f"{quoted(value)} is not of type {' or '.join(types)}"
                )
    enum = schema.get("enum")
    if "default" in schema and isinstance(enum, list) and not _is_member(schema["default"], enum):
        yield context.finding(
            "SW107",
            join(site.pointer, "default"),
            f"default {quoted(schema['default'])} is not one of the enum values",
        )


def _is_member(value: Any, options: list[Any]) -> bool:
    return canonical(value) in {canonical(option) for option in options}


def _declared_values(schema: dict[str, Any], pointer: str) -> Iterator[tuple[str, Any]]:
    if "default" in schema:
        yield join(pointer, "default"), schema["default"]
    if "const" in schema:
        yield join(pointer, "const"), schema["const"]
    if isinstance(schema.get("enum"), list):
        for index, value in enumerate(schema["enum"]):
            yield join(pointer, "enum", index), value


def _has_type(value: Any, name: str) -> bool:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    checks = {
        "null": value is None,
        "boolean": isinstance(value, bool),
        "integer": is_number and (isinstance(value, int) or value.is_integer()),
        "number": is_number,
        "string": isinstance(value, str),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }
    return checks[name]


def check_duplicate_enum(context: LintContext, site: Site) -> Iterator[Finding]:
    enum = site.schema.get("enum") if isinstance(site.schema, dict) else None
    if not isinstance(enum, list):
        return
    seen: set[str] = set()
    for index, value in enumerate(enum):
        key = canonical(value)
        if key in seen:
            yield context.finding(
                "SW108",
                join(site.pointer, "enum", index),
                f"{quoted(value)} is listed twice",
                hint="remove one",
            )
        seen.add(key)


def check_unused_definitions(context: LintContext, site: Site) -> Iterator[Finding]:
    if site.keyword not in ("$defs", "definitions") or site.parent is None:
        return
    if site.parent.base_uri != context.file.uri or _declares_target(site.schema):
        return  # inside an embedded resource, or reachable by an anchor or $id: assume used
    prefix = site.pointer
    fragments = context.referenced.get(context.file.uri, frozenset())
    if prefix in fragments or any(fragment.startswith(prefix + "/") for fragment in fragments):
        return
    yield context.finding(
        "SW109",
        site.pointer,
        f"definition {quoted(site.key)} is never referenced",
        hint="remove it, or $ref it where it is meant to be used",
    )


def _declares_target(schema: Any) -> bool:
    return isinstance(schema, dict) and any(
        key in schema for key in ("$id", "$anchor", "$dynamicAnchor")
    )


def check_unknown_format(context: LintContext, site: Site) -> Iterator[Finding]:
    name = site.schema.get("format") if isinstance(site.schema, dict) else None
    if not isinstance(name, str) or name in KNOWN_FORMATS or name in context.config.formats:
        return
    close = difflib.get_close_matches(name, sorted(KNOWN_FORMATS), n=1)
    hint = f"did you mean {quoted(close[0])}?" if close else "list it under [lint] formats"
    yield context.finding(
        "SW110", join(site.pointer, "format"), f"unknown format {quoted(name)}", hint
    )


def check_property_keys(context: LintContext, site: Site) -> Iterator[Finding]:
    if not context.file.is_tool_input or not site.is_property:
        return
    key = str(site.key)
    if PORTABLE_PROPERTY_KEY.match(key):
        return
    yield context.finding(
        "SW112",
        site.pointer,
        f"property key {quoted(key)} is not portable",
        hint="use letters, digits and underscores, starting with a letter",
    )


def check_shapeless_object(context: LintContext, site: Site) -> Iterator[Finding]:
    schema = site.schema
    if not isinstance(schema, dict) or not _shapes_an_object(context, site):
        return
    if any(keyword in schema for keyword in _VALUE_SHAPES):
        return
    if isinstance(schema.get("additionalProperties"), dict | bool):
        return
    if isinstance(schema.get("unevaluatedProperties"), dict):
        return
    yield context.finding(
        "SW114",
        site.pointer,
        "object says nothing about its properties",
        hint='add "properties", or "additionalProperties": {schema}',
    )


SITE_CHECKS: dict[str, SiteCheck] = {
    "SW101": check_open_object,
    "SW102": check_untyped_property,
    "SW103": check_undescribed_property,
    "SW104": check_required_defined,
    "SW105": check_unknown_keyword,
    "SW106": check_type_names,
    "SW107": check_value_types,
    "SW108": check_duplicate_enum,
    "SW109": check_unused_definitions,
    "SW110": check_unknown_format,
    "SW112": check_property_keys,
    "SW114": check_shapeless_object,
    "SW116": check_keywords,
}


# --- file rules -------------------------------------------------------------------------------


def check_tool_name(context: LintContext) -> Iterator[Finding]:
    name = context.file.name
    if context.file.is_tool_input and not PORTABLE_TOOL_NAME.match(name):
        yield context.finding(
            "SW111",
            "",
            f"tool name {quoted(name)} is not portable",
            hint="rename the file: letters, digits, _ and -, at most 64, "
            "starting with a letter or _",
        )


def check_tool_root(context: LintContext) -> Iterator[Finding]:
    document = context.file.document
    if not context.file.is_tool_input:
        return
    if document.get("type") != "object":
        yield context.finding(
            "SW113",
            "/type" if "type" in document else "",
            'a tool input must be "type": "object" at its root',
            hint="put the arguments in properties of one object",
        )
    for keyword in _ROOT_COMBINATORS:
        if keyword in document:
            yield context.finding(
                "SW113",
                join("", keyword),
                f"{keyword} at the root of a tool input is refused by providers",
                hint="move the alternatives into a property",
            )


def check_tool_description(context: LintContext) -> Iterator[Finding]:
    file = context.file
    if file.is_tool_input and not isinstance(file.document.get("description"), str):
        yield context.finding(
            "SW115",
            "",
            f"tool {quoted(file.name)} has no description",
            hint="say what the tool does and when to use it",
        )


FILE_CHECKS: dict[str, FileCheck] = {
    "SW111": check_tool_name,
    "SW113": check_tool_root,
    "SW115": check_tool_description,
}
