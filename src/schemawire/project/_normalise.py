"""The dialect fixes of an import: any tool's parameter schema as standard draft 2020-12.

`SchemaNormaliser` walks one document and rewrites what is not standard JSON Schema (type names,
presence flags, older drafts' keywords), noting each change as a `Normalisation` with a stable
`NormalisationCode`; it also remembers where each subschema was in the input, so that an error
names the input's own pointer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, NamedTuple

from schemawire._json import quoted
from schemawire._pointer import join
from schemawire.errors import ErrorCode, InputError
from schemawire.project._type_names import FALSY, TRUTHY, parse_type
from schemawire.schema._type_names import JSON_TYPES
from schemawire.schema.dialect import SUBSCHEMA_LISTS, SUBSCHEMA_MAPS, SUBSCHEMA_SINGLE

__all__ = [
    "DRAFT_2020_12",
    "SCHEMA_SHAPES",
    "At",
    "Normalisation",
    "NormalisationCode",
    "SchemaNormaliser",
    "invalid",
    "show_keywords",
]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

# Older drafts whose schemas read the same as draft 2020-12 once tuple "items" and boolean
# exclusive bounds are rewritten (both of which are invalid in 2020-12, so they are always fixed).
_KNOWN_DIALECT = re.compile(
    r"^https?://json-schema\.org/(?:draft/(?:2020-12|2019-09)|draft-0[3467])/schema#?$"
)

# --- keywords that hold subschemas (drafts 04 to 2020-12 together) ----------------------------

# Properties are normalised as properties (their presence flags folded); the older drafts'
# dependencies map names to subschemas or to lists of names, and are normalised too.
_MAPPING = SUBSCHEMA_MAPS - {"properties"} | {"dependencies"}
# Keys that make a dict a schema rather than xLAM's flat map of parameter names to schemas.
SCHEMA_SHAPES = (
    SUBSCHEMA_SINGLE | SUBSCHEMA_MAPS | SUBSCHEMA_LISTS | {"dependencies", "$ref", "$schema", "$id"}
)


class NormalisationCode(StrEnum):
    """Stable codes of the changes an import makes; compare these, never the detail text."""

    DIALECT_CHANGED = "DIALECT_CHANGED"
    """``$schema`` named an older draft; the schema is now read as draft 2020-12."""
    EXAMPLES_MOVED = "EXAMPLES_MOVED"
    """Anthropic ``input_examples`` became the schema's ``examples``."""
    EXCLUSIVE_BOUND_CONVERTED = "EXCLUSIVE_BOUND_CONVERTED"
    """A boolean ``exclusiveMinimum``/``exclusiveMaximum`` (draft-04) became a number."""
    FIELD_DROPPED = "FIELD_DROPPED"
    """An envelope field (``strict``, ``_meta``, ``cache_control``...) has no canonical place."""
    ITEMS_TO_PREFIX_ITEMS = "ITEMS_TO_PREFIX_ITEMS"
    """A list-form ``items`` became ``prefixItems`` (and ``additionalItems`` became ``items``)."""
    KEYWORD_REPLACED = "KEYWORD_REPLACED"
    """A header keyword or ``x-`` annotation of the schema gave way to the tool's own value."""
    NAME_CHANGED_FOR_FILE = "NAME_CHANGED_FOR_FILE"
    """The tool name cannot be a file name: the file stem (and ``$id``) differ from it."""
    OPTIONAL_FLAG_MOVED = "OPTIONAL_FLAG_MOVED"
    """A per-property ``optional``/``required`` flag (or ``optional`` list) went to ``required``."""
    PARAMETERS_MISSING = "PARAMETERS_MISSING"
    """The tool had no parameter schema: it takes no arguments."""
    PARAMETERS_WRAPPED = "PARAMETERS_WRAPPED"
    """A flat map of parameter names to schemas (xLAM) became an object schema."""
    ROOT_TYPE_ADDED = "ROOT_TYPE_ADDED"
    """The parameter schema did not say ``"type": "object"`` at its root."""
    TYPE_REMOVED = "TYPE_REMOVED"
    """A type that accepts any value (``any``, ``""``, an unknown name) was removed."""
    TYPE_RENAMED = "TYPE_RENAMED"
    """A non-standard type name or expression became JSON Schema (``dict`` -> ``object``)."""


