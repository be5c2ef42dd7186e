"""Compiled validators: jsonschema-rs, offline, every violation as a `Violation`.

A schema is compiled once (`compile_schema`) and then checks any number of instances. Nothing is
ever fetched: references resolve through the registry the caller passes (the repository's own
schemas), and anything else is an error naming the reference. ``format`` is asserted by default,
because a gate that enforces "every keyword" must not skip one; pass ``assert_formats=False`` for
the annotation-only behaviour that draft 2020-12 specifies.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NoReturn

import jsonschema_rs

from schemawire._json import quoted
from schemawire._pointer import join, resolve, to_pointer
from schemawire.errors import ErrorCode, SchemaError
from schemawire.schema.dialect import DRAFT_07, DRAFT_2020_12, SUBSCHEMA_MAPS, Dialect
from schemawire.types import Violation

__all__ = [
    "CompiledSchema",
    "compile_schema",
    "metaschema_violations",
    "refuse_retrieval",
]

_ENUM_SHOWN = 8
_VALIDATOR_CLASSES: dict[str, type[jsonschema_rs.Validator]] = {
    DRAFT_07.name: jsonschema_rs.Draft7Validator,
    DRAFT_2020_12.name: jsonschema_rs.Draft202012Validator,
}


def refuse_retrieval(uri: str) -> NoReturn:
    """A jsonschema-rs retriever that never fetches: every unknown URI is an error."""
    raise SchemaError(
        ErrorCode.REF_UNRESOLVED,
        f"{uri} is not a schema in this repository, and schemawire never fetches schemas",
        source=uri,
    )


class CompiledSchema:
    """A schema compiled by jsonschema-rs, ready to check instances.

    Create it with `compile_schema`. It keeps no state between calls and is safe to share.
    """

    __slots__ = ("_validator", "is_valid", "schema")

    def __init__(self, schema: dict[str, Any] | bool, validator: jsonschema_rs.Validator) -> None:
        self.schema = schema
        self._validator = validator
        # The validator's own method, not a wrapper: gates call it on every value that passes.
        self.is_valid: Callable[[Any], bool] = validator.is_valid
        """Whether an instance satisfies the schema (stops at the first violation)."""

    def violations(self, instance: Any) -> tuple[Violation, ...]:
        """Every way ``instance`` breaks the schema, in the order the validator found them."""
        if self._validator.is_valid(instance):
            return ()
        found: list[Violation] = []
        for error in self._validator.iter_errors(instance):
            found.extend(_violations_of(error, instance))
        return tuple(found)


def compile_schema(
    schema: dict[str, Any] | bool,
    *,
    registry: jsonschema_rs.Registry | None = None,
    assert_formats: bool = True,
    base_uri: str | None = None,
    dialect: Dialect | None = None,
    source: str = "<schema>",
) -> CompiledSchema:
    """Compile ``schema``, offline, in ``dialect`` (by default the one ``$schema`` names, else
    draft 2020-12).

    Args:
        schema: the schema document.
        registry: other schemas that ``$ref`` may name (build one with `jsonschema_rs.Registry`
            and `refuse_retrieval` as its retriever).
        assert_formats: fail instances whose strings break their ``format``.
        base_uri: the URI relative references resolve against, when the schema has no ``$id``.
        dialect: the dialect to read the schema in, whatever its ``$schema`` says.
        source: a file name or label for error messages.

    Raises:
        SchemaError: the schema breaks its metaschema or a reference does not resolve.
    """
    build = _VALIDATOR_CLASSES[dialect.name] if dialect else jsonschema_rs.validator_for
    try:
        validator = build(
            schema,
            registry=registry,
            validate_formats=assert_formats,
            base_uri=base_uri,
            offline=True,
        )
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
        message = str(getattr(exc, "message", exc)).splitlines()[0]
        raise SchemaError(ErrorCode.SCHEMA_INVALID, message, source=source) from None
    return CompiledSchema(schema, validator)


def metaschema_violations(schema: Any, dialect: Dialect) -> tuple[Violation, ...]:
    """Every way ``schema`` breaks the metaschema of ``dialect``; pointers point into the schema."""
    validator = _metaschema_validator(dialect.name)
    if validator.is_valid(schema):
        return ()
    return tuple(v for e in validator.iter_errors(schema) for v in _violations_of(e, schema))


@functools.cache
def _metaschema_validator(dialect_name: str) -> jsonschema_rs.Validator:
    if dialect_name == DRAFT_07.name:
        return jsonschema_rs.Draft7Validator(
            {"$schema": DRAFT_07.uri, "$ref": DRAFT_07.uri}, offline=True
        )
    return jsonschema_rs.Draft202012Validator({"$ref": DRAFT_2020_12.uri}, offline=True)


def _violations_of(error: jsonschema_rs.ValidationError, instance: Any) -> list[Violation]:
    pointer = to_pointer(error.instance_path)
    keyword = _keyword_of(error)
    kind = error.kind
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.FalseSchema) and keyword in (
        "additionalProperties",
        "unevaluatedProperties",
    ):
        # jsonschema-rs reports `additionalProperties: false` on an object without `properties`
        # once, at the object: every member is unexpected there.
        members = resolve(instance, pointer)
        return [_unexpected(pointer, keyword, key, value) for key, value in members.items()]
    if isinstance(
        kind,
        jsonschema_rs.ValidationErrorKind.AdditionalProperties
        | jsonschema_rs.ValidationErrorKind.UnevaluatedProperties,
    ):
        members = resolve(instance, pointer)
        return [_unexpected(pointer, keyword, key, members.get(key)) for key in kind.unexpected]
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required):
        name = kind.property
        message = f"missing required property {quoted(name)}"
        return [Violation(join(pointer, name), keyword, message, None, None)]
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.FalseSchema):
        expected, describe = _NOT_ALLOWED
    else:
        expected, describe = _EXPECTATIONS.get(keyword, (_no_expectation, None))
    wanted = expected(kind)
    message = describe(wanted) if describe else error.message
    return [Violation(pointer, keyword, message, wanted, error.instance)]


def _keyword_of(error: jsonschema_rs.ValidationError) -> str:
    """The keyword that failed: the last step of the schema path, with two exceptions."""
    path = [token for token in error.schema_path if isinstance(token, str)]
    if "propertyNames" in path:
        return "propertyNames"  # the failing keyword sits inside it, but the object is at fault
    if error.kind.name == "falseSchema":
        # A `false` subschema: name the keyword holding it (`items`, `then`, `properties`...).
        if len(path) >= 2 and path[-2] in SUBSCHEMA_MAPS:
            return path[-2]
        return path[-1] if path else "false"
    return path[-1] if path else error.kind.name


def _unexpected(pointer: str, keyword: str, key: str, value: Any) -> Violation:
    return Violation(join(pointer, key), keyword, f"unexpected property {quoted(key)}", None, value)


def _no_expectation(kind: Any) -> Any:
    return None


def _limit(kind: Any) -> Any:
    return kind.limit


def _types(kind: Any) -> Any:
    types = list(kind.types)
    return types[0] if len(types) == 1 else types


def _one_of_types(types: Any) -> str:
    return " or ".join(types) if isinstance(types, list) else str(types)


def _options(options: list[Any]) -> str:
    shown = ", ".join(quoted(option) for option in options[:_ENUM_SHOWN])
    more = f" or {len(options) - _ENUM_SHOWN} more" if len(options) > _ENUM_SHOWN else ""
    return f"must be one of {shown}{more}"


_Describe = Callable[[Any], str] | None

# keyword -> (what the schema asked for, from the error kind; how to say so)
_EXPECTATIONS: dict[str, tuple[Callable[[Any], Any], _Describe]] = {
    "type": (_types, lambda types: f"must be of type {_one_of_types(types)}"),
    "enum": (lambda kind: list(kind.options), _options),
    "const": (lambda kind: kind.expected_value, lambda value: f"must be {quoted(value)}"),
    "minimum": (_limit, lambda limit: f"must be greater than or equal to {limit}"),
    "maximum": (_limit, lambda limit: f"must be less than or equal to {limit}"),
    "exclusiveMinimum": (_limit, lambda limit: f"must be greater than {limit}"),
    "exclusiveMaximum": (_limit, lambda limit: f"must be less than {limit}"),
    "multipleOf": (lambda kind: kind.multiple_of, lambda step: f"must be a multiple of {step}"),
    "minLength": (_limit, lambda limit: f"must be at least {limit} characters long"),
    "maxLength": (_limit, lambda limit: f"must be at most {limit} characters long"),
    "pattern": (lambda kind: kind.pattern, lambda pattern: f"must match {quoted(pattern)}"),
    "format": (lambda kind: kind.format, lambda name: f"must be a valid {name}"),
    "minItems": (_limit, lambda limit: f"must have at least {limit} items"),
    "maxItems": (_limit, lambda limit: f"must have at most {limit} items"),
    "minProperties": (_limit, lambda limit: f"must have at least {limit} properties"),
    "maxProperties": (_limit, lambda limit: f"must have at most {limit} properties"),
    "uniqueItems": (lambda kind: True, lambda _: "must not contain duplicate items"),
    "anyOf": (_no_expectation, lambda _: "must match at least one of the anyOf schemas"),
    "oneOf": (_no_expectation, lambda _: "must match exactly one of the oneOf schemas"),
    "not": (_no_expectation, lambda _: "must not match the schema under not"),
}
_NOT_ALLOWED: tuple[Callable[[Any], Any], _Describe] = (_no_expectation, lambda _: "not allowed")
