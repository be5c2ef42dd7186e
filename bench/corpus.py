"""The projection bench's tools: every real tool we have, then varied copies up to the count.

The real tools are the Berkeley Function Calling Leaderboard's (3,420 distinct definitions,
imported as canonical schemas) and the tools/list results captured from the MCP reference
servers. They are plain: few `$ref`s, maps or unions. The varied copies add, to a real tool,
what tool schemas written by Pydantic, by MCP servers and by hand add in practice: optional
parameters as ``anyOf [T, null]``, free-form maps, ``$ref`` with a description beside it,
``oneOf`` of objects, string and number bounds, namespaced names with dots, arrays of objects
with optional members, recursive definitions. The same seed gives the same tools.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.project.corpus import bfcl_tools

from schemawire._json import load_file
from schemawire.project.importers import ImportedTool, import_mcp, import_openai
from schemawire.types import ToolSpec

MCP_CAPTURES = Path(__file__).parent.parent / "tests/data/mcp-tools"
# Keys of the canonical file that a user hands a converter beside the parameters, not in them
# (with the file's x- metadata).
FILE_KEYS = ("$schema", "$id", "description", "title")

Schema = dict[str, Any]


@dataclass(frozen=True)
class Corpus:
    """The bench's tools: the first ``real`` of them are real, the rest varied copies."""

    tools: list[ToolSpec]
    real: int


def tool_corpus(size: int, seed: int = 2026) -> Corpus:
    """``size`` tools: the real ones first, then varied copies of them."""
    real = [_spec(tool) for tool in _real_tools()]
    rng = random.Random(seed)
    varied = [_vary(rng.choice(real), rng, number) for number in range(max(0, size - len(real)))]
    return Corpus((real + varied)[:size], min(size, len(real)))


def function_object(spec: ToolSpec) -> Schema:
    """The tool as one writes it for a peer converter: an OpenAI function object whose
    parameters are the canonical schema without the file's own keys and metadata."""
    parameters = {
        k: v for k, v in spec.input_schema.items() if k not in FILE_KEYS and not k.startswith("x-")
    }
    return {"name": spec.name, "description": spec.description, "parameters": parameters}


def _real_tools() -> list[ImportedTool]:
    tools = [imported for tool in bfcl_tools() for imported in import_openai([tool])]
    for capture in sorted(MCP_CAPTURES.glob("*.json")):
        if capture.name != "PROVENANCE.json":
            tools += import_mcp(load_file(capture))
    return tools


def _spec(tool: ImportedTool) -> ToolSpec:
    return ToolSpec(tool.name, tool.schema, tool.output_schema)  # annotations: x- in schema


def _vary(base: ToolSpec, rng: random.Random, number: int) -> ToolSpec:
    schema = copy.deepcopy(base.input_schema)
    schema.setdefault("properties", {})
    name = f"{base.name}_v{number}"
    for mutation in rng.sample(MUTATIONS, rng.randint(2, 4)):
        name = mutation(schema, rng) or name
    schema["$id"] = f"https://example.com/schemas/tools/{name}.json"
    return ToolSpec(name, schema)


# --- mutations: each changes the schema in place, and may return a new tool name -------------


def _optional_pydantic(schema: Schema, rng: random.Random) -> None:
    kind = rng.choice(["string", "integer", "number", "boolean"])
    schema["properties"]["note"] = {
        "anyOf": [{"type": kind}, {"type": "null"}],
        "default": None,
        "title": "Note",
        "description": "Optional, as Pydantic writes `X | None = None`.",
    }


def _free_form_map(schema: Schema, rng: random.Random) -> None:
    values = rng.choice([{"type": "string"}, {"type": "integer"}, {}, True])
    schema["properties"]["labels"] = {
        "type": "object",
        "additionalProperties": values,
        "description": "Extra labels.",
    }


def _ref_with_description(schema: Schema, rng: random.Random) -> None:
    defs = schema.setdefault("$defs", {})
    defs["Address"] = {
        "type": "object",
        "properties": {
            "street": {"type": "string"},
            "city": {"type": "string"},
            "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
        },
        "required": ["street", "city"],
    }
    schema["properties"]["address"] = {"$ref": "#/$defs/Address", "description": "Where to."}
    required = schema.setdefault("required", [])
    if rng.random() < 0.5 and "address" not in required:
        required.append("address")


def _one_of_objects(schema: Schema, rng: random.Random) -> None:
    schema["properties"]["customer"] = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"id": {"type": "integer", "minimum": 1}},
                "required": ["id"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"email": {"type": "string", "format": "email"}},
                "required": ["email"],
                "additionalProperties": False,
            },
        ]
    }


def _bounds(schema: Schema, rng: random.Random) -> None:
    for value in schema["properties"].values():
        if not isinstance(value, dict):
            continue
        if value.get("type") == "string" and "enum" not in value:
            value.update(minLength=1, maxLength=rng.choice([64, 256, 2000]))
        elif value.get("type") in ("integer", "number"):
            value.update(minimum=0, maximum=rng.choice([100, 10_000]))
        elif value.get("type") == "array":
            value.update(maxItems=rng.choice([10, 50]), uniqueItems=True)


def _namespaced(schema: Schema, rng: random.Random) -> str:
    service = rng.choice(["github", "slack", "jira", "billing", "calendar"])
    return f"{service}.{rng.choice(['search', 'create', 'update', 'list'])}_{rng.randrange(10**6)}"


def _array_of_objects(schema: Schema, rng: random.Random) -> None:
    schema["properties"]["items"] = {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "properties": {
                "sku": {"type": "string"},
                "quantity": {"type": "integer"},
                "gift": {"type": ["boolean", "null"]},
            },
            "required": ["sku"],
        },
    }


def _recursive(schema: Schema, rng: random.Random) -> None:
    schema.setdefault("$defs", {})["Node"] = {
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
        },
        "required": ["label"],
    }
    schema["properties"]["tree"] = {"$ref": "#/$defs/Node"}


def _untyped_and_const(schema: Schema, rng: random.Random) -> None:
    schema["properties"]["value"] = {"description": "Any JSON value."}
    schema["properties"]["api_version"] = {"const": "2024-06-01"}


MUTATIONS: list[Callable[[Schema, random.Random], str | None]] = [
    _optional_pydantic,
    _free_form_map,
    _ref_with_description,
    _one_of_objects,
    _bounds,
    _namespaced,
    _array_of_objects,
    _recursive,
    _untyped_and_const,
]
