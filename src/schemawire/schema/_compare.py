"""The structural comparison behind `schemawire.schema.diff`: the comparers, one per keyword.

This module owns the comparers: what differs between two schemas, not what that means; the
walk that carries them (references, unions, definitions) is `schemawire.schema._side_by_side`.
`differences` compares subschema by subschema, keyword by keyword (a table of comparers,
one per group of keywords), through ``$ref`` within a document and into the other documents
given (a repository's, by URI; nothing is fetched); a ``$defs`` entry no reference reached is
compared on its own. ``anyOf``, ``oneOf`` and ``allOf`` are compared as sets of branches, best
effort; a ``not`` or ``if``/``then``/``else`` that differs in more than annotations is one
change as a whole.

Each difference is found as ``(code, pointer, old, new)``: a code of
`schemawire.schema.diff.CHANGE_KINDS`, where it is from the root (a ``$ref`` followed is a
``$ref`` token), and the values before and after (`ABSENT` for none). Which party a code breaks,
and whether that matters for a file's role, is `schemawire.schema.diff`'s to say: it tells the
walk only which codes change nothing but annotations, and classifies what comes back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from schemawire._json import canonical
from schemawire._pointer import join
from schemawire.schema._side_by_side import (
    ABSENT,
    INERT,
    At,
    Comparer,
    Comparers,
    Found,
    Resolver,
    Walk,
    mapping_at,
    union_keys,
)
from schemawire.schema.dialect import DEFAULT_DIALECT, dialect_named

__all__ = ["differences"]


def differences(
    old: At,
    new: At,
    old_documents: Mapping[str, Any],
    new_documents: Mapping[str, Any],
    is_annotation: Callable[[str], bool],
) -> tuple[Found, ...]:
    """Every difference from ``old`` to ``new``, in document order.

    ``old_documents`` and ``new_documents`` map URIs to the documents a ``$ref`` on each side
    may name; ``old`` and ``new`` themselves are always among them. ``is_annotation`` says
    which codes change only annotations: a ``not`` or ``if``/``then``/``else`` whose
    subschemas differ only by those is not a change of what it accepts.
    """
    walk = Walk(
        Resolver({**old_documents, old.base: old.schema}),
        Resolver({**new_documents, new.base: new.schema}),
        is_annotation,
        _TABLE,
    )
    walk.compare(old, new, "")
    walk.compare_definitions(old, new)
    return tuple(walk.found)


# --- the comparers: one per group of keywords -----------------------------------------------------


def _compare_type(walk: Walk, old: At, new: At, pointer: str) -> None:
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


def _compare_enum(walk: Walk, old: At, new: At, pointer: str) -> None:
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


def _value_comparer(keyword: str, codes: tuple[str, str, str]) -> Comparer:
    """A comparer for a keyword whose value is compared as a whole: added, removed or changed."""

    def compare(walk: Walk, old: At, new: At, pointer: str) -> None:
        _compare_value(walk, join(pointer, keyword), old.get(keyword), new.get(keyword), codes)

    return compare


def _compare_value(
    walk: Walk, where: str, before: Any, after: Any, codes: tuple[str, str, str]
) -> None:
    if _canonical(before) == _canonical(after):
        return
    added, removed, changed = codes
    code = added if before is ABSENT else removed if after is ABSENT else changed
    walk.emit(code, where, before, after)


def _compare_dialect(walk: Walk, old: At, new: At, pointer: str) -> None:
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


def _compare_bounds(walk: Walk, old: At, new: At, pointer: str) -> None:
    for keywords, sign in _BOUNDS:
        before, after = _tightest(old, keywords, sign), _tightest(new, keywords, sign)
        if before is not None and after is not None and before.strictness != after.strictness:
            tighter = after.strictness > before.strictness
            _report_bound(walk, join(pointer, after.keyword), before, after, tighter=tighter)
        elif before is None and after is not None:
            _report_bound(walk, join(pointer, after.keyword), before, after, tighter=True)
        elif after is None and before is not None:
            _report_bound(walk, join(pointer, before.keyword), before, after, tighter=False)


def _tightest(at: At, keywords: tuple[str, ...], sign: int) -> _Bound | None:
    bounds = [
        _Bound(keyword, value, (sign * value, int(keyword.startswith("exclusive"))))
        for keyword in keywords
        if _is_number(value := at.get(keyword)) and value != _NO_BOUND.get(keyword)
    ]
    return max(bounds, key=lambda bound: bound.strictness, default=None)


def _report_bound(
    walk: Walk, where: str, before: _Bound | None, after: _Bound | None, *, tighter: bool
) -> None:
    """Show plain numbers, or ``{keyword: value}`` when the keyword changed (a ``minimum`` that
    became an ``exclusiveMinimum``)."""
    if before is not None and after is not None and before.keyword != after.keyword:
        old, new = {before.keyword: before.value}, {after.keyword: after.value}
    else:
        old, new = (before.value if before else ABSENT), (after.value if after else ABSENT)
    walk.emit("BOUND_TIGHTENED" if tighter else "BOUND_LOOSENED", where, old, new)


def _compare_multiple_of(walk: Walk, old: At, new: At, pointer: str) -> None:
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


def _compare_unique_items(walk: Walk, old: At, new: At, pointer: str) -> None:
    before, after = old.get("uniqueItems") is True, new.get("uniqueItems") is True
    if before != after:
        code = "UNIQUE_ITEMS_ADDED" if after else "UNIQUE_ITEMS_REMOVED"
        where = join(pointer, "uniqueItems")
        walk.emit(code, where, old.get("uniqueItems"), new.get("uniqueItems"))


def _compare_required(walk: Walk, old: At, new: At, pointer: str) -> None:
    before, after = _names(old.get("required")), _names(new.get("required"))
    where = join(pointer, "required")
    _name_changes(walk, where, before, after, ("REQUIRED_REMOVED", "REQUIRED_ADDED"))


def _names(value: Any) -> list[str]:
    names = [name for name in value if isinstance(name, str)] if isinstance(value, list) else []
    return list(dict.fromkeys(names))


def _members_comparer(keyword: str) -> Comparer:
    """A comparer for ``properties`` or ``patternProperties``: members present on both sides
    are compared; one present on a side only is compared with what the other side's object
    applies to it instead (``additionalProperties``, false when the object is closed)."""

    def compare(walk: Walk, old: At, new: At, pointer: str) -> None:
        before, after = mapping_at(old, keyword), mapping_at(new, keyword)
        for name in union_keys(before, after):
            where = join(pointer, keyword, name)
            if name in before and name in after:
                walk.compare(old.sub(before[name]), new.sub(after[name]), where)
            elif name in after:
                _member_added(
                    walk, old.sub(_fallback(old, keyword, name)), new.sub(after[name]), where
                )
            else:
                _member_removed(
                    walk, old.sub(before[name]), new.sub(_fallback(new, keyword, name)), where
                )

    return compare


def _member_added(walk: Walk, instead: At, added: At, where: str) -> None:
    if instead.schema is False:
        walk.emit("PROPERTY_ADDED", where, new=added.schema)
        return
    walk.emit("PROPERTY_DECLARED", where, new=added.schema)
    walk.compare(instead, added, where)


# The mirror of _member_added: the same steps with the sides and codes swapped.
def _member_removed(walk: Walk, removed: At, instead: At, where: str) -> None:
    if instead.schema is False:
        walk.emit("PROPERTY_REMOVED", where, old=removed.schema)
        return
    walk.emit("PROPERTY_UNDECLARED", where, old=removed.schema)
    walk.compare(removed, instead, where)


def _fallback(at: At, keyword: str, name: str) -> Any:
    """The schema ``at`` applies to a property ``name`` it does not list under ``keyword``."""
    if keyword == "properties":
        for pattern, schema in mapping_at(at, "patternProperties").items():
            try:
                if re.search(pattern, name):
                    return schema
            except re.error:  # ECMA-262 syntax Python does not read: best effort
                continue
    for closing in ("additionalProperties", "unevaluatedProperties"):
        if closing in at.schema:
            return at.schema[closing]
    return True


def _closing_comparer(keyword: str) -> Comparer:
    """A comparer for ``additionalProperties`` or ``unevaluatedProperties``."""

    def compare(walk: Walk, old: At, new: At, pointer: str) -> None:
        before, after = old.schema.get(keyword, True), new.schema.get(keyword, True)
        where = join(pointer, keyword)
        if (before is False) == (after is False):
            walk.compare(old.sub(before), new.sub(after), where)
        else:
            closed = after is False
            code = "ADDITIONAL_PROPERTIES_CLOSED" if closed else "ADDITIONAL_PROPERTIES_OPENED"
            walk.emit(code, where, old.get(keyword), new.get(keyword))

    return compare


def _subschema_comparer(keyword: str) -> Comparer:
    """A comparer for a keyword holding one subschema that accepts anything when absent."""

    def compare(walk: Walk, old: At, new: At, pointer: str) -> None:
        before, after = old.schema.get(keyword, True), new.schema.get(keyword, True)
        walk.compare(old.sub(before), new.sub(after), join(pointer, keyword))

    return compare


def _compare_items(walk: Walk, old: At, new: At, pointer: str) -> None:
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


def _prefix(at: At) -> list[Any]:
    for keyword in ("prefixItems", "items"):
        if isinstance(at.get(keyword), list):
            return list(at.schema[keyword])
    return []


def _rest(at: At) -> tuple[str, Any]:
    if isinstance(at.get("items"), list):
        return "additionalItems", at.schema.get("additionalItems", True)
    return "items", at.schema.get("items", True)


def _compare_contains(walk: Walk, old: At, new: At, pointer: str) -> None:
    before, after, where = old.get("contains"), new.get("contains"), join(pointer, "contains")
    if before is ABSENT or after is ABSENT:
        codes = ("CONTAINS_ADDED", "CONTAINS_REMOVED", "CONTAINS_ADDED")
        _compare_value(walk, where, before, after, codes)
    else:
        walk.compare(old.sub(before), new.sub(after), where)


def _compare_alternatives(walk: Walk, old: At, new: At, pointer: str) -> None:
    for keyword in ("anyOf", "oneOf"):
        before, after, where = old.get(keyword), new.get(keyword), join(pointer, keyword)
        if isinstance(before, list) and isinstance(after, list):
            _compare_branches(walk, (old, new), where, (before, after), _ANY_OF_CODES)
        elif isinstance(before, list) or isinstance(after, list):
            _compare_value(walk, where, before, after, _COMBINATOR_CODES)


_ANY_OF_CODES = ("ANY_OF_BRANCH_ADDED", "ANY_OF_BRANCH_REMOVED")
_ALL_OF_CODES = ("ALL_OF_BRANCH_ADDED", "ALL_OF_BRANCH_REMOVED")
_COMBINATOR_CODES = ("COMBINATOR_ADDED", "COMBINATOR_REMOVED", "COMBINATOR_ADDED")


def _compare_all_of(walk: Walk, old: At, new: At, pointer: str) -> None:
    before, after = old.get("allOf"), new.get("allOf")
    lists = (before if isinstance(before, list) else [], after if isinstance(after, list) else [])
    _compare_branches(walk, (old, new), join(pointer, "allOf"), lists, _ALL_OF_CODES)


def _compare_branches(
    walk: Walk,
    sides: tuple[At, At],
    where: str,
    branches: tuple[list[Any], list[Any]],
    codes: tuple[str, str],
) -> None:
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
        return {
            k: _without_annotations(v)
            for k, v in value.items()
            if k not in INERT and not k.startswith("x-")
        }
    if isinstance(value, list):
        return [_without_annotations(item) for item in value]
    return value


def _shape(branch: Any) -> str:
    if not isinstance(branch, dict):
        return _essence(branch)
    return _canonical([branch.get(k) for k in ("type", "$ref")] + ["const" in branch])


def _compare_not(walk: Walk, old: At, new: At, pointer: str) -> None:
    before, after, where = old.get("not"), new.get("not"), join(pointer, "not")
    if before is ABSENT or after is ABSENT:
        _compare_value(walk, where, before, after, ("NOT_ADDED", "NOT_REMOVED", "NOT_ADDED"))
    elif not walk.annotations_only([(old.sub(before), new.sub(after), where)]):
        walk.emit("NOT_CHANGED", where, before, after)


def _compare_conditional(walk: Walk, old: At, new: At, pointer: str) -> None:
    before = {k: v for k, v in old.schema.items() if k in _CONDITIONAL}
    after = {k: v for k, v in new.schema.items() if k in _CONDITIONAL}
    pairs = [
        (old.sub(before.get(k, True)), new.sub(after.get(k, True)), join(pointer, k))
        for k in union_keys(before, after)
    ]
    if before.keys() != after.keys() or not walk.annotations_only(pairs):
        walk.emit("CONDITIONAL_CHANGED", join(pointer, "if"), before or ABSENT, after or ABSENT)


_CONDITIONAL = frozenset({"if", "then", "else"})


def _compare_dependencies(walk: Walk, old: At, new: At, pointer: str) -> None:
    for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
        before, after = mapping_at(old, keyword), mapping_at(new, keyword)
        for name in union_keys(before, after):
            where = join(pointer, keyword, name)
            old_value, new_value = before.get(name, ABSENT), after.get(name, ABSENT)
            if isinstance(old_value, list) or isinstance(new_value, list):
                _compare_dependent_names(walk, where, _names(old_value), _names(new_value))
            elif old_value is ABSENT or new_value is ABSENT:
                codes = ("DEPENDENCY_ADDED", "DEPENDENCY_REMOVED", "DEPENDENCY_ADDED")
                _compare_value(walk, where, old_value, new_value, codes)
            else:
                walk.compare(old.sub(old_value), new.sub(new_value), where)


def _compare_dependent_names(walk: Walk, where: str, before: list[str], after: list[str]) -> None:
    _name_changes(walk, where, before, after, ("DEPENDENCY_REMOVED", "DEPENDENCY_ADDED"))


def _name_changes(
    walk: Walk, where: str, before: list[str], after: list[str], codes: tuple[str, str]
) -> None:
    """The first of ``codes`` for each name only ``before`` has, the second for each name only
    ``after`` has."""
    removed, added = codes
    for name in before:
        if name not in after:
            walk.emit(removed, where, old=name)
    for name in after:
        if name not in before:
            walk.emit(added, where, new=name)


def _compare_annotations(walk: Walk, old: At, new: At, pointer: str) -> None:
    """Every other keyword: annotations, extensions and unknown keywords, which validators
    ignore."""
    for keyword in union_keys(old.schema, new.schema):
        if keyword in _HANDLED:
            continue
        before, after = old.get(keyword), new.get(keyword)
        if _canonical(before) != _canonical(after):
            walk.emit("ANNOTATION_CHANGED", join(pointer, keyword), before, after)


_ID_CODES = ("ID_CHANGED", "ID_CHANGED", "ID_CHANGED")
_COMPARERS: tuple[tuple[frozenset[str], Comparer], ...] = tuple(
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
        (
            ("pattern",),
            _value_comparer("pattern", ("PATTERN_ADDED", "PATTERN_REMOVED", "PATTERN_CHANGED")),
        ),
        (
            ("format",),
            _value_comparer("format", ("FORMAT_ADDED", "FORMAT_REMOVED", "FORMAT_CHANGED")),
        ),
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
)
# Keywords that are no change to the schema itself: the version is checked apart, definitions
# are compared where they are used (or by `compare_definitions`), references are followed.
_HANDLED = frozenset().union(*(keywords for keywords, _ in _COMPARERS)) | {
    "x-version",
    "$defs",
    "definitions",
    "$ref",
}
_TABLE = Comparers(_COMPARERS, _compare_annotations)


def _canonical(value: Any) -> str:
    """One text for JSON values that are equal (``1`` and ``1.0``; key order does not count)."""
    if value is ABSENT:
        return "<absent>"
    return canonical(value)
