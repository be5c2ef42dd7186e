"""Two schemas walked side by side: the walk behind `schemawire.schema._compare`'s comparers.

`Walk` holds both sides (`At`: a subschema and the base URI its references resolve against),
follows each ``$ref`` through a `Resolver` (nothing is fetched), reads a ``$ref`` beside other
keywords as one schema, and aligns a plain schema with a pure ``anyOf``/``oneOf``. What two
subschemas' keywords mean as changes is the comparers': the walk is given their table and
records what they find, as `Found` tuples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from schemawire._pointer import join, resolve
from schemawire.schema._walk import iter_sites
from schemawire.schema.dialect import DEFAULT_DIALECT, dialect_named

__all__ = [
    "ABSENT",
    "INERT",
    "At",
    "Comparer",
    "Comparers",
    "Found",
    "Resolver",
    "Walk",
    "document_root",
    "mapping_at",
    "union_keys",
]


class _Absent:
    """The value of a keyword a schema does not have (``None`` is JSON ``null``)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

Found = tuple[str, str, Any, Any]
"""One difference: its code, its pointer, the value before and the value after."""


@dataclass(frozen=True, slots=True)
class At:
    """One side of the comparison: a subschema and the base URI its references resolve against."""

    schema: Any
    base: str

    def get(self, keyword: str) -> Any:
        return self.schema.get(keyword, ABSENT) if isinstance(self.schema, dict) else ABSENT

    def sub(self, schema: Any) -> At:
        identifier = schema.get("$id") if isinstance(schema, dict) else None
        if isinstance(identifier, str) and not identifier.startswith("#"):
            try:
                return At(schema, urldefrag(urljoin(self.base, identifier)).url)
            except ValueError:  # not a URI: the repository rules report it
                pass
        return At(schema, self.base)

    def without(self, keyword: str) -> At:
        return At({k: v for k, v in self.schema.items() if k != keyword}, self.base)


Comparer = Callable[["Walk", At, At, str], None]
"""Records what differs between two subschemas at a pointer, for a group of keywords."""


@dataclass(frozen=True, slots=True)
class Comparers:
    """The comparers' table: each runs where either side has one of its keywords; ``always``
    runs on every pair of subschemas (the annotations)."""

    by_keyword: tuple[tuple[frozenset[str], Comparer], ...]
    always: Comparer


def document_root(document: Any, uri: str) -> At:
    """A whole document retrieved from ``uri``: its base is moved by a root ``$id``."""
    return At(document, uri).sub(document)


class Resolver:
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

    def target(self, at: At) -> At | None:
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
            return None if found is None else At(found, url)
        try:
            return At(resource, url).sub(resolve(resource, fragment))
        except KeyError:
            return None


