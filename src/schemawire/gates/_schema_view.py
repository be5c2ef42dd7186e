"""What a schema says about each place in a value: which members it requires (kept when a result
is cut to size), which values it marks secret (``x-redact``, ``writeOnly``), which it types
``integer``; and how deeply any value it accepts can nest.

A value may sit under several subschemas at once (``allOf``, the branches of ``anyOf``/``oneOf``,
``$ref``): a place is required or secret if any of them says so. References are followed inside
the schema and into the other documents given (a repository's schemas, by URI).

A walk of a value asks for a parent before its children, so the subschemas of a place are found
from its parent's, which were just found: a few thousand places are remembered, not every place
of every value (a view lives as long as its gate), and the nearest remembered place above is
where the search starts again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from schemawire._json import dumps
from schemawire._pointer import parent, resolve, split

__all__ = ["SchemaView"]

_BRANCHES = ("allOf", "anyOf", "oneOf")
_MAX_REFS = 32  # references followed in a row; a longer chain is a cycle
_MARKS = ("x-redact", "writeOnly")
_REMEMBERED = 4096  # places whose subschemas a view keeps; more are forgotten all at once


@dataclass(frozen=True, slots=True)
class _Located:
    schema: Any
    base: str  # the URI relative references resolve against
    document: Any  # the document the schema sits in, for "#..." references


class SchemaView:
    """A schema, read place by place along a value's pointers."""

    def __init__(self, schema: Any, documents: Mapping[str, Any] | None = None) -> None:
        base = schema.get("$id", "") if isinstance(schema, dict) else ""
        self._root = _Located(schema, base if isinstance(base, str) else "", schema)
        self._documents = documents or {}
        self._targets: dict[tuple[int, str, str], _Located | None] = {}  # as many as the $refs
        self._root_places = tuple(self._expand(self._root))
        self._remembered: dict[str, tuple[_Located, ...]] = {}

    @functools.cached_property
    def has_marks(self) -> bool:
        """Whether any schema here marks a value secret: most do not, and then no place is
        asked."""
        texts = [dumps(self._root.schema, indent=False)]
        texts += [dumps(document, indent=False) for document in self._documents.values()]
        return any(f'"{keyword}"' in text for text in texts for keyword in _MARKS)

    def required(self, pointer: str) -> frozenset[str]:
        """The member names required of the object at ``pointer``."""
        names: set[str] = set()
        for located in self._at(pointer):
            required = located.schema.get("required") if isinstance(located.schema, dict) else None
            if isinstance(required, list):
                names.update(name for name in required if isinstance(name, str))
        return frozenset(names)

    def mark(self, pointer: str) -> str | None:
        """The keyword that marks the value at ``pointer`` secret, else None."""
        if not self.has_marks:
            return None
        for located in self._at(pointer):
            schema = located.schema
            if isinstance(schema, dict):
                for keyword in _MARKS:
                    if schema.get(keyword) is True:
                        return keyword
        return None

    def says_integer(self, pointer: str) -> bool:
        """Whether a subschema at ``pointer`` types its value ``integer``."""
        for located in self._at(pointer):
            declared = located.schema.get("type") if isinstance(located.schema, dict) else None
            if declared == "integer" or (isinstance(declared, list) and "integer" in declared):
                return True
        return False

    @functools.cached_property
    def nesting_bound(self) -> int | None:
        """The most arrays and objects any value the schema accepts can nest (``{"a": []}``
        nests two), or None when the schema sets no bound (a free-form member, an untyped
        value, a recursive reference).

        An upper bound, not always the least: keywords that only narrow what is accepted
        (``not``, ``if``, ``unevaluatedProperties``...) are not read, and a value must pass
        every conjunct (``$ref``, ``allOf``) but only one branch of ``anyOf``/``oneOf``."""
        return self._bound(self._root, frozenset())

    @functools.cached_property
    def _ref_alone(self) -> bool:
        """Whether a ``$ref`` here replaces its siblings (draft 7 and before) rather than
        applying beside them."""
        dialect = self._root.schema.get("$schema") if isinstance(self._root.schema, dict) else None
        return isinstance(dialect, str) and any(f"draft-0{n}" in dialect for n in (4, 6, 7))

    def _bound(self, place: _Located, following: frozenset[str]) -> int | None:
        """`nesting_bound` of the value at ``place``; ``following`` holds the references
        being followed (one met again is a cycle: no bound)."""
        schema = place.schema
        if schema is False:
            return 0  # accepts nothing
        if not isinstance(schema, dict):
            return None
        reference = schema.get("$ref")
        if isinstance(reference, str) and self._ref_alone:
            return self._reference_bound(place, reference, following)
        bounds = [self._own_bound(place, following)]
        if isinstance(reference, str):
            bounds.append(self._reference_bound(place, reference, following))
        for branch in _list(schema.get("allOf")):
            bounds.append(self._bound(_Located(branch, place.base, place.document), following))
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list):
                each = [
                    self._bound(_Located(b, place.base, place.document), following)
                    for b in branches
                ]
                bounds.append(_deepest(each))
        known = [bound for bound in bounds if bound is not None]
        return min(known) if known else None

    def _reference_bound(
        self, place: _Located, reference: str, following: frozenset[str]
    ) -> int | None:
        key = f"{id(place.document)} {place.base} {reference}"
        target = self._resolve(place, reference)
        if target is None or key in following or len(following) > _MAX_REFS:
            return None
        return self._bound(target, following | {key})

    def _own_bound(self, place: _Located, following: frozenset[str]) -> int | None:
        """The bound set by the schema's own ``const``, ``enum`` or ``type`` (with what its
        members and items may be), ignoring its references and branches."""
        schema = place.schema
        if "const" in schema:
            return _nesting(schema["const"])
        if isinstance(schema.get("enum"), list):
            return max((_nesting(value) for value in schema["enum"]), default=0)
        declared = schema.get("type")
        types = declared if isinstance(declared, list) else [declared]
        if not types or not all(isinstance(name, str) for name in types):
            return None  # untyped: any value at all
        bounds = [self._typed_bound(place, name, following) for name in types]
        return _deepest(bounds)

    def _typed_bound(self, place: _Located, name: str, following: frozenset[str]) -> int | None:
        if name == "object":
            members = self._members_schemas(place.schema)
        elif name == "array":
            members = self._items_schemas(place.schema)
        else:
            return 0
        if members is None:
            return None
        bounds = [self._bound(_Located(s, place.base, place.document), following) for s in members]
        deepest = _deepest(bounds)
        return None if deepest is None else 1 + deepest

    @staticmethod
    def _members_schemas(schema: dict[str, Any]) -> list[Any] | None:
        """The schemas an object's members may take, or None when a member may be anything
        (``additionalProperties`` left open)."""
        extra = schema.get("additionalProperties", True)
        if extra is True:
            return None
        properties = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        if not isinstance(properties, dict) or not isinstance(patterns, dict):
            return None
        return [*properties.values(), *patterns.values(), extra]

    @staticmethod
    def _items_schemas(schema: dict[str, Any]) -> list[Any] | None:
        """The schemas an array's items may take, or None when an item may be anything."""
        items = schema.get("items", True)
        prefix = schema.get("prefixItems", [])
        if isinstance(items, list):  # draft 2019-09 and before: items as a tuple
            prefix, items = items, schema.get("additionalItems", True)
        if items is True or not isinstance(prefix, list):
            return None
        return [*prefix, items]

    def _at(self, pointer: str) -> tuple[_Located, ...]:
        """The subschemas at ``pointer``, found from those of the nearest place above it that
        is remembered (its parent, in a walk).

        Raises:
            ValueError: ``pointer`` is not a JSON Pointer.
        """
        if pointer and not pointer.startswith("/"):
            split(pointer)  # raises, saying why
        below: list[str] = []
        at = pointer
        places = self._known(at)
        while places is None:
            below.append(at)
            at = parent(at)
            places = self._known(at)
        for at in reversed(below):
            token = split(at[at.rfind("/") :])[0]
            places = self._step(places, token)
            self._remember(at, places)
        return places

    def _known(self, pointer: str) -> tuple[_Located, ...] | None:
        return self._root_places if pointer == "" else self._remembered.get(pointer)

    def _remember(self, pointer: str, places: tuple[_Located, ...]) -> None:
        if len(self._remembered) >= _REMEMBERED:
            self._remembered.clear()  # the next place starts again from the root: rare
        self._remembered[pointer] = places

    def _step(self, places: tuple[_Located, ...], token: str) -> tuple[_Located, ...]:
        """The subschemas one token below ``places``."""
        children = [child for place in places for child in self._children(place, token)]
        return tuple(expanded for child in children for expanded in self._expand(child))

    def _children(self, place: _Located, token: str) -> Iterator[_Located]:
        schema = place.schema
        if not isinstance(schema, dict):
            return
        properties = schema.get("properties")
        named = isinstance(properties, dict) and token in properties
        if isinstance(properties, dict) and named:
            yield _Located(properties[token], place.base, place.document)
        patterns = schema.get("patternProperties")
        matched = False
        if isinstance(patterns, dict):
            for pattern, subschema in patterns.items():
                if _search(pattern, token):
                    matched = True
                    yield _Located(subschema, place.base, place.document)
        if not named and not matched and isinstance(schema.get("additionalProperties"), dict):
            yield _Located(schema["additionalProperties"], place.base, place.document)
        if token.isdigit():
            yield from self._item(place, int(token))

    def _item(self, place: _Located, index: int) -> Iterator[_Located]:
        schema = place.schema
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and index < len(prefix):
            yield _Located(prefix[index], place.base, place.document)
        elif isinstance(schema.get("items"), dict):
            yield _Located(schema["items"], place.base, place.document)

    def _expand(self, place: _Located, depth: int = 0) -> Iterator[_Located]:
        """``place`` and every subschema that applies to the same value: references and
        branches, followed."""
        yield place
        schema = place.schema
        if not isinstance(schema, dict) or depth > _MAX_REFS:
            return
        if isinstance(schema.get("$ref"), str):
            target = self._resolve(place, schema["$ref"])
            if target is not None:
                yield from self._expand(target, depth + 1)
        for keyword in _BRANCHES:
            branches = schema.get(keyword)
            if isinstance(branches, list):
                for branch in branches:
                    yield from self._expand(_Located(branch, place.base, place.document), depth + 1)

    def _resolve(self, place: _Located, reference: str) -> _Located | None:
        """Where ``reference`` leads from ``place``; found once per reference and document."""
        key = (id(place.document), place.base, reference)
        if key not in self._targets:
            self._targets[key] = self._target(place, reference)
        return self._targets[key]

    def _target(self, place: _Located, reference: str) -> _Located | None:
        uri, fragment = urldefrag(urljoin(place.base, reference))
        document = self._documents.get(uri) if uri and uri != place.base else place.document
        if document is None:
            return None
        if fragment and not fragment.startswith("/"):
            return None  # a named anchor: not followed (output schemas rarely use them)
        try:
            target = resolve(document, unquote(fragment))
        except KeyError:
            return None
        return None if target is None else _Located(target, uri or place.base, document)


def _deepest(bounds: list[int | None]) -> int | None:
    """The largest of ``bounds`` (0 of none), or None when any is unbounded."""
    known = [bound for bound in bounds if bound is not None]
    return max(known, default=0) if len(known) == len(bounds) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _nesting(value: Any) -> int:
    """How many arrays and objects ``value`` nests (a schema's constant: small)."""
    if isinstance(value, dict):
        return 1 + max((_nesting(member) for member in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_nesting(item) for item in value), default=0)
    return 0


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False
