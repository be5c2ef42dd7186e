"""The keyword account of a projection: every canonical keyword is kept or reported lost.

Kept means: a projected subschema that came from the canonical subschema (by the projection's
origins) holds the keyword with an equal value (a subschema-holding keyword need only be
present; a description may have restated constraints appended; type names are compared
whatever their case). Lost means: a loss names the
pointer and keyword, a loss without keyword names the pointer or one of its ancestors, or the
keyword sits in a subschema below a keyword that a loss names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from schemawire._pointer import join, resolve
from schemawire.project._transforms import METADATA
from schemawire.schema._walk import iter_sites
from schemawire.schema.dialect import DRAFT_2020_12
from schemawire.types import Projection, ToolSpec
from tests.helpers import json_strings

_HOLDS_SUBSCHEMAS = DRAFT_2020_12.subschema_keywords() | {"$defs", "definitions"}


def canonical_keywords(schema: Any) -> Iterator[tuple[str, str, Any]]:
    """``(pointer, keyword, value)`` of every keyword that says something about data."""
    for site in iter_sites(schema, DRAFT_2020_12):
        if isinstance(site.schema, dict):
            for keyword, value in site.schema.items():
                if keyword not in METADATA and not keyword.startswith("x-"):
                    yield site.pointer, keyword, value


def unaccounted(projection: Projection, spec: ToolSpec, *, output: bool) -> list[str]:
    """``document:pointer keyword`` of each canonical keyword neither kept nor reported lost."""
    documents = [("input", spec.input_schema)]
    if output and spec.output_schema is not None:
        documents.append(("output", spec.output_schema))
    nodes = _projected_nodes(projection)
    missing = []
    for document, schema in documents:
        for pointer, keyword, value in canonical_keywords(schema):
            if _lost(projection, document, pointer, keyword):
                continue
            if _kept(nodes.get(f"{document}:{pointer}", []), keyword, value):
                continue
            if pointer == "" and _in_envelope(projection, keyword, value):
                continue
            missing.append(f"{document}:{pointer} {keyword}")
    return missing


def _projected_nodes(projection: Projection) -> dict[str, list[Any]]:
    nodes: dict[str, list[Any]] = {}
    for at, origins in projection.origins.items():
        if at.startswith("envelope:"):
            continue
        node = resolve(projection.payload, at)
        for origin in origins:
            nodes.setdefault(origin, []).append(node)
    return nodes


def _lost(projection: Projection, document: str, pointer: str, keyword: str) -> bool:
    for loss in projection.losses:
        if loss.document != document:
            continue
        if loss.keyword == keyword and loss.pointer == pointer:
            return True
        dropped = join(loss.pointer, loss.keyword) if loss.keyword is not None else None
        if dropped is not None and (pointer == dropped or pointer.startswith(dropped + "/")):
            return True  # below a dropped keyword that held subschemas
        if loss.keyword is None and (
            pointer == loss.pointer or pointer.startswith(loss.pointer + "/") or loss.pointer == ""
        ):
            return True
    return False


def _kept(nodes: list[Any], keyword: str, value: Any) -> bool:
    for node in nodes:
        if not isinstance(node, dict) or keyword not in node:
            continue
        if keyword in _HOLDS_SUBSCHEMAS:
            return True
        if keyword == "description" and isinstance(value, str):
            if str(node[keyword]).startswith(value):
                return True
        elif _same(_spelling(keyword, node[keyword]), _spelling(keyword, value)):
            return True
    return False


def _in_envelope(projection: Projection, keyword: str, value: Any) -> bool:
    if f"envelope:{keyword}" not in projection.origins:
        return False
    return any(
        isinstance(v, str) and v.startswith(str(value)) for v in json_strings(projection.payload)
    )


def _spelling(keyword: str, value: Any) -> Any:
    # OpenAPI (Gemini's parameters) spells type names in upper case; the meaning is the same.
    return value.lower() if keyword == "type" and isinstance(value, str) else value


def _same(left: Any, right: Any) -> bool:
    if type(left) is not type(right) and not (
        isinstance(left, int | float)
        and isinstance(right, int | float)
        and not isinstance(left, bool)
        and not isinstance(right, bool)
    ):
        return False
    return bool(left == right)
