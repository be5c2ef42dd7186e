"""Visit every subschema of a schema document, with its pointer and its base URI.

Only keywords that hold subschemas are followed, so values under ``enum``, ``const``, ``default``
or ``examples`` are never mistaken for schemas. The walk is iterative: document depth is already
bounded by the JSON parser, and deep schemas never hit Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin

from schemawire._pointer import join
from schemawire.schema.dialect import Dialect

__all__ = ["Site", "iter_sites"]


@dataclass(frozen=True, slots=True)
class Site:
    """A subschema and where it sits.

    Attributes:
        pointer: where the subschema is in its document.
        schema: the subschema: an object, or a boolean schema.
        keyword: the keyword it sits under, None for the document root.
        key: the property name, definition name or index under that keyword, if any.
        base_uri: the URI that a ``$ref`` inside it is resolved against.
        parent: the site of the schema that holds this one, None for the root.
    """

    pointer: str
    schema: dict[str, Any] | bool
    keyword: str | None = None
    key: str | int | None = None
    base_uri: str = ""
    parent: Site | None = None

    @property
    def is_property(self) -> bool:
        """Whether this subschema is the schema of a named property (under ``properties``)."""
        return self.keyword == "properties"


def iter_sites(document: Any, dialect: Dialect, base_uri: str = "") -> Iterator[Site]:
    """Every subschema of ``document``, root first, in document order."""
    if not isinstance(document, dict | bool):
        return
    stack = [Site("", document, base_uri=_base_of(document, base_uri, dialect))]
    while stack:
        site = stack.pop()
        yield site
        stack.extend(reversed(list(_children(site, dialect))))


def _children(site: Site, dialect: Dialect) -> Iterator[Site]:
    if not isinstance(site.schema, dict):
        return
    for keyword, value in site.schema.items():
        if not dialect.holds_subschemas(keyword, value):
            continue
        for key, child in _members(keyword, value, dialect):
            if isinstance(child, dict | bool):
                pointer = (
                    join(site.pointer, keyword) if key is None else join(site.pointer, keyword, key)
                )
                base = _base_of(child, site.base_uri, dialect)
                yield Site(pointer, child, keyword, key, base, site)


def _members(keyword: str, value: Any, dialect: Dialect) -> Iterator[tuple[str | int | None, Any]]:
    if keyword in dialect.mapping and isinstance(value, dict):
        yield from value.items()
    elif isinstance(value, list):
        yield from enumerate(value)
    else:
        yield None, value


def _base_of(schema: Any, base_uri: str, dialect: Dialect) -> str:
    """The base URI inside ``schema``: its ``$id`` resolved against the enclosing base."""
    if not isinstance(schema, dict):
        return base_uri
    identifier = schema.get("$id")
    if not isinstance(identifier, str):
        return base_uri
    if dialect.name == "draft-07" and identifier.startswith("#"):
        return base_uri  # a plain-name fragment is an anchor in draft-07, not a new base
    try:
        return urldefrag(urljoin(base_uri, identifier)).url
    except ValueError:
        return base_uri  # not a URI; the metaschema and the $id rules report it
