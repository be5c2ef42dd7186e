"""References: each ``$ref`` of the repository's files, the registry that resolves them, and
the repository file each one names.

References resolve through a registry of the repository's own files; nothing is ever fetched.
A reference to a file that cannot be read is still traced to that file (`FileIndex`), so the
file is blamed once rather than every reference to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import jsonschema_rs

from schemawire._pointer import join
from schemawire.schema._walk import Site
from schemawire.schema.schema_file import SchemaFile

__all__ = ["FileIndex", "Reference", "build_registry", "references_of"]

_REFERENCE_KEYWORDS = ("$ref", "$dynamicRef")


@dataclass(frozen=True, slots=True)
class Reference:
    """One ``$ref`` (or ``$dynamicRef``) of a schema file, resolved to an absolute target.

    Attributes:
        file: the path of the file that holds it, relative to the root.
        pointer: where the keyword is in that file.
        value: the reference as written.
        base_uri: the base URI it is resolved against.
        target: the absolute URI of the resource it names, without fragment ("" when the
            reference is not a URI reference).
        fragment: the fragment, percent-decoded: a JSON Pointer, an anchor name, or "".
    """

    file: str
    pointer: str
    value: str
    base_uri: str
    target: str
    fragment: str


def build_registry(files: tuple[SchemaFile, ...]) -> tuple[jsonschema_rs.Registry, set[str]]:
    """A registry of the repository's files, and the URIs their references name but lack.

    jsonschema-rs resolves every reference while it builds a registry; an unknown URI is recorded
    and stands in as a ``false`` schema, so that building never fails and validation of anything
    that depends on it fails closed.
    """
    missing: set[str] = set()

    def record_missing(uri: str) -> bool:
        missing.add(urldefrag(uri).url)
        return False

    resources: dict[str, Any] = {}
    for file in files:
        if file.usable:
            resources.setdefault(file.uri, file.document)
    try:
        registry = jsonschema_rs.Registry(list(resources.items()), retriever=record_missing)
    except (jsonschema_rs.ReferencingError, ValueError):
        # One malformed reference fails the whole registry: keep every file that builds alone.
        resources = {uri: doc for uri, doc in resources.items() if _builds_alone(uri, doc)}
        registry = jsonschema_rs.Registry(list(resources.items()), retriever=record_missing)
    return registry, missing


def _builds_alone(uri: str, document: Any) -> bool:
    try:
        jsonschema_rs.Registry([(uri, document)], retriever=lambda _: False)
    except (jsonschema_rs.ReferencingError, ValueError):
        return False
    return True


def references_of(file: SchemaFile, sites: tuple[Site, ...]) -> Iterator[Reference]:
    """Each ``$ref`` and ``$dynamicRef`` among ``sites`` (the subschemas of ``file``)."""
    for site in sites:
        if not isinstance(site.schema, dict):
            continue
        for keyword in _REFERENCE_KEYWORDS:
            value = site.schema.get(keyword)
            if isinstance(value, str):
                target, fragment = _target_of(value, site.base_uri)
                pointer = join(site.pointer, keyword)
                yield Reference(file.relpath, pointer, value, site.base_uri, target, fragment)


def _target_of(reference: str, base_uri: str) -> tuple[str, str]:
    """The absolute resource URI a reference names and its (percent-decoded) fragment; an
    empty URI when the reference is not a URI reference at all."""
    try:
        target = urldefrag(urljoin(base_uri, reference))
    except ValueError:
        return "", ""
    return target.url, unquote(target.fragment)


class FileIndex:
    """The repository file a reference names, including files that cannot be read (whose
    ``$id`` is unknown): they are found by their path."""

    def __init__(self, files: tuple[SchemaFile, ...], id_base: str | None) -> None:
        self._by_uri = {f.uri: f for f in reversed(files)}
        self._by_path = {f.path.resolve().as_uri(): f for f in reversed(files)}
        self._by_relpath = {f.relpath: f for f in reversed(files)}
        self._id_base = id_base

    def file_of(self, reference: Reference) -> SchemaFile | None:
        """The file ``reference`` names, or None when it names none of the repository's."""
        if not reference.target:
            return None
        return (
            self._by_uri.get(reference.target)
            or self._by_location(reference)
            or self._by_id_base(reference.target)
        )

    def _by_location(self, reference: Reference) -> SchemaFile | None:
        referrer = self._by_relpath.get(reference.file)
        address = reference.value.partition("#")[0]
        try:
            if referrer is None or not address or urlsplit(address).scheme:
                return None
            return self._by_path.get(urljoin(referrer.path.resolve().as_uri(), address))
        except ValueError:  # not a URI reference at all
            return None

    def _by_id_base(self, target: str) -> SchemaFile | None:
        if self._id_base is None or not target.startswith(self._id_base):
            return None
        return self._by_relpath.get(target.removeprefix(self._id_base))
