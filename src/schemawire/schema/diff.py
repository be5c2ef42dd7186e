"""Breaking changes: what changed between two versions of a schema, and whom each change breaks.

A schema is read by two parties. *Producers* send instances: callers (models) for a tool's input,
the tool for its output, the sending agent for a handoff, whoever writes a checkpoint for state.
*Consumers* read them: the tool, the host and model, the receiving agent, whoever resumes. A
change that narrows what the schema accepts (a new required property, a removed enum value, a
tighter bound) breaks producers: something they sent is refused now. A change that widens it (a
new optional property, a new enum value, a looser bound) breaks consumers: they may receive
values they never handled. Which side counts depends on the file's `Role`: a tool's owner ships
its code with its schema, so a tool's input breaks only its callers and its output only its
readers; a handoff or state schema has a party on each side, so either direction breaks.

Subschemas are compared keyword by keyword (a table of comparers), through ``$ref`` within a
document and into the repository's other files; each difference is a `SchemaChange` with a
stable code from `CHANGE_KINDS`. ``anyOf``, ``oneOf`` and ``allOf`` are compared as sets of
branches, best effort; a ``pattern``, ``not`` or ``if``/``then``/``else`` that differs counts as
a change both ways, since which one accepts more cannot be decided in general.

    diff_schemas(old, new, role=...)     two schema documents: their changes
    diff_files(old_path, new_path)       two schema files, references resolved in their repository
    diff_repositories(old, new)          every schema file of two states of a repository
    diff_since(repository, rev)          a repository against itself at a git revision
    version_findings(diff)               SW401 and SW402, for ``schemawire check --since``
"""

from __future__ import annotations

import json
import posixpath
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from schemawire._json import load_file
from schemawire._pointer import join, resolve
from schemawire.errors import UsageError
from schemawire.schema.dialect import DEFAULT_DIALECT, dialect_named
from schemawire.schema.files import relpath
from schemawire.schema.repository import Repository, SchemaFile
from schemawire.schema.rules import Finding, rule
from schemawire.schema.walk import iter_sites

__all__ = [
    "ABSENT",
    "CHANGE_KINDS",
    "ChangeKind",
    "ChangeSeverity",
    "FileStatus",
    "RepositoryDiff",
    "Role",
    "SchemaChange",
    "SchemaDiff",
    "Side",
    "diff_files",
    "diff_repositories",
    "diff_schemas",
    "diff_since",
    "role_of",
    "version_findings",
]


class _Absent:
    """The value of a keyword a schema does not have (``None`` is JSON ``null``)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


class Side(StrEnum):
    """The party a change can break: producers send instances, consumers read them."""

    PRODUCERS = "producers"
    CONSUMERS = "consumers"
    BOTH = "both"
    NONE = "none"


class ChangeSeverity(StrEnum):
    """Whether a change breaks a party the file's role protects, or only changes annotations."""

    BREAKING = "breaking"
    COMPATIBLE = "compatible"
    ANNOTATION = "annotation"


class Role(StrEnum):
    """What a schema file describes, which decides the side a change must not break."""

    INPUT = "input"
    OUTPUT = "output"
    HANDOFF = "handoff"
    STATE = "state"
    SHARED = "shared"

    @property
    def guarded(self) -> frozenset[Side]:
        """The sides a change of this file must not break."""
        return _GUARDED.get(self, frozenset({Side.PRODUCERS, Side.CONSUMERS}))

    def parties(self, side: Side) -> str:
        """Who ``side`` is for this role, in words: ``callers``, ``the receiving agent``…"""
        producers, consumers = _PARTIES[self]
        named = {Side.PRODUCERS: producers, Side.CONSUMERS: consumers, Side.NONE: "nobody"}
        return named.get(side, f"{producers} and {consumers}")


_GUARDED = {Role.INPUT: frozenset({Side.PRODUCERS}), Role.OUTPUT: frozenset({Side.CONSUMERS})}
_PARTIES = {
    Role.INPUT: ("callers", "the tool"),
    Role.OUTPUT: ("the tool", "the host"),
    Role.HANDOFF: ("the sending agent", "the receiving agent"),
    Role.STATE: ("writers", "readers"),
    Role.SHARED: ("producers", "consumers"),
}
_ROLE_OF_KIND = {"handoffs": Role.HANDOFF, "state": Role.STATE, "common": Role.SHARED}


def role_of(file: SchemaFile) -> Role:
    """The role of a repository file: its kind, and for tools, input or output."""
    if file.kind == "tools":
        return Role.OUTPUT if file.is_output else Role.INPUT
    return _ROLE_OF_KIND.get(file.kind, Role.SHARED)


@dataclass(frozen=True, slots=True)
class ChangeKind:
    """One kind of change, with the side it breaks whatever the file's role.

    Attributes:
        code: stable identifier, such as ``REQUIRED_ADDED``.
        breaks: producers for a narrowing, consumers for a widening, both when it goes both
            ways, none when no instance is accepted or refused differently.
        summary: what it means, in one line.
        annotation: whether only annotations changed (title, description, examples...).
    """

    code: str
    breaks: Side
    summary: str
    annotation: bool = False


_P, _C, _B, _0 = Side.PRODUCERS, Side.CONSUMERS, Side.BOTH, Side.NONE