class Walk:
    """Compares two schemas keyword by keyword and records what differs, subschema by subschema."""

    def __init__(
        self,
        old: Resolver,
        new: Resolver,
        is_annotation: Callable[[str], bool],
        comparers: Comparers,
    ) -> None:
        """Compare through ``old`` and ``new``'s references, with ``comparers``' table.

        ``is_annotation`` says which codes change only annotations.
        """
        self.old_refs, self.new_refs = old, new
        self.is_annotation = is_annotation
        self.comparers = comparers
        self.found: list[Found] = []
        self._followed: set[tuple[int, int]] = set()
        self._reached: set[int] = set()

    def emit(self, code: str, pointer: str, old: Any = ABSENT, new: Any = ABSENT) -> None:
        self.found.append((code, pointer, old, new))

    def annotations_only(self, pairs: Iterable[tuple[At, At, str]]) -> bool:
        """Compare each pair apart; when only annotations differ, record them and say so, else
        record nothing (for keywords whose changes cannot be read as a narrowing or widening)."""
        fork = Walk(self.old_refs, self.new_refs, self.is_annotation, self.comparers)
        fork._followed, fork._reached = self._followed, self._reached
        for old, new, pointer in pairs:
            fork.compare(old, new, pointer)
        if all(self.is_annotation(code) for code, *_ in fork.found):
            self.found.extend(fork.found)
            return True
        return False

    def compare(self, old: At, new: At, pointer: str) -> None:
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
        for keywords, comparer in self.comparers.by_keyword:
            if any(k in old.schema or k in new.schema for k in keywords):
                comparer(self, old, new, pointer)
        self.comparers.always(self, old, new, pointer)

    def _through_references(self, old: At, new: At, pointer: str) -> None:
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

    def _follow(self, old: At, new: At, pointer: str) -> None:
        """Compare two targets once: a definition used in several places (or by itself) is
        reported where it is first reached."""
        pair = (id(old.schema), id(new.schema))
        if pair in self._followed:
            return
        self._followed.add(pair)
        self._reached.update(pair)
        self.compare(old, new, pointer)

    def compare_definitions(self, old: At, new: At) -> None:
        """Compare the root ``$defs`` (and draft-07 ``definitions``) that no reference reached:
        what a shared file offers to other files."""
        for keyword in ("$defs", "definitions"):
            before, after = mapping_at(old, keyword), mapping_at(new, keyword)
            for name in union_keys(before, after):
                where = join("", keyword, name)
                if name not in before:
                    self.emit("DEFINITION_ADDED", where, new=after[name])
                elif name not in after:
                    self.emit("DEFINITION_REMOVED", where, old=before[name])
                elif not {id(before[name]), id(after[name])} & self._reached:
                    self._follow(old.sub(before[name]), new.sub(after[name]), where)


def _as_object(at: At) -> At:
    """``true`` as the empty schema; anything that is not a schema object as the empty schema."""
    return at if isinstance(at.schema, dict) else At({}, at.base)


def _inlined(at: At, target: At) -> At:
    """A schema with a ``$ref`` beside other keywords, read as one schema: the target's keywords
    and its own (best effort: the two apply together)."""
    if target.schema is False:
        return target
    merged = dict(target.schema) if isinstance(target.schema, dict) else {}
    merged.update((k, v) for k, v in at.schema.items() if k != "$ref")
    return At(merged, target.base)


def _aligned_unions(old: At, new: At) -> tuple[At, At]:
    """A schema compared with a pure ``anyOf`` or ``oneOf`` (nothing else but annotations) is
    read as a union of one branch, so that ``string`` becoming ``anyOf: [string, null]`` is one
    alternative added, not a new type and a new combinator."""
    for keyword in ("anyOf", "oneOf"):
        if _pureunion_keys(new, keyword) and _plain(old):
            return _asunion_keys(old, keyword), new
        if _pureunion_keys(old, keyword) and _plain(new):
            return old, _asunion_keys(new, keyword)
    return old, new


def _validating(at: At) -> dict[str, Any]:
    """The keywords of ``at`` that validate: no annotations, identifiers or definitions."""
    return {k: v for k, v in at.schema.items() if k not in INERT and not k.startswith("x-")}


def _pureunion_keys(at: At, keyword: str) -> bool:
    return isinstance(at.get(keyword), list) and _validating(at).keys() == {keyword}


def _plain(at: At) -> bool:
    """Whether ``at`` validates something, without a combinator."""
    keywords = _validating(at).keys()
    return bool(keywords) and not keywords & {"anyOf", "oneOf", "allOf"}


def _asunion_keys(at: At, keyword: str) -> At:
    validating = _validating(at)
    rest = {k: v for k, v in at.schema.items() if k not in validating}
    return At({**rest, keyword: [validating]}, at.base)


INERT = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$id",
        "$schema",
        "$anchor",
        "$dynamicAnchor",
        "$defs",
        "definitions",
        "x-version",
    }
)


def mapping_at(at: At, keyword: str) -> dict[str, Any]:
    value = at.get(keyword)
    return value if isinstance(value, dict) else {}


def union_keys(before: Iterable[str], after: Iterable[str]) -> list[str]:
    """The keys of both, in the order of ``before`` and then of ``after``."""
    return list(dict.fromkeys([*before, *after]))
