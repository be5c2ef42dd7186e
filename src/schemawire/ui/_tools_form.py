"""The schema the Tools page builds its form from: the tool's input schema with every ``$ref``
replaced by the schema it names (in the repository's documents), so the page's script never
resolves a reference itself.

The form is a convenience; the gate still checks the arguments against the canonical schema,
references and all. A reference that names nothing, or one that recurses, becomes ``{}`` with an
``x-form-note`` saying why: the page shows that field as raw JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urldefrag, urljoin

from schemawire._pointer import resolve

__all__ = ["form_schema"]

_MAX_DEPTH = 32  # nested references followed before a field becomes raw JSON


def form_schema(schema: dict[str, Any], documents: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with its references inlined, for the page's form generator.

    A reference within ``schema`` itself (``#/$defs/...``) resolves in ``schema`` even when no
    document holds it: an MCP server's schema often has no ``$id`` and is in no repository.
    """
    base = str(schema.get("$id", ""))
    known = (
        documents if urldefrag(base)[0] in documents else {**documents, urldefrag(base)[0]: schema}
    )
    resolved = _Inliner(known).walk(schema, base, ())
    return resolved if isinstance(resolved, dict) else {}


class _Inliner:
    def __init__(self, documents: Mapping[str, Any]) -> None:
        self.documents = documents

    def walk(self, value: Any, base: str, seen: tuple[str, ...]) -> Any:
        if isinstance(value, list):
            return [self.walk(item, base, seen) for item in value]
        if not isinstance(value, dict):
            return value
        if isinstance(value.get("$id"), str):
            base = urljoin(base, value["$id"])
        if isinstance(value.get("$ref"), str):
            return self.inlined(value, base, seen)
        return {key: self.walk(item, base, seen) for key, item in value.items()}

    def inlined(self, schema: dict[str, Any], base: str, seen: tuple[str, ...]) -> Any:
        """The schema ``schema["$ref"]`` names, with ``schema``'s other keywords beside it (a
        description next to a reference is the field's help text)."""
        uri = urljoin(base, schema["$ref"])
        siblings = {k: self.walk(v, base, seen) for k, v in schema.items() if k != "$ref"}
        if uri in seen or len(seen) >= _MAX_DEPTH:
            return {**siblings, "x-form-note": f"{schema['$ref']} recurses: write it as JSON"}
        target = self.target(uri)
        if not isinstance(target, dict):
            return {**siblings, "x-form-note": f"{schema['$ref']} names nothing"}
        document_uri = urldefrag(uri)[0]
        walked = self.walk(target, document_uri, (*seen, uri))
        return {**walked, **siblings} if isinstance(walked, dict) else walked

    def target(self, uri: str) -> Any:
        document_uri, fragment = urldefrag(uri)
        document = self.documents.get(document_uri)
        if document is None:
            return None
        try:
            return resolve(document, fragment) if fragment else document
        except (KeyError, IndexError, ValueError, TypeError):
            return None