CHANGE_KINDS: dict[str, ChangeKind] = {
    kind.code: kind
    for kind in (
        ChangeKind("SCHEMA_ADDED", _0, "A new schema file."),
        ChangeKind("SCHEMA_REMOVED", _B, "A schema file is gone: nothing may send or read it."),
        ChangeKind("DIALECT_CHANGED", _B, "$schema names another dialect, which reads keywords "
                   "differently."),
        ChangeKind("ID_CHANGED", _B, "An $id or anchor changed: references to the old one no "
                   "longer resolve."),
        ChangeKind("REF_CHANGED", _B, "A $ref that does not resolve here names something else."),
        ChangeKind("TYPE_NARROWED", _P, "The type accepts fewer kinds of value."),
        ChangeKind("TYPE_WIDENED", _C, "The type accepts more kinds of value."),
        ChangeKind("TYPE_CHANGED", _B, "The type accepts other kinds of value."),
        ChangeKind("ENUM_ADDED", _P, "Only the listed values are accepted now."),
        ChangeKind("ENUM_REMOVED", _C, "Any value is accepted, not only the listed ones."),
        ChangeKind("ENUM_VALUE_ADDED", _C, "An enum accepts one more value."),
        ChangeKind("ENUM_VALUE_REMOVED", _P, "An enum no longer accepts a value."),
        ChangeKind("CONST_ADDED", _P, "Only one value is accepted now."),
        ChangeKind("CONST_REMOVED", _C, "Not only the one value is accepted now."),
        ChangeKind("CONST_CHANGED", _B, "Another single value is accepted."),
        ChangeKind("PATTERN_ADDED", _P, "Strings must match a pattern now."),
        ChangeKind("PATTERN_REMOVED", _C, "Strings no longer need to match a pattern."),
        ChangeKind("PATTERN_CHANGED", _B, "Strings must match another pattern."),
        ChangeKind("FORMAT_ADDED", _P, "Strings must have a format now (schemawire asserts "
                   "formats)."),
        ChangeKind("FORMAT_REMOVED", _C, "Strings no longer need a format."),
        ChangeKind("FORMAT_CHANGED", _B, "Strings must have another format."),
        ChangeKind("BOUND_TIGHTENED", _P, "A minimum, maximum, length, count or multipleOf "
                   "accepts less."),
        ChangeKind("BOUND_LOOSENED", _C, "A minimum, maximum, length, count or multipleOf "
                   "accepts more."),
        ChangeKind("BOUND_CHANGED", _B, "A multipleOf accepts other numbers."),
        ChangeKind("UNIQUE_ITEMS_ADDED", _P, "Array items must be unique now."),
        ChangeKind("UNIQUE_ITEMS_REMOVED", _C, "Array items may repeat now."),
        ChangeKind("REQUIRED_ADDED", _P, "A property must be present now."),
        ChangeKind("REQUIRED_REMOVED", _C, "A property may be missing now."),
        ChangeKind("PROPERTY_ADDED", _C, "A closed object accepts a new property."),
        ChangeKind("PROPERTY_REMOVED", _P, "A closed object no longer accepts a property."),
        ChangeKind("PROPERTY_DECLARED", _0, "An open object describes a property it accepted "
                   "anyway; what that asks of its value is listed beside it."),
        ChangeKind("PROPERTY_UNDECLARED", _0, "An open object no longer describes a property; "
                   "what that frees is listed beside it."),
        ChangeKind("ADDITIONAL_PROPERTIES_CLOSED", _P, "An object no longer accepts properties "
                   "it does not name."),
        ChangeKind("ADDITIONAL_PROPERTIES_OPENED", _C, "An object accepts properties it does "
                   "not name."),
        ChangeKind("FALSE_SCHEMA_ADDED", _P, "A subschema became false: nothing is accepted "
                   "there."),
        ChangeKind("FALSE_SCHEMA_REMOVED", _C, "A subschema was false and accepts values now."),
        ChangeKind("CONTAINS_ADDED", _P, "An array must contain a matching item now."),
        ChangeKind("CONTAINS_REMOVED", _C, "An array no longer needs a matching item."),
        ChangeKind("COMBINATOR_ADDED", _P, "Values must match an anyOf or oneOf now."),
        ChangeKind("COMBINATOR_REMOVED", _C, "Values no longer need to match an anyOf or oneOf."),
        ChangeKind("ANY_OF_BRANCH_ADDED", _C, "An anyOf or oneOf has one more alternative."),
        ChangeKind("ANY_OF_BRANCH_REMOVED", _P, "An anyOf or oneOf lost an alternative."),
        ChangeKind("ALL_OF_BRANCH_ADDED", _P, "An allOf has one more schema to satisfy."),
        ChangeKind("ALL_OF_BRANCH_REMOVED", _C, "An allOf has one schema fewer to satisfy."),
        ChangeKind("NOT_ADDED", _P, "Values must not match a schema now."),
        ChangeKind("NOT_REMOVED", _C, "Values may match a schema they could not before."),
        ChangeKind("NOT_CHANGED", _B, "Values must not match another schema."),
        ChangeKind("CONDITIONAL_CHANGED", _B, "An if/then/else changed."),
        ChangeKind("DEPENDENCY_ADDED", _P, "A property asks for another property or schema "
                   "now."),
        ChangeKind("DEPENDENCY_REMOVED", _C, "A property no longer asks for another property or "
                   "schema."),
        ChangeKind("DEFINITION_ADDED", _0, "A new $defs entry."),
        ChangeKind("DEFINITION_REMOVED", _0, "A $defs entry nothing here uses is gone (a file "
                   "still referencing it fails SW011)."),
        ChangeKind("ANNOTATION_CHANGED", _0, "A title, description, example, default, comment or "
                   "other keyword validators ignore.", annotation=True),
    )
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One difference between two versions of a schema.

    Attributes:
        code: a key of `CHANGE_KINDS`, such as ``ENUM_VALUE_REMOVED``.
        pointer: where in the schema, from its root; a ``$ref`` followed is a ``$ref`` token
            (``/properties/order_id/$ref/pattern``), as in a validator's keyword location.
        old: the value before (`ABSENT` when there was none).
        new: the value after (`ABSENT` when there is none).
        breaks: the side it can break.
        severity: breaking when that side is one the file's role protects.
    """

    code: str
    pointer: str
    old: Any
    new: Any
    breaks: Side
    severity: ChangeSeverity

    @property
    def kind(self) -> ChangeKind:
        """The kind of change, with its summary."""
        return CHANGE_KINDS[self.code]

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object; ``old`` or ``new`` is left out when absent."""
        fields = {"code": self.code, "pointer": self.pointer, "old": self.old, "new": self.new,
                  "breaks": str(self.breaks), "severity": str(self.severity)}  # fmt: skip
        return {key: value for key, value in fields.items() if value is not ABSENT}


def diff_schemas(
    old: Any,
    new: Any,
    *,
    role: Role = Role.INPUT,
    old_documents: Mapping[str, Any] | None = None,
    new_documents: Mapping[str, Any] | None = None,
) -> tuple[SchemaChange, ...]:
    """Every change from ``old`` to ``new``, classified for a file of ``role``.

    ``old_documents`` and ``new_documents`` map URIs to the documents a ``$ref`` may name (a
    repository's `Repository.documents`); references within each schema always resolve.
    """
    return _changes(_root(old, _PLACEHOLDER_OLD), _root(new, _PLACEHOLDER_NEW), role,
                    old_documents or {}, new_documents or {})  # fmt: skip


_PLACEHOLDER_OLD = "https://schemawire.invalid/old.json"
_PLACEHOLDER_NEW = "https://schemawire.invalid/new.json"


def _changes(
    old: _At, new: _At, role: Role, old_documents: Mapping[str, Any],
    new_documents: Mapping[str, Any],
) -> tuple[SchemaChange, ...]:  # fmt: skip
    walk = _Walk(_Resolver({**old_documents, old.base: old.schema}),
                 _Resolver({**new_documents, new.base: new.schema}))  # fmt: skip
    walk.compare(old, new, "")
    walk.compare_definitions(old, new)
    return tuple(_classified(code, pointer, before, after, role)
                 for code, pointer, before, after in walk.found)  # fmt: skip


def _classified(code: str, pointer: str, old: Any, new: Any, role: Role) -> SchemaChange:
    kind = CHANGE_KINDS[code]
    return SchemaChange(code, pointer, old, new, kind.breaks, _severity(kind, role))


def _severity(kind: ChangeKind, role: Role) -> ChangeSeverity:
    if kind.annotation:
        return ChangeSeverity.ANNOTATION
    sides = {Side.PRODUCERS, Side.CONSUMERS} if kind.breaks is Side.BOTH else {kind.breaks}
    return ChangeSeverity.BREAKING if sides & role.guarded else ChangeSeverity.COMPATIBLE


# --- walking two schemas side by side ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _At:
    """One side of the comparison: a subschema and the base URI its references resolve against."""

    schema: Any
    base: str

    def get(self, keyword: str) -> Any:
        return self.schema.get(keyword, ABSENT) if isinstance(self.schema, dict) else ABSENT

    def sub(self, schema: Any) -> _At:
        identifier = schema.get("$id") if isinstance(schema, dict) else None
        if isinstance(identifier, str) and not identifier.startswith("#"):
            try:
                return _At(schema, urldefrag(urljoin(self.base, identifier)).url)
            except ValueError:  # not a URI: the repository rules report it
                pass
        return _At(schema, self.base)

    def without(self, keyword: str) -> _At:
        return _At({k: v for k, v in self.schema.items() if k != keyword}, self.base)


def _root(document: Any, placeholder: str) -> _At:
    return _At(document, placeholder).sub(document)


class _Resolver:
    """What a ``$ref`` names among some documents, by URI and JSON Pointer or anchor; nothing is
    ever fetched."""

    def __init__(self, documents: Mapping[str, Any]) -> None:
        self._resources: dict[str, Any] = {}
        self._anchors: dict[tuple[str, str], Any] = {}
        for uri, document in documents.items():
            self._index(uri, document)

    def _index(self, uri: str, document: Any) -> None:
        self._resources.setdefault(uri, document)
        declared = document.get("$schema") if isinstance(document, dict) else None
        dialect = dialect_named(declared if isinstance(declared, str) else None) or DEFAULT_DIALECT
        for site in iter_sites(document, dialect, uri):
            if isinstance(site.schema, dict):
                if isinstance(site.schema.get("$id"), str):
                    self._resources.setdefault(site.base_uri, site.schema)
                anchor = site.schema.get("$anchor")
                if isinstance(anchor, str):
                    self._anchors.setdefault((site.base_uri, anchor), site.schema)

    def target(self, at: _At) -> _At | None:
        """What the ``$ref`` of ``at`` names, or None when it names nothing known."""
        try:
            url, fragment = urldefrag(urljoin(at.base, at.schema["$ref"]))
        except (TypeError, ValueError):
            return None
        resource, fragment = self._resources.get(url), unquote(fragment)
        if resource is None:
            return None
        if not fragment.startswith("/") and fragment:
            found = self._anchors.get((url, fragment))
            return None if found is None else _At(found, url)
        try:
            return _At(resource, url).sub(resolve(resource, fragment))
        except KeyError:
            return None


_Found = tuple[str, str, Any, Any]


class _Walk:
    """Compares two schemas keyword by keyword and records what differs, subschema by subschema."""

    def __init__(self, old: _Resolver, new: _Resolver) -> None:
        self.old_refs, self.new_refs = old, new
        self.found: list[_Found] = []
        self._followed: set[tuple[int, int]] = set()
        self._reached: set[int] = set()

    def emit(self, code: str, pointer: str, old: Any = ABSENT, new: Any = ABSENT) -> None:
        self.found.append((code, pointer, old, new))

    def annotations_only(self, pairs: Iterable[tuple[_At, _At, str]]) -> bool:
        """Compare each pair apart; when only annotations differ, record them and say so, else
        record nothing (for keywords whose changes cannot be read as a narrowing or widening)."""
        fork = _Walk(self.old_refs, self.new_refs)
        fork._followed, fork._reached = self._followed, self._reached
        for old, new, pointer in pairs:
            fork.compare(old, new, pointer)
        if all(CHANGE_KINDS[code].annotation for code, *_ in fork.found):
            self.found.extend(fork.found)
            return True
        return False

    def compare(self, old: _At, new: _At, pointer: str) -> None:
        """Record how ``new`` differs from ``old``; both sit at ``pointer``."""
        if old.schema is False or new.schema is False:
            if old.schema is not new.schema:
                code = "FALSE_SCHEMA_ADDED" if new.schema is False else "FALSE_SCHEMA_REMOVED"
                self.emit(code, pointer, old.schema, new.schema)
            return
        old, new = _as_object(old), _as_object(new)
        if "$ref" in old.schema or "$ref" in new.schema:
            self._through_references(old, new, pointer)
            return
        old, new = _aligned_unions(old, new)
        for keywords, comparer in _COMPARERS:
            if any(k in old.schema or k in new.schema for k in keywords):
                comparer(self, old, new, pointer)
        _compare_annotations(self, old, new, pointer)

    def _through_references(self, old: _At, new: _At, pointer: str) -> None:
        old_target = self.old_refs.target(old) if "$ref" in old.schema else None
        new_target = self.new_refs.target(new) if "$ref" in new.schema else None
        if old_target is not None and new_target is not None:
            self._follow(old_target, new_target, join(pointer, "$ref"))
        elif old_target is not None and "$ref" not in new.schema:
            self.compare(_inlined(old, old_target), new, pointer)
            return
        elif new_target is not None and "$ref" not in old.schema:
            self.compare(old, _inlined(new, new_target), pointer)
            return
        elif old.get("$ref") != new.get("$ref") or (old_target is None) != (new_target is None):
            self.emit("REF_CHANGED", join(pointer, "$ref"), old.get("$ref"), new.get("$ref"))
        self.compare(old.without("$ref"), new.without("$ref"), pointer)

    def _follow(self, old: _At, new: _At, pointer: str) -> None:
        """Compare two targets once: a definition used in several places (or by itself) is
        reported where it is first reached."""
        pair = (id(old.schema), id(new.schema))
        if pair in self._followed:
            return
        self._followed.add(pair)
        self._reached.update(pair)
        self.compare(old, new, pointer)

    def compare_definitions(self, old: _At, new: _At) -> None:
        """Compare the root ``$defs`` (and draft-07 ``definitions``) that no reference reached:
        what a shared file offers to other files."""
        for keyword in ("$defs", "definitions"):
            before, after = _mapping(old, keyword), _mapping(new, keyword)
            for name in _union(before, after):
                where = join("", keyword, name)
                if name not in before:
                    self.emit("DEFINITION_ADDED", where, new=after[name])
                elif name not in after:
                    self.emit("DEFINITION_REMOVED", where, old=before[name])
                elif not {id(before[name]), id(after[name])} & self._reached:
                    self._follow(old.sub(before[name]), new.sub(after[name]), where)


def _as_object(at: _At) -> _At:
    """``true`` as the empty schema; anything that is not a schema object as the empty schema."""
    return at if isinstance(at.schema, dict) else _At({}, at.base)


def _inlined(at: _At, target: _At) -> _At:
    """A schema with a ``$ref`` beside other keywords, read as one schema: the target's keywords
    and its own (best effort: the two apply together)."""
    if target.schema is False:
        return target
    merged = dict(target.schema) if isinstance(target.schema, dict) else {}
    merged.update((k, v) for k, v in at.schema.items() if k != "$ref")
    return _At(merged, target.base)


def _aligned_unions(old: _At, new: _At) -> tuple[_At, _At]:
    """A schema compared with a pure ``anyOf`` or ``oneOf`` (nothing else but annotations) is
    read as a union of one branch, so that ``string`` becoming ``anyOf: [string, null]`` is one
    alternative added, not a new type and a new combinator."""
    for keyword in ("anyOf", "oneOf"):
        if _pure_union(new, keyword) and _plain(old):
            return _as_union(old, keyword), new
        if _pure_union(old, keyword) and _plain(new):
            return old, _as_union(new, keyword)
    return old, new


def _validating(at: _At) -> dict[str, Any]:
    """The keywords of ``at`` that validate: no annotations, identifiers or definitions."""
    return {k: v for k, v in at.schema.items() if k not in _INERT and not k.startswith("x-")}


def _pure_union(at: _At, keyword: str) -> bool:
    return isinstance(at.get(keyword), list) and _validating(at).keys() == {keyword}


def _plain(at: _At) -> bool:
    """Whether ``at`` validates something, without a combinator."""
    keywords = _validating(at).keys()
    return bool(keywords) and not keywords & {"anyOf", "oneOf", "allOf"}


def _as_union(at: _At, keyword: str) -> _At:
    validating = _validating(at)
    rest = {k: v for k, v in at.schema.items() if k not in validating}
    return _At({**rest, keyword: [validating]}, at.base)


_INERT = frozenset({"title", "description", "default", "examples", "$comment", "deprecated",
                    "readOnly", "writeOnly", "$id", "$schema", "$anchor", "$dynamicAnchor",
                    "$defs", "definitions", "x-version"})  # fmt: skip


# --- the comparers: one per group of keywords -----------------------------------------------------

_Comparer = Callable[[_Walk, _At, _At, str], None]


def _compare_type(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after = _types(old.get("type")), _types(new.get("type"))
    if before != after:
        code = "TYPE_NARROWED" if after < before else "TYPE_WIDENED" if after > before else None
        walk.emit(code or "TYPE_CHANGED", join(pointer, "type"), old.get("type"), new.get("type"))


_ANY_TYPE = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


def _types(value: Any) -> frozenset[str]:
    """The types a ``type`` value accepts; a number type includes integers."""
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if names is None:
        return _ANY_TYPE
    accepted = {name for name in names if isinstance(name, str)}
    return frozenset(accepted | ({"integer"} if "number" in accepted else set()))


def _compare_enum(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after, where = old.get("enum"), new.get("enum"), join(pointer, "enum")
    if not isinstance(before, list) or not isinstance(after, list):
        _compare_value(walk, where, before, after, ("ENUM_ADDED", "ENUM_REMOVED", "ENUM_ADDED"))
        return
    kept_before, kept_after = _by_value(before), _by_value(after)
    for key, value in kept_before.items():
        if key not in kept_after:
            walk.emit("ENUM_VALUE_REMOVED", where, old=value)
    for key, value in kept_after.items():
        if key not in kept_before:
            walk.emit("ENUM_VALUE_ADDED", where, new=value)


def _by_value(values: list[Any]) -> dict[str, Any]:
    return {_canonical(value): value for value in values}


def _value_comparer(keyword: str, codes: tuple[str, str, str]) -> _Comparer:
    """A comparer for a keyword whose value is compared as a whole: added, removed or changed."""

    def compare(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
        _compare_value(walk, join(pointer, keyword), old.get(keyword), new.get(keyword), codes)

    return compare


def _compare_value(
    walk: _Walk, where: str, before: Any, after: Any, codes: tuple[str, str, str]
) -> None:
    if _canonical(before) == _canonical(after):
        return
    added, removed, changed = codes
    code = added if before is ABSENT else removed if after is ABSENT else changed
    walk.emit(code, where, before, after)


def _compare_dialect(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after = old.get("$schema"), new.get("$schema")
    if _dialect_of(before) != _dialect_of(after) or (
        _dialect_of(before) is None and before != after
    ):
        walk.emit("DIALECT_CHANGED", join(pointer, "$schema"), before, after)


def _dialect_of(value: Any) -> str | None:
    if value is ABSENT:
        return DEFAULT_DIALECT.name
    dialect = dialect_named(value) if isinstance(value, str) else None
    return dialect.name if dialect else None


# Keywords that bound one quantity, and the sign that makes a stricter bound a greater one.
_BOUNDS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("minimum", "exclusiveMinimum"), 1),
    (("maximum", "exclusiveMaximum"), -1),
    (("minLength",), 1),
    (("maxLength",), -1),
    (("minItems",), 1),
    (("maxItems",), -1),
    (("minProperties",), 1),
    (("maxProperties",), -1),
    (("minContains",), 1),
    (("maxContains",), -1),
)
# A lower count at or under its default bounds nothing.
_NO_BOUND = {"minLength": 0, "minItems": 0, "minProperties": 0, "minContains": 1}


@dataclass(frozen=True, slots=True)
class _Bound:
    keyword: str
    value: Any
    strictness: tuple[Any, int]  # greater accepts less


def _compare_bounds(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    for keywords, sign in _BOUNDS:
        before, after = _tightest(old, keywords, sign), _tightest(new, keywords, sign)
        if before is not None and after is not None and before.strictness != after.strictness:
            tighter = after.strictness > before.strictness
            _report_bound(walk, join(pointer, after.keyword), before, after, tighter=tighter)
        elif before is None and after is not None:
            _report_bound(walk, join(pointer, after.keyword), before, after, tighter=True)
        elif after is None and before is not None:
            _report_bound(walk, join(pointer, before.keyword), before, after, tighter=False)


def _tightest(at: _At, keywords: tuple[str, ...], sign: int) -> _Bound | None:
    bounds = [
        _Bound(keyword, value, (sign * value, int(keyword.startswith("exclusive"))))
        for keyword in keywords
        if _is_number(value := at.get(keyword)) and value != _NO_BOUND.get(keyword)
    ]
    return max(bounds, key=lambda bound: bound.strictness, default=None)


def _report_bound(
    walk: _Walk, where: str, before: _Bound | None, after: _Bound | None, *, tighter: bool
) -> None:
    """Show plain numbers, or ``{keyword: value}`` when the keyword changed (a ``minimum`` that
    became an ``exclusiveMinimum``)."""
    if before is not None and after is not None and before.keyword != after.keyword:
        old, new = {before.keyword: before.value}, {after.keyword: after.value}
    else:
        old, new = (before.value if before else ABSENT), (after.value if after else ABSENT)
    walk.emit("BOUND_TIGHTENED" if tighter else "BOUND_LOOSENED", where, old, new)


def _compare_multiple_of(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after = _fraction(old.get("multipleOf")), _fraction(new.get("multipleOf"))
    if before == after:
        return
    if before is None or (after is not None and (after / before).denominator == 1):
        code = "BOUND_TIGHTENED"  # every multiple of the new step is a multiple of the old one
    elif after is None or (before / after).denominator == 1:
        code = "BOUND_LOOSENED"
    else:
        code = "BOUND_CHANGED"
    walk.emit(code, join(pointer, "multipleOf"), old.get("multipleOf"), new.get("multipleOf"))


def _fraction(value: Any) -> Fraction | None:
    return Fraction(str(value)) if _is_number(value) and value > 0 else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare_unique_items(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after = old.get("uniqueItems") is True, new.get("uniqueItems") is True
    if before != after:
        code = "UNIQUE_ITEMS_ADDED" if after else "UNIQUE_ITEMS_REMOVED"
        where = join(pointer, "uniqueItems")
        walk.emit(code, where, old.get("uniqueItems"), new.get("uniqueItems"))


def _compare_required(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after = _names(old.get("required")), _names(new.get("required"))
    where = join(pointer, "required")
    for name in before:
        if name not in after:
            walk.emit("REQUIRED_REMOVED", where, old=name)
    for name in after:
        if name not in before:
            walk.emit("REQUIRED_ADDED", where, new=name)


def _names(value: Any) -> list[str]:
    names = [name for name in value if isinstance(name, str)] if isinstance(value, list) else []
    return list(dict.fromkeys(names))


def _members_comparer(keyword: str) -> _Comparer:
    """A comparer for ``properties`` or ``patternProperties``: members present on both sides
    are compared; one present on a side only is compared with what the other side's object
    applies to it instead (``additionalProperties``, false when the object is closed)."""

    def compare(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
        before, after = _mapping(old, keyword), _mapping(new, keyword)
        for name in _union(before, after):
            where = join(pointer, keyword, name)
            if name in before and name in after:
                walk.compare(old.sub(before[name]), new.sub(after[name]), where)
            elif name in after:
                _member_added(walk, old.sub(_fallback(old, keyword, name)), new.sub(after[name]),
                              where)  # fmt: skip
            else:
                _member_removed(walk, old.sub(before[name]),
                                new.sub(_fallback(new, keyword, name)), where)  # fmt: skip

    return compare


def _member_added(walk: _Walk, instead: _At, added: _At, where: str) -> None:
    if instead.schema is False:
        walk.emit("PROPERTY_ADDED", where, new=added.schema)
        return
    walk.emit("PROPERTY_DECLARED", where, new=added.schema)
    walk.compare(instead, added, where)


def _member_removed(walk: _Walk, removed: _At, instead: _At, where: str) -> None:
    if instead.schema is False:
        walk.emit("PROPERTY_REMOVED", where, old=removed.schema)
        return
    walk.emit("PROPERTY_UNDECLARED", where, old=removed.schema)
    walk.compare(removed, instead, where)


def _fallback(at: _At, keyword: str, name: str) -> Any:
    """The schema ``at`` applies to a property ``name`` it does not list under ``keyword``."""
    if keyword == "properties":
        for pattern, schema in _mapping(at, "patternProperties").items():
            try:
                if re.search(pattern, name):
                    return schema
            except re.error:  # ECMA-262 syntax Python does not read: best effort
                continue
    for closing in ("additionalProperties", "unevaluatedProperties"):
        if closing in at.schema:
            return at.schema[closing]
    return True


def _closing_comparer(keyword: str) -> _Comparer:
    """A comparer for ``additionalProperties`` or ``unevaluatedProperties``."""

    def compare(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
        before, after = old.schema.get(keyword, True), new.schema.get(keyword, True)
        where = join(pointer, keyword)
        if (before is False) == (after is False):
            walk.compare(old.sub(before), new.sub(after), where)
        else:
            closed = after is False
            code = "ADDITIONAL_PROPERTIES_CLOSED" if closed else "ADDITIONAL_PROPERTIES_OPENED"
            walk.emit(code, where, old.get(keyword), new.get(keyword))

    return compare


def _subschema_comparer(keyword: str) -> _Comparer:
    """A comparer for a keyword holding one subschema that accepts anything when absent."""

    def compare(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
        before, after = old.schema.get(keyword, True), new.schema.get(keyword, True)
        walk.compare(old.sub(before), new.sub(after), join(pointer, keyword))

    return compare


def _compare_items(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    """``prefixItems`` (or draft-07 ``items`` as a list) position by position, then the schema
    of the items after them (``items``, or draft-07 ``additionalItems``)."""
    before, after = _prefix(old), _prefix(new)
    (_, old_rest), (new_rest_keyword, new_rest) = _rest(old), _rest(new)
    prefix_keyword = "prefixItems" if "prefixItems" in {*old.schema, *new.schema} else "items"
    for index in range(max(len(before), len(after))):
        old_item = before[index] if index < len(before) else old_rest
        new_item = after[index] if index < len(after) else new_rest
        walk.compare(old.sub(old_item), new.sub(new_item), join(pointer, prefix_keyword, index))
    walk.compare(old.sub(old_rest), new.sub(new_rest), join(pointer, new_rest_keyword))


def _prefix(at: _At) -> list[Any]:
    for keyword in ("prefixItems", "items"):
        if isinstance(at.get(keyword), list):
            return list(at.schema[keyword])
    return []


def _rest(at: _At) -> tuple[str, Any]:
    if isinstance(at.get("items"), list):
        return "additionalItems", at.schema.get("additionalItems", True)
    return "items", at.schema.get("items", True)


def _compare_contains(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after, where = old.get("contains"), new.get("contains"), join(pointer, "contains")
    if before is ABSENT or after is ABSENT:
        codes = ("CONTAINS_ADDED", "CONTAINS_REMOVED", "CONTAINS_ADDED")
        _compare_value(walk, where, before, after, codes)
    else:
        walk.compare(old.sub(before), new.sub(after), where)


def _compare_alternatives(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    for keyword in ("anyOf", "oneOf"):
        before, after, where = old.get(keyword), new.get(keyword), join(pointer, keyword)
        if isinstance(before, list) and isinstance(after, list):
            _compare_branches(walk, (old, new), where, (before, after), _ANY_OF_CODES)
        elif isinstance(before, list) or isinstance(after, list):
            _compare_value(walk, where, before, after, _COMBINATOR_CODES)


_ANY_OF_CODES = ("ANY_OF_BRANCH_ADDED", "ANY_OF_BRANCH_REMOVED")
_ALL_OF_CODES = ("ALL_OF_BRANCH_ADDED", "ALL_OF_BRANCH_REMOVED")
_COMBINATOR_CODES = ("COMBINATOR_ADDED", "COMBINATOR_REMOVED", "COMBINATOR_ADDED")


def _compare_all_of(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after = old.get("allOf"), new.get("allOf")
    lists = (before if isinstance(before, list) else [], after if isinstance(after, list) else [])
    _compare_branches(walk, (old, new), join(pointer, "allOf"), lists, _ALL_OF_CODES)


def _compare_branches(
    walk: _Walk, sides: tuple[_At, _At], where: str, branches: tuple[list[Any], list[Any]],
    codes: tuple[str, str],
) -> None:  # fmt: skip
    (old, new), (before, after) = sides, branches
    pairs, removed, added = _matched(before, after)
    for i, j in pairs:
        walk.compare(old.sub(before[i]), new.sub(after[j]), join(where, j))
    for i in removed:
        walk.emit(codes[1], join(where, i), old=before[i])
    for j in added:
        walk.emit(codes[0], join(where, j), new=after[j])


_Pairing = tuple[list[tuple[int, int]], list[int], list[int]]


def _matched(before: list[Any], after: list[Any]) -> _Pairing:
    """Branches paired as a set: equal ones first, then ones equal but for annotations, then
    ones of the same shape (type, ``$ref``, ``const``) in order; the rest were removed or
    added."""
    pairs: list[tuple[int, int]] = []
    left, right = list(range(len(before))), list(range(len(after)))
    for key in (_canonical, _essence, _shape):
        for i in list(left):
            j = next((j for j in right if key(after[j]) == key(before[i])), None)
            if j is not None:
                pairs.append((i, j))
                left.remove(i)
                right.remove(j)
    return sorted(pairs, key=lambda pair: pair[1]), left, right


def _essence(branch: Any) -> str:
    """A branch without annotations at any depth (``true`` as ``{}``), as text: a key for
    pairing only, which may also strip a value that looks like one (in an ``enum``)."""
    return _canonical(_without_annotations(branch))


def _without_annotations(value: Any) -> Any:
    if value is True:
        return {}
    if isinstance(value, dict):
        return {k: _without_annotations(v) for k, v in value.items()
                if k not in _INERT and not k.startswith("x-")}  # fmt: skip
    if isinstance(value, list):
        return [_without_annotations(item) for item in value]
    return value


def _shape(branch: Any) -> str:
    if not isinstance(branch, dict):
        return _essence(branch)
    return _canonical([branch.get(k) for k in ("type", "$ref")] + ["const" in branch])


def _compare_not(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before, after, where = old.get("not"), new.get("not"), join(pointer, "not")
    if before is ABSENT or after is ABSENT:
        _compare_value(walk, where, before, after, ("NOT_ADDED", "NOT_REMOVED", "NOT_ADDED"))
    elif not walk.annotations_only([(old.sub(before), new.sub(after), where)]):
        walk.emit("NOT_CHANGED", where, before, after)


def _compare_conditional(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    before = {k: v for k, v in old.schema.items() if k in _CONDITIONAL}
    after = {k: v for k, v in new.schema.items() if k in _CONDITIONAL}
    pairs = [(old.sub(before.get(k, True)), new.sub(after.get(k, True)), join(pointer, k))
             for k in _union(before, after)]  # fmt: skip
    if before.keys() != after.keys() or not walk.annotations_only(pairs):
        walk.emit("CONDITIONAL_CHANGED", join(pointer, "if"), before or ABSENT, after or ABSENT)


_CONDITIONAL = frozenset({"if", "then", "else"})


def _compare_dependencies(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
        before, after = _mapping(old, keyword), _mapping(new, keyword)
        for name in _union(before, after):
            where = join(pointer, keyword, name)
            old_value, new_value = before.get(name, ABSENT), after.get(name, ABSENT)
            if isinstance(old_value, list) or isinstance(new_value, list):
                _compare_dependent_names(walk, where, _names(old_value), _names(new_value))
            elif old_value is ABSENT or new_value is ABSENT:
                codes = ("DEPENDENCY_ADDED", "DEPENDENCY_REMOVED", "DEPENDENCY_ADDED")
                _compare_value(walk, where, old_value, new_value, codes)
            else:
                walk.compare(old.sub(old_value), new.sub(new_value), where)


def _compare_dependent_names(walk: _Walk, where: str, before: list[str], after: list[str]) -> None:
    for name in before:
        if name not in after:
            walk.emit("DEPENDENCY_REMOVED", where, old=name)
    for name in after:
        if name not in before:
            walk.emit("DEPENDENCY_ADDED", where, new=name)


def _compare_annotations(walk: _Walk, old: _At, new: _At, pointer: str) -> None:
    """Every other keyword: annotations, extensions and unknown keywords, which validators
    ignore."""
    for keyword in _union(old.schema, new.schema):
        if keyword in _HANDLED:
            continue
        before, after = old.get(keyword), new.get(keyword)
        if _canonical(before) != _canonical(after):
            walk.emit("ANNOTATION_CHANGED", join(pointer, keyword), before, after)


_ID_CODES = ("ID_CHANGED", "ID_CHANGED", "ID_CHANGED")
_COMPARERS: tuple[tuple[frozenset[str], _Comparer], ...] = tuple(
    (frozenset(keywords), comparer)
    for keywords, comparer in (
        (("$schema",), _compare_dialect),
        (("$id",), _value_comparer("$id", _ID_CODES)),
        (("$anchor",), _value_comparer("$anchor", _ID_CODES)),
        (("$dynamicAnchor",), _value_comparer("$dynamicAnchor", _ID_CODES)),
        (("$dynamicRef",), _value_comparer("$dynamicRef", ("REF_CHANGED",) * 3)),
        (("type",), _compare_type),
        (("enum",), _compare_enum),
        (("const",), _value_comparer("const", ("CONST_ADDED", "CONST_REMOVED", "CONST_CHANGED"))),
        (("pattern",), _value_comparer("pattern", ("PATTERN_ADDED", "PATTERN_REMOVED",
                                                   "PATTERN_CHANGED"))),
        (("format",), _value_comparer("format", ("FORMAT_ADDED", "FORMAT_REMOVED",
                                                 "FORMAT_CHANGED"))),
        (tuple(k for keywords, _ in _BOUNDS for k in keywords), _compare_bounds),
        (("multipleOf",), _compare_multiple_of),
        (("required",), _compare_required),
        (("properties",), _members_comparer("properties")),
        (("patternProperties",), _members_comparer("patternProperties")),
        (("additionalProperties",), _closing_comparer("additionalProperties")),
        (("unevaluatedProperties",), _closing_comparer("unevaluatedProperties")),
        (("propertyNames",), _subschema_comparer("propertyNames")),
        (("prefixItems", "items", "additionalItems"), _compare_items),
        (("unevaluatedItems",), _subschema_comparer("unevaluatedItems")),
        (("contains",), _compare_contains),
        (("uniqueItems",), _compare_unique_items),
        (("anyOf", "oneOf"), _compare_alternatives),
        (("allOf",), _compare_all_of),
        (("not",), _compare_not),
        (tuple(_CONDITIONAL), _compare_conditional),
        (("dependentRequired", "dependentSchemas", "dependencies"), _compare_dependencies),
    )
)  # fmt: skip
# Keywords that are no change to the schema itself: the version is checked apart, definitions
# are compared where they are used (or by `compare_definitions`), references are followed.
_HANDLED = frozenset().union(*(keywords for keywords, _ in _COMPARERS)) | {
    "x-version", "$defs", "definitions", "$ref",
}  # fmt: skip


def _mapping(at: _At, keyword: str) -> dict[str, Any]:
    value = at.get(keyword)
    return value if isinstance(value, dict) else {}


def _union(before: Iterable[str], after: Iterable[str]) -> list[str]:
    """The keys of both, in the order of ``before`` and then of ``after``."""
    return list(dict.fromkeys([*before, *after]))


def _canonical(value: Any) -> str:
    """One text for JSON values that are equal (``1`` and ``1.0``; key order does not count)."""
    if value is ABSENT:
        return "<absent>"
    return json.dumps(_normalised(value), sort_keys=True, ensure_ascii=False)


def _normalised(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _normalised(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalised(item) for item in value]
    return value


# --- files, repositories, versions ---------------------------------------------------------------


class FileStatus(StrEnum):
    """How a schema file changed as a whole."""

    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    UNREADABLE = "unreadable"  # one side is not a usable schema: nothing compared


@dataclass(frozen=True, slots=True)
class SchemaDiff:
    """How one schema file changed.

    Attributes:
        file: its path, relative to the repository root (or as given).
        role: what it describes, which decides which changes are breaking.
        status: added, removed, changed, unchanged or unreadable.
        changes: every change, in document order.
        old_version: its ``x-version`` before, if it had one.
        new_version: its ``x-version`` after, if it has one.
    """

    file: str
    role: Role
    status: FileStatus
    changes: tuple[SchemaChange, ...] = ()
    old_version: str | None = None
    new_version: str | None = None

    def count(self, severity: ChangeSeverity) -> int:
        """How many changes have ``severity``."""
        return sum(1 for change in self.changes if change.severity is severity)

    @property
    def breaking(self) -> bool:
        """Whether a change breaks a side the file's role protects."""
        return self.count(ChangeSeverity.BREAKING) > 0

    @property
    def bump(self) -> str | None:
        """How ``x-version`` moved: major, minor, patch, prerelease, none or lower (None when
        either version is missing or not semantic)."""
        before, after = _semver(self.old_version), _semver(self.new_version)
        if before is None or after is None:
            return None
        if after < before:
            return "lower"
        moved = [name for name, a, b in zip(_PARTS, before, after, strict=True) if b > a]
        if moved:
            return moved[0]
        return "none" if self.old_version == self.new_version else "prerelease"

    @property
    def version_problem(self) -> tuple[str, str] | None:
        """The rule a changed file's ``x-version`` breaks, with the version it should have:
        SW401 when a breaking change came without a major bump (a minor one before 1.0.0),
        SW402 when another change came without any bump."""
        before, bump = _semver(self.old_version), self.bump
        if self.status is not FileStatus.CHANGED or before is None or bump is None:
            return None
        if self.breaking:
            major = bump == "major" or (before[0] == 0 and bump == "minor")
            return None if major else ("SW401", _next_version(before, "major"))
        if bump in ("none", "lower"):
            part = "patch" if self.count(ChangeSeverity.COMPATIBLE) == 0 else "minor"
            return "SW402", _next_version(before, part)
        return None

    def to_json(self) -> dict[str, Any]:
        """The file's changes as a JSON object (the ``--json`` shape)."""
        problem = self.version_problem
        version = {"old": self.old_version, "new": self.new_version, "bump": self.bump,
                   "wanted": problem[1] if problem else None}  # fmt: skip
        return {
            "file": self.file,
            "role": str(self.role),
            "status": str(self.status),
            "x-version": {key: value for key, value in version.items() if value is not None},
            **{str(severity): self.count(severity) for severity in ChangeSeverity},
            "changes": [change.to_json() for change in self.changes],
        }


_PARTS = ("major", "minor", "patch")
_SEMVER_CORE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:[-+]|$)", re.ASCII)


def _semver(version: str | None) -> tuple[int, int, int] | None:
    match = _SEMVER_CORE.match(version) if isinstance(version, str) else None
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _next_version(version: tuple[int, int, int], part: str) -> str:
    major, minor, patch = version
    if part == "major" and major > 0:
        return f"{major + 1}.0.0"
    if part in ("major", "minor"):  # before 1.0.0, a minor bump is the breaking one
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


@dataclass(frozen=True, slots=True)
class RepositoryDiff:
    """How the schema files of a repository changed.

    Attributes:
        files: one `SchemaDiff` per file on either side, by path.
        since: the git revision compared with, for `diff_since`.
    """

    files: tuple[SchemaDiff, ...]
    since: str | None = None

    def count(self, severity: ChangeSeverity) -> int:
        """How many changes, in every file, have ``severity``."""
        return sum(file.count(severity) for file in self.files)

    @property
    def breaking(self) -> bool:
        """Whether any file has a breaking change."""
        return any(file.breaking for file in self.files)

    @property
    def changed(self) -> tuple[SchemaDiff, ...]:
        """The files that were added, removed, changed or could not be compared."""
        return tuple(file for file in self.files if file.status is not FileStatus.UNCHANGED)

    def to_json(self) -> dict[str, Any]:
        """The changes as a JSON object (the ``--json`` shape): unchanged files are counted."""
        fields: dict[str, Any] = {"since": self.since} if self.since is not None else {}
        return {
            **fields,
            "breaking": self.breaking,
            "compared": len(self.files),
            "counts": {str(severity): self.count(severity) for severity in ChangeSeverity},
            "files": [file.to_json() for file in self.changed],
        }


def diff_repositories(
    old: Repository, new: Repository, *, since: str | None = None
) -> RepositoryDiff:
    """Every schema file of ``old`` and ``new``, matched by path and compared; references
    resolve within each repository."""
    before, after = {f.relpath: f for f in old.files}, {f.relpath: f for f in new.files}
    files = tuple(_diff_file(before.get(path), after.get(path), old.documents, new.documents)
                  for path in sorted(before.keys() | after.keys()))  # fmt: skip
    return RepositoryDiff(files, since)


def _diff_file(
    old: SchemaFile | None, new: SchemaFile | None, old_documents: Mapping[str, Any],
    new_documents: Mapping[str, Any],
) -> SchemaDiff:  # fmt: skip
    present = new or old
    if present is None:
        raise UsageError("a file to compare is needed on at least one side")
    role = role_of(present)
    versions = (old.version if old else None, new.version if new else None)
    if old is None or new is None:
        code = "SCHEMA_ADDED" if old is None else "SCHEMA_REMOVED"
        change = _classified(code, "", ABSENT, ABSENT, role)
        status = FileStatus.ADDED if old is None else FileStatus.REMOVED
        return SchemaDiff(present.relpath, role, status, (change,), *versions)
    if not (old.usable and new.usable):
        return SchemaDiff(new.relpath, role, FileStatus.UNREADABLE, (), *versions)
    changes = _changes(_At(old.document, old.uri), _At(new.document, new.uri), role,
                       old_documents, new_documents)  # fmt: skip
    status = FileStatus.CHANGED if changes else FileStatus.UNCHANGED
    return SchemaDiff(new.relpath, role, status, changes, *versions)


def diff_files(old: str | Path, new: str | Path, *, role: Role | None = None) -> RepositoryDiff:
    """Two schema files compared. A reference resolves within the repository each file sits
    in; one the old file's repository lacks resolves in the new one's. The role is the new
    file's in its repository, else read from its name (``*.output.json``, a ``handoffs``,
    ``state`` or ``common`` folder), else a tool's input.

    Raises:
        JSONError: a file is not acceptable JSON.
        OSError: a file cannot be read.
        ConfigError: a repository's settings cannot be used.
    """
    old_path, new_path = Path(old), Path(new)
    old_document, old_documents, old_uri, _ = _in_repository(old_path)
    new_document, new_documents, new_uri, new_role = _in_repository(new_path)
    role = role or new_role or _role_from_name(new_path)
    changes = _changes(_At(old_document, old_uri), _At(new_document, new_uri), role,
                       {**new_documents, **old_documents}, new_documents)  # fmt: skip
    status = FileStatus.CHANGED if changes else FileStatus.UNCHANGED
    versions = (_version_of(old_document), _version_of(new_document))
    return RepositoryDiff((SchemaDiff(str(new), role, status, changes, *versions),))


def _in_repository(path: Path) -> tuple[Any, dict[str, Any], str, Role | None]:
    """A schema file's document, the documents of the repository it sits in, its URI, and
    its role there (None when the repository does not hold it)."""
    document = load_file(path)
    repository = Repository.load(path.parent)
    absolute = path.resolve()
    found = repository.find(relpath(repository.root, absolute)) if absolute.is_relative_to(
        repository.root) else None  # fmt: skip
    if found is not None and found.usable:
        return found.document, repository.documents, found.uri, role_of(found)
    uri = _root(document, absolute.as_uri()).base
    return document, repository.documents, uri, None


def _role_from_name(path: Path) -> Role:
    if path.name.endswith(".output.json"):
        return Role.OUTPUT
    return _ROLE_OF_KIND.get(path.parent.name, Role.INPUT)


def _version_of(document: Any) -> str | None:
    version = document.get("x-version") if isinstance(document, dict) else None
    return version if isinstance(version, str) else None


# --- git ------------------------------------------------------------------------------------------

_GIT_TIMEOUT = 60.0


def diff_since(repository: Repository, rev: str) -> RepositoryDiff:
    """Every schema file of ``repository`` compared with the same path at git revision ``rev``
    (the working tree against the commit, as ``git diff rev`` does); files added or removed
    since are listed as such.

    Raises:
        UsageError: git is missing, the repository is not in a git work tree, or ``rev`` names
            no commit.
    """
    with tempfile.TemporaryDirectory(prefix="schemawire-since-") as scratch:
        old = _repository_at(repository, rev, Path(scratch))
        return diff_repositories(old, repository, since=rev)


def _repository_at(repository: Repository, rev: str, scratch: Path) -> Repository:
    """The repository's schema files as they were at ``rev``, written under ``scratch`` and
    loaded with today's settings."""
    top = Path(_git(repository.root, "rev-parse", "--show-toplevel").decode().strip())
    _check_revision(top, rev)
    try:
        prefix = repository.root.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"{repository.root} is not inside the git work tree {top}") from None
    folders = [posixpath.normpath(posixpath.join(prefix, folder))
               for folder in repository.config.kind_dirs().values()]  # fmt: skip
    for path, object_id in _blobs(_git(top, "ls-tree", "-r", "-z", rev, "--", *folders)):
        target = scratch / posixpath.relpath(path, prefix)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_git(top, "cat-file", "blob", object_id))
    return Repository.load(scratch, config=replace(repository.config, root=scratch))


def _check_revision(top: Path, rev: str) -> None:
    if rev.startswith("-"):
        raise UsageError(f"{rev!r} is not a git revision")
    try:
        _git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except UsageError:
        raise UsageError(f"{rev!r} names no commit in {top}") from None


def _blobs(listing: bytes) -> Iterator[tuple[str, str]]:
    """``(path, object id)`` of each JSON file in ``git ls-tree -r -z`` output; links and
    submodules are left out."""
    for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = entry.partition("\t")
        mode, _, rest = meta.partition(" ")
        kind, _, object_id = rest.partition(" ")
        if kind == "blob" and mode in ("100644", "100755") and path.endswith(".json"):
            yield path, object_id


def _git(cwd: Path, *args: str) -> bytes:
    command = ["git", "-C", str(cwd), *args]
    try:
        done = subprocess.run(command, capture_output=True, timeout=_GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise UsageError("git is not installed; --since reads the older schemas with it") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"git {args[0]} did not finish in {_GIT_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]} failed: {said[-1] if said else done.returncode}")
    return done.stdout


# --- findings for `schemawire check --since` -----------------------------------------------------

_SHOWN = 3


def version_findings(diff: RepositoryDiff) -> Iterator[Finding]:
    """SW401 for each file with a breaking change but no major ``x-version`` bump, SW402 for
    each file with another change but the same ``x-version``; both at the ``x-version``."""
    since = f" since {diff.since}" if diff.since else ""
    for file in diff.files:
        problem = file.version_problem
        if problem is None:
            continue
        rule_id, wanted = problem
        hint = f'set "x-version": "{wanted}"'
        if rule_id == "SW401":
            message = (f"breaking{since} for {file.role.parties(_broken_side(file))}: "
                       f"{_listed(file)}; x-version {_moved(file)}")  # fmt: skip
            hint += ", or undo the change"
            yield Finding(rule(rule_id), file.file, "/x-version", message, hint=hint)
        else:
            counts = ", ".join(f"{file.count(s)} {s}" for s in ChangeSeverity if file.count(s))
            message = f"changed{since} ({counts}), but x-version {_moved(file)}"
            yield Finding(rule(rule_id), file.file, "/x-version", message, hint=hint)


def _broken_side(file: SchemaDiff) -> Side:
    sides = {c.breaks for c in file.changes if c.severity is ChangeSeverity.BREAKING}
    return sides.pop() if len(sides) == 1 else Side.BOTH


def _listed(file: SchemaDiff) -> str:
    breaking = [c for c in file.changes if c.severity is ChangeSeverity.BREAKING]
    shown = ", ".join(f"{c.code} at {c.pointer or '/'}" for c in breaking[:_SHOWN])
    return shown + (f" and {len(breaking) - _SHOWN} more" if len(breaking) > _SHOWN else "")


def _moved(file: SchemaDiff) -> str:
    if file.old_version == file.new_version:
        return f"is still {file.old_version}"
    return f"went from {file.old_version} to {file.new_version}"