@dataclass(frozen=True, slots=True)
class Normalisation:
    """One change an import made.

    Attributes:
        pointer: RFC 6901 pointer to where the change is, in the canonical schema.
        code: what kind of change, stable.
        detail: one sentence saying what was there and what is there now.
        document: ``"input"`` for the canonical input schema, ``"output"`` for the output schema.
    """

    pointer: str
    code: NormalisationCode
    detail: str
    document: Literal["input", "output"] = "input"


# --- the dialect fixes ------------------------------------------------------------------------


class At(NamedTuple):
    """Where a subschema is: in the input (for errors) and in the canonical schema (for notes)."""

    source: str
    target: str

    def child(self, *tokens: str | int) -> At:
        return At(join(self.source, *tokens), join(self.target, *tokens))


@dataclass(frozen=True, slots=True)
class _Property:
    """A property's normalised schema, and what its flags said of its presence (None: nothing)."""

    schema: Any
    required: bool | None = None
    flag: str = ""


class SchemaNormaliser:
    """Normalises one document; collects its notes and where in the input each subschema was."""

    def __init__(self, source: str, document: Literal["input", "output"]) -> None:
        self.source = source
        self.document: Literal["input", "output"] = document
        self.notes: list[Normalisation] = []
        self._origins: dict[str, str] = {}

    def note(self, pointer: str, code: NormalisationCode, detail: str) -> None:
        self.notes.append(Normalisation(pointer, code, detail, self.document))

    def node_origin(self, at: At) -> None:
        self._origins[at.target] = at.source

    def fail(self, pointer: str, message: str) -> InputError:
        return invalid(self.source, pointer, message)

    def source_of(self, target: str) -> str:
        """The input pointer of a canonical pointer: its nearest known subschema, then the rest."""
        prefix = target
        while prefix and prefix not in self._origins:
            prefix = prefix[: prefix.rfind("/")]
        return self._origins.get(prefix, "") + target[len(prefix) :]

    # --- the root and the header

    def root(self, schema: dict[str, Any], at: At) -> dict[str, Any]:
        """``schema`` normalised, read as draft 2020-12 whatever draft it declared."""
        declared = schema.get("$schema", DRAFT_2020_12)
        result = self.node(schema, at)
        if declared == DRAFT_2020_12:
            return result
        if not isinstance(declared, str) or not _KNOWN_DIALECT.match(declared):
            raise self.fail(join(at.source, "$schema"), f"unsupported dialect {quoted(declared)}")
        if declared.removesuffix("#").replace("http:", "https:", 1) != DRAFT_2020_12:
            result["$schema"] = DRAFT_2020_12
            self.note(
                "/$schema",
                NormalisationCode.DIALECT_CHANGED,
                f"{declared} is read as draft 2020-12",
            )
        return result

    def object_root(self, body: dict[str, Any], at: At) -> dict[str, Any]:
        """``body`` with ``"type": "object"`` at its root, or an error if it says otherwise."""
        if body.get("type") == "object":
            return body
        if "type" in body:
            raise self.fail(join(at.source, "type"), 'a tool input must be "type": "object"')
        self.note("/type", NormalisationCode.ROOT_TYPE_ADDED, 'added "type": "object"')
        return {"type": "object", **body}

    def wrap_parameter_map(self, parameters: dict[str, Any], at: At) -> dict[str, Any]:
        """xLAM's ``{name: schema}``: an object whose unflagged properties are required."""
        self._origins[""] = at.source
        self.note(
            "",
            NormalisationCode.PARAMETERS_WRAPPED,
            "a map of parameter names to schemas became an object schema; parameters "
            "not marked optional are required",
        )
        properties = {
            name: self.property(value, At(join(at.source, name), join("/properties", name)))
            for name, value in parameters.items()
        }
        body = {"type": "object", "properties": {n: p.schema for n, p in properties.items()}}
        self.fold_presence(body, properties, [], At(at.source, ""), inferred=True)
        return body

    def with_header(self, header: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        for key, value in body.items():
            if key in header and key != "$schema" and value != header[key]:
                self.replaced(key, value, header[key])
        return header | {key: value for key, value in body.items() if key not in header}

    def replaced(self, key: str, old: Any, new: Any) -> None:
        detail = f"the schema's {key} {quoted(old)} gave way to the tool's {quoted(new)}"
        self.note(join("", key), NormalisationCode.KEYWORD_REPLACED, detail)

    def move_examples(self, schema: dict[str, Any], examples: list[Any]) -> None:
        kept = schema.get("examples", [])
        if not isinstance(kept, list):
            return  # not JSON Schema: the metaschema check says where
        added = [example for example in examples if example not in kept]
        if added:
            schema["examples"] = [*kept, *added]
            self.note(
                "/examples",
                NormalisationCode.EXAMPLES_MOVED,
                f"{len(added)} input_examples became examples",
            )

    def add_annotations(self, schema: dict[str, Any], annotations: dict[str, bool]) -> None:
        for key, value in annotations.items():
            if key in schema and schema[key] != value:
                self.replaced(key, schema[key], value)
            schema[key] = value

    # --- subschemas

    def node(self, schema: dict[str, Any], at: At) -> dict[str, Any]:
        return self.node_and_optional(schema, at)[0]

    def node_and_optional(self, schema: dict[str, Any], at: At) -> tuple[dict[str, Any], bool]:
        """The normalised subschema, and whether its type said ", optional"."""
        self._origins[at.target] = at.source
        result: dict[str, Any] = {}
        properties: dict[str, _Property] = {}
        optional_names: list[str] = []
        said_optional = False
        for key, value in schema.items():
            if key == "type":
                fragment, said_optional = self.type_keyword(value, schema, at.child(key))
                result.update(fragment)
            elif key == "properties" and isinstance(value, dict):
                properties = {n: self.property(v, at.child(key, n)) for n, v in value.items()}
                result[key] = {name: found.schema for name, found in properties.items()}
            elif key == "items" and isinstance(value, list):
                result.update(self.tuple_items(schema, at))
            elif key == "optional" and _is_name_list(value):
                optional_names = self.optional_list(value, at)
            elif key != "additionalItems" or not isinstance(schema.get("items"), list):
                result[key] = self.keyword(key, value, at.child(key))
        self.fold_presence(result, properties, optional_names, at, inferred=False)
        return self.exclusive_bounds(result, at), said_optional

    def subschema(self, value: Any, at: At) -> Any:
        return self.node(value, at) if isinstance(value, dict) else value

    def keyword(self, key: str, value: Any, at: At) -> Any:
        """``value`` with the subschemas it holds, if any, normalised."""
        if key in SUBSCHEMA_SINGLE:  # a draft-07 list of items is kept as it is
            return self.subschema(value, at)
        if key in _MAPPING and isinstance(value, dict):
            return {name: self.subschema(child, at.child(name)) for name, child in value.items()}
        if key in SUBSCHEMA_LISTS and isinstance(value, list):
            return [self.subschema(child, at.child(index)) for index, child in enumerate(value)]
        return value

    def property(self, schema: Any, at: At) -> _Property:
        """A property's schema without its presence flags, and what they said."""
        if not isinstance(schema, dict):
            self._origins[at.target] = at.source
            return _Property(schema)
        rest, required, flag = dict(schema), None, ""
        for key, means_required in (("required", True), ("optional", False)):
            said = _truth(rest.get(key))
            if said is not None:
                if required is None:
                    required, flag = said == means_required, f'"{key}": {quoted(rest[key])}'
                del rest[key]
        normalised, said_optional = self.node_and_optional(rest, at)
        if required is None and said_optional:
            required, flag = False, f'"type": {quoted(schema["type"])}'
        return _Property(normalised, required, flag)

    def optional_list(self, names: list[str], at: At) -> list[str]:
        self.note(
            at.target,
            NormalisationCode.OPTIONAL_FLAG_MOVED,
            f'"optional": {quoted(names)} removed; those properties are left out of required',
        )
        return names

    def fold_presence(
        self,
        result: dict[str, Any],
        properties: dict[str, _Property],
        optional_names: list[str],
        at: At,
        *,
        inferred: bool,
    ) -> None:
        """Fold the properties' flags (and an ``optional`` list) into ``result["required"]``.

        A property's own flag wins over the ``required`` list it contradicts: the flag is the
        more specific statement. With ``inferred``, unflagged properties are required.
        """
        required = result.get("required", [])
        if not isinstance(required, list):
            return  # not JSON Schema: the metaschema check says where
        names = [name for name in required if name not in optional_names]
        for name, found in properties.items():
            wanted = found.required if found.required is not None else (inferred or None)
            if wanted and name not in names:
                names.append(name)
            elif wanted is False and name in names:
                names.remove(name)
            if found.flag:
                where = "is in required" if wanted else "is left out of required"
                detail = f"{found.flag} removed; {quoted(name)} {where}"
                target = at.child("properties", name).target
                self.note(target, NormalisationCode.OPTIONAL_FLAG_MOVED, detail)
        if names != required:
            result["required"] = names

    def tuple_items(self, schema: dict[str, Any], at: At) -> dict[str, Any]:
        """A list-form ``items`` (drafts before 2020-12) as ``prefixItems``."""
        prefix = [
            self.subschema(
                item, At(join(at.source, "items", index), join(at.target, "prefixItems", index))
            )
            for index, item in enumerate(schema["items"])
        ]
        result: dict[str, Any] = {"prefixItems": prefix}
        detail = '"items": [...] became "prefixItems"'
        if "additionalItems" in schema:
            result["items"] = self.subschema(schema["additionalItems"], at.child("additionalItems"))
            detail += ' and "additionalItems" became "items"'
        self.note(join(at.target, "prefixItems"), NormalisationCode.ITEMS_TO_PREFIX_ITEMS, detail)
        return result

    def exclusive_bounds(self, result: dict[str, Any], at: At) -> dict[str, Any]:
        """Draft-04 boolean ``exclusiveMinimum``/``exclusiveMaximum`` as numbers."""
        for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            flag, limit = result.get(exclusive), result.get(bound)
            if not isinstance(flag, bool):
                continue
            if flag and _is_number(limit):
                result = {k: v for k, v in result.items() if k != bound}
                result[exclusive] = limit
                detail = f'"{exclusive}": true with "{bound}": {quoted(limit)} became a number'
            else:
                result = {k: v for k, v in result.items() if k != exclusive}
                detail = f'"{exclusive}": {quoted(flag)} bounded nothing and was removed'
            self.note(
                join(at.target, exclusive), NormalisationCode.EXCLUSIVE_BOUND_CONVERTED, detail
            )
        return result

    def type_keyword(
        self, value: Any, schema: dict[str, Any], at: At
    ) -> tuple[dict[str, Any], bool]:
        """The keywords that stand for ``"type": value``, and whether it said ", optional"."""
        if _standard_type(value) or not _is_type_text(value):
            return {"type": value}, False  # standard, or malformed: the metaschema check says
        parsed = parse_type(value)
        fragment, optional = parsed if parsed is not None else ({}, False)
        # Keywords the schema already has (BFCL's tuples carry their "items") stay as written.
        fragment = {k: v for k, v in fragment.items() if k == "type" or k not in schema}
        if fragment:
            detail = f'"type": {quoted(value)} became {show_keywords(fragment)}'
        elif parsed is None:
            detail = f'"type": {quoted(value)} is no type JSON Schema knows: removed, any value'
        else:
            detail = f'"type": {quoted(value)} accepts any value: removed'
        code = NormalisationCode.TYPE_RENAMED if fragment else NormalisationCode.TYPE_REMOVED
        self.note(at.target, code, detail)
        return fragment, optional


def _standard_type(value: Any) -> bool:
    if isinstance(value, str):
        return value in JSON_TYPES
    return (
        _is_type_text(value)
        and all(name in JSON_TYPES for name in value)
        and len(set(value)) == len(value)
    )


def _is_type_text(value: Any) -> bool:
    """Whether ``value`` is a type name or a list of them (else it is not a type at all)."""
    return isinstance(value, str) or _is_name_list(value)


def _is_name_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _truth(value: Any) -> bool | None:
    """A flag's value as a boolean (``true``, ``"True"``, ``"yes"``...), or None if it is none."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUTHY | FALSY:
        return value.strip().lower() in TRUTHY
    return None


# --- messages


def invalid(source: str, pointer: str, message: str) -> InputError:
    return InputError(ErrorCode.SCHEMA_INVALID, message, source=source, pointer=pointer)


def show_keywords(schema: dict[str, Any]) -> str:
    return ", ".join(f"{quoted(key)}: {quoted(value)}" for key, value in schema.items())
