"""`project.checkers`: every target rule fires on the payload that breaks it, at the right place,
stays quiet on one that keeps it, and no payload, however malformed, makes a checker raise."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire._pointer import resolve, split, to_pointer
from schemawire.errors import UsageError
from schemawire.project.checkers import (
    TARGETS,
    Problem,
    a2a,
    anthropic,
    check_payload,
    check_request,
    gemini,
    mcp,
    openai,
)

DELETE = object()
CITY = {"type": "string", "description": "A city name."}
STRICT = {
    "type": "object",
    "properties": {"city": CITY, "unit": {"type": ["string", "null"], "enum": ["c", "f", None]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}
LOOSE = {"type": "object", "properties": {"city": CITY}, "required": ["city"]}
CHAT = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather now.",
        "parameters": STRICT,
        "strict": True,
    },
}
CHAT_LOOSE = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": LOOSE, "strict": False},
}
RESPONSES = {"type": "function", "name": "get_weather", "parameters": STRICT, "strict": True}
RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "weather", "schema": STRICT, "strict": True},
}
TEXT_FORMAT = {"type": "json_schema", "name": "weather", "schema": STRICT, "strict": True}
ANTHROPIC = {
    "name": "get_weather",
    "description": "Weather now.",
    "input_schema": STRICT,
    "strict": True,
}
# Gemini's JSON Schema subset takes enums of strings and numbers only: no null member.
GEMINI_SCHEMA = {**STRICT, "properties": {"city": CITY, "unit": {"type": "string", "enum": ["c"]}}}
GEMINI = {
    "name": "get_weather",
    "description": "Weather now.",
    "parametersJsonSchema": GEMINI_SCHEMA,
    "responseJsonSchema": {"type": "array", "items": CITY},
}
GEMINI_OPENAPI = {
    "name": "get_weather",
    "parameters": {
        "type": "OBJECT",
        "properties": {
            "city": {"type": "STRING", "description": "A city name."},
            "unit": {"type": "STRING", "enum": ["c", "f"], "nullable": True},
            "place": {"$ref": "#/$defs/place"},
        },
        "required": ["city"],
        "$defs": {"place": {"type": "OBJECT", "properties": {"zip": {"type": "STRING"}}}},
    },
    "response": {"type": "ARRAY", "items": {"type": "STRING"}},
}
MCP = {
    "name": "weather.get_current",
    "title": "Weather",
    "inputSchema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **LOOSE,
        "$defs": {"c": CITY},
        "properties": {"city": {"$ref": "#/$defs/c"}},
    },
    "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}},
    "annotations": {"title": "Weather", "readOnlyHint": True, "openWorldHint": True},
}
CARD = {
    "name": "Weather agent",
    "description": "Answers questions about the weather.",
    "supportedInterfaces": [
        {"url": "https://example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "version": "1.0.0",
    "capabilities": {
        "streaming": False,
        "extensions": [
            {"uri": "https://example.com/ext/json-schema", "params": {"schema": STRICT}}
        ],
    },
    "defaultInputModes": ["application/json"],
    "defaultOutputModes": ["application/json", "text/plain; charset=utf-8"],
    "skills": [
        {
            "id": "get_weather",
            "name": "Get weather",
            "description": "Weather now.",
            "tags": ["weather"],
            "examples": ['{"city": "Paris"}'],
            "inputModes": ["application/json"],
        }
    ],
}
CLEAN = {
    "openai.chat": CHAT,
    "openai.responses": RESPONSES,
    "openai.response_format": RESPONSE_FORMAT,
    "openai.text_format": TEXT_FORMAT,
    "anthropic": ANTHROPIC,
    "gemini": GEMINI,
    "mcp": MCP,
    "a2a": CARD,
}


def edit(payload: Any, **changes: Any) -> Any:
    """A deep copy of ``payload`` with values set (or DELETEd) at pointers written as keywords:
    ``edit(CHAT, **{"/function/name": "x"})``."""
    result = copy.deepcopy(payload)
    for pointer, value in changes.items():
        *path, last = split(pointer)
        parent = resolve(result, to_pointer(path))
        key: Any = int(last) if isinstance(parent, list) else last
        if value is DELETE:
            del parent[key]
        elif isinstance(parent, list) and key == len(parent):
            parent.append(copy.deepcopy(value))
        else:
            parent[key] = copy.deepcopy(value)
    return result


def nested(depth: int, leaf: Any = None) -> dict[str, Any]:
    """Objects ``depth`` levels deep under ``properties/a``, closed for strict mode."""
    schema: dict[str, Any] = leaf or {"type": "string"}
    for _ in range(depth):
        schema = {
            "type": "object",
            "properties": {"a": schema},
            "required": ["a"],
            "additionalProperties": False,
        }
    return schema


def strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


TOO_DEEP = nested(130)
DEEP_STOP = "/properties/a" * 129
P = "/function/parameters"  # the schema of a Chat tool
S = "/input_schema"


@dataclass(frozen=True)
class Case:
    """A payload that breaks ``rule`` at ``pointer``, and one that keeps it (the clean base)."""

    target: str
    broken: Any
    pointer: str
    kept: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    kept_options: dict[str, Any] = field(default_factory=dict)


def chat(**changes: Any) -> Any:
    return edit(CHAT, **changes)


OPENAI: dict[str, Case] = {
    "openai.envelope.not-object": Case("openai.chat", [CHAT], ""),
    "openai.envelope.type": Case("openai.chat", chat(**{"/type": "custom"}), "/type"),
    "openai.envelope.missing": Case("openai.chat", chat(**{"/function/name": DELETE}), "/function"),
    "openai.envelope.field-type": Case(
        "openai.chat", chat(**{"/function/strict": "yes"}), "/function/strict"
    ),
    "openai.envelope.unknown-field": Case(
        "openai.responses", edit(RESPONSES, **{"/function": {}}), "/function"
    ),
    "openai.envelope.not-strict": Case(
        "openai.response_format",
        edit(RESPONSE_FORMAT, **{"/json_schema/strict": False}),
        "/json_schema/strict",
    ),
    "openai.name.pattern": Case(
        "openai.text_format",
        edit(TEXT_FORMAT, **{"/name": "a b"}),
        "/name",
        edit(TEXT_FORMAT, **{"/name": "a-b_" + "c" * 60}),
    ),
    "openai.description.too-long": Case(
        "openai.chat",
        chat(**{"/function/description": "x" * 1025}),
        "/function/description",
        chat(**{"/function/description": "x" * 1024}),
    ),
    "openai.schema.root-type": Case(
        "openai.chat", edit(CHAT_LOOSE, **{P: {"type": "array", "items": CITY}}), P, CHAT_LOOSE
    ),
    "openai.schema.root-combinator": Case(
        "openai.chat", edit(CHAT_LOOSE, **{P + "/anyOf": [LOOSE]}), P + "/anyOf", CHAT_LOOSE
    ),
    "openai.schema.malformed": Case(
        "openai.chat",
        edit(CHAT_LOOSE, **{P + "/properties/city/type": "text"}),
        P + "/properties/city/type",
        CHAT_LOOSE,
    ),
    "openai.schema.too-large": Case(
        "openai.chat", edit(CHAT_LOOSE, **{P: TOO_DEEP}), P + DEEP_STOP, CHAT_LOOSE
    ),
    "openai.strict.additional-properties": Case(
        "openai.chat",
        chat(**{P + "/additionalProperties": DELETE}),
        P,
        chat(**{P + "/properties/a": strict_object({}), P + "/required": ["city", "unit", "a"]}),
    ),
    "openai.strict.properties": Case(
        "openai.chat",
        chat(**{P + "/properties/unit": {"type": "object", "additionalProperties": False}}),
        P + "/properties/unit",
    ),
    "openai.strict.required": Case(
        "openai.chat", chat(**{P + "/required": ["city"]}), P + "/required"
    ),
    "openai.strict.keyword": Case(
        "openai.chat",
        chat(**{P + "/properties/city/minLength": 1}),
        P + "/properties/city/minLength",
    ),
    "openai.strict.format": Case(
        "openai.chat",
        chat(**{P + "/properties/city/format": "uri"}),
        P + "/properties/city/format",
        chat(**{P + "/properties/city/format": "hostname"}),
    ),
    "openai.strict.ref-siblings": Case(
        "openai.chat",
        chat(
            **{
                P + "/$defs": {"c": CITY},
                P + "/properties/city": {"$ref": "#/$defs/c", "description": "C"},
            }
        ),
        P + "/properties/city",
        chat(**{P + "/$defs": {"c": CITY}, P + "/properties/city": {"$ref": "#/$defs/c"}}),
    ),
    "openai.strict.ref-unresolved": Case(
        "openai.chat",
        chat(**{P + "/properties/city": {"$ref": "#/$defs/c"}}),
        P + "/properties/city/$ref",
        chat(**{P + "/properties/unit": {"$ref": "#"}}),
    ),
    "openai.strict.untyped": Case(
        "openai.chat",
        chat(**{P + "/properties/city": {"description": "Any city."}}),
        P + "/properties/city",
    ),
    "openai.strict.items": Case(
        "openai.chat",
        chat(**{P + "/properties/city": {"type": "array"}}),
        P + "/properties/city",
        chat(**{P + "/properties/city": {"type": "array", "items": CITY}}),
    ),
    "openai.strict.type-array": Case(
        "openai.chat",
        chat(**{P + "/properties/unit/type": ["string", "integer"]}),
        P + "/properties/unit/type",
    ),
    "openai.strict.pattern": Case(
        "openai.chat",
        chat(**{P + "/properties/city/pattern": "^(?!admin)"}),
        P + "/properties/city/pattern",
        chat(**{P + "/properties/city/pattern": "^[a-z]{2,99}$"}),
    ),
    "openai.strict.too-many-properties": Case(
        "openai.chat",
        chat(**{P: strict_object({f"p{i}": CITY for i in range(5001)})}),
        P + "/properties",
        chat(**{P: strict_object({f"p{i}": CITY for i in range(5000)})}),
    ),
    "openai.strict.too-deep": Case(
        "openai.chat", chat(**{P: nested(11)}), P + "/properties/a" * 10, chat(**{P: nested(10)})
    ),
    "openai.strict.too-many-chars": Case(
        "openai.chat",
        chat(**{P + "/properties/city/enum": ["x" * 60_001] * 2}),
        P + "/properties/city/enum/1",
        chat(**{P + "/properties/city/enum": ["x" * 59_990] * 2}),
    ),
    "openai.strict.too-many-enum-values": Case(
        "openai.chat",
        chat(**{P + "/properties/city": {"type": "integer", "enum": [*range(1001)]}}),
        P + "/properties/city/enum",
        chat(**{P + "/properties/city": {"type": "integer", "enum": [*range(997)]}}),
    ),
    "openai.strict.long-enum-too-long": Case(
        "openai.chat",
        chat(**{P + "/properties/city/enum": [f"{i:060}" for i in range(251)]}),
        P + "/properties/city/enum",
        chat(**{P + "/properties/city/enum": [f"{i:059}" for i in range(251)]}),
    ),
}


def strict_tool(**changes: Any) -> Any:
    return edit(ANTHROPIC, **changes)


RECURSIVE_NODE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
}

ANTHROPIC_CASES: dict[str, Case] = {
    "anthropic.envelope.not-object": Case("anthropic", "get_weather", ""),
    "anthropic.envelope.missing": Case("anthropic", strict_tool(**{S: DELETE}), ""),
    "anthropic.envelope.field-type": Case(
        "anthropic", strict_tool(**{"/strict": "true"}), "/strict"
    ),
    "anthropic.envelope.unknown-field": Case(
        "anthropic", strict_tool(**{"/parameters": {}}), "/parameters"
    ),
    "anthropic.name.pattern": Case("anthropic", strict_tool(**{"/name": "get.weather"}), "/name"),
    "anthropic.schema.root-type": Case("anthropic", strict_tool(**{S + "/type": "array"}), S),
    "anthropic.schema.root-combinator": Case(
        "anthropic", strict_tool(**{S + "/oneOf": [STRICT]}), S + "/oneOf"
    ),
    "anthropic.schema.property-key": Case(
        "anthropic",
        strict_tool(**{S: strict_object({"city name": CITY})}),
        S + "/properties/city name",
        strict_tool(**{S: strict_object({"city.name": CITY})}),
    ),
    "anthropic.schema.malformed": Case(
        "anthropic", strict_tool(**{S + "/required": "city"}), S + "/required"
    ),
    "anthropic.schema.too-large": Case("anthropic", strict_tool(**{S: TOO_DEEP}), S + DEEP_STOP),
    "anthropic.strict.additional-properties": Case(
        "anthropic",
        strict_tool(**{S + "/additionalProperties": True}),
        S,
        strict_tool(**{S + "/additionalProperties": True, "/strict": False}),
    ),
    "anthropic.strict.keyword": Case(
        "anthropic",
        strict_tool(**{S + "/properties/city/maxLength": 9}),
        S + "/properties/city/maxLength",
        strict_tool(**{S + "/properties/city/default": "Paris"}),
    ),
    "anthropic.strict.format": Case(
        "anthropic",
        strict_tool(**{S + "/properties/city/format": "iri"}),
        S + "/properties/city/format",
        strict_tool(**{S + "/properties/city/format": "uri"}),
    ),
    "anthropic.strict.min-items": Case(
        "anthropic",
        strict_tool(**{S + "/properties/city": {"type": "array", "items": CITY, "minItems": 2}}),
        S + "/properties/city/minItems",
        strict_tool(**{S + "/properties/city": {"type": "array", "items": CITY, "minItems": 1}}),
    ),
    "anthropic.strict.pattern": Case(
        "anthropic",
        strict_tool(**{S + "/properties/city/pattern": r"\bParis"}),
        S + "/properties/city/pattern",
        strict_tool(**{S + "/properties/city/pattern": r"[\b]\d{9}"}),
    ),
    "anthropic.strict.enum-value": Case(
        "anthropic",
        strict_tool(**{S + "/properties/unit/enum/0": {"c": 1}}),
        S + "/properties/unit/enum/0",
    ),
    "anthropic.strict.allof-ref": Case(
        "anthropic",
        strict_tool(
            **{
                S + "/$defs": {"c": CITY},
                S + "/properties/city": {"allOf": [{"$ref": "#/$defs/c"}]},
            }
        ),
        S + "/properties/city/allOf",
        strict_tool(**{S + "/properties/city": {"allOf": [CITY]}}),
    ),
    "anthropic.strict.ref-unresolved": Case(
        "anthropic",
        strict_tool(**{S + "/properties/city": {"$ref": "https://x.dev/c.json"}}),
        S + "/properties/city/$ref",
    ),
    "anthropic.strict.recursion": Case(
        "anthropic",
        strict_tool(
            **{
                S + "/$defs": {"node": RECURSIVE_NODE},
                S + "/properties/city": {"$ref": "#/$defs/node"},
            }
        ),
        S + "/$defs/node/properties/children/items/$ref",
        strict_tool(
            **{
                S + "/$defs": {"node": RECURSIVE_NODE},
                S + "/properties/city": {"$ref": "#/$defs/node"},
                "/strict": False,
            }
        ),
    ),
}


def declaration(**changes: Any) -> Any:
    return edit(GEMINI, **changes)


def openapi(**changes: Any) -> Any:
    return edit(GEMINI_OPENAPI, **changes)


JS = "/parametersJsonSchema"
OA = "/parameters"
GEMINI_CASES: dict[str, Case] = {
    "gemini.envelope.not-object": Case("gemini", None, ""),
    "gemini.envelope.missing": Case("gemini", declaration(**{"/name": DELETE}), ""),
    "gemini.envelope.field-type": Case(
        "gemini", declaration(**{"/description": 5}), "/description"
    ),
    "gemini.envelope.unknown-field": Case(
        "gemini", declaration(**{"/behavior": "BLOCKING"}), "/behavior"
    ),
    "gemini.envelope.parameters-form": Case(
        "gemini", declaration(**{OA: LOOSE}), JS, GEMINI_OPENAPI
    ),
    "gemini.envelope.response-form": Case(
        "gemini", openapi(**{"/responseJsonSchema": CITY}), "/responseJsonSchema"
    ),
    "gemini.name.pattern": Case(
        "gemini",
        declaration(**{"/name": "1st"}),
        "/name",
        declaration(**{"/name": "_weather.get-1"}),
    ),
    "gemini.json-schema.root-type": Case("gemini", declaration(**{JS: CITY}), JS),
    "gemini.json-schema.keyword": Case(
        "gemini",
        declaration(**{JS + "/properties/city/minLength": 1}),
        JS + "/properties/city/minLength",
    ),
    "gemini.json-schema.ref-siblings": Case(
        "gemini",
        declaration(
            **{
                JS + "/$defs": {"c": CITY},
                JS + "/properties/city": {"$ref": "#/$defs/c", "description": "A city."},
            }
        ),
        JS + "/properties/city",
        declaration(
            **{
                JS + "/$defs": {"c": CITY},
                JS + "/properties/city": {"$ref": "#/$defs/c", "$id": "https://x.dev/c"},
            }
        ),
    ),
    "gemini.json-schema.enum-value": Case(
        "gemini",
        declaration(**{JS + "/properties/unit/enum/0": True}),
        JS + "/properties/unit/enum/0",
        declaration(**{JS + "/properties/unit/enum/0": 1.5}),
    ),
    "gemini.schema.malformed": Case(
        "gemini", declaration(**{JS + "/properties": []}), JS + "/properties"
    ),
    "gemini.schema.too-large": Case("gemini", declaration(**{JS: TOO_DEEP}), JS + DEEP_STOP),
    "gemini.openapi.root-type": Case("gemini", openapi(**{OA + "/type": "ARRAY"}), OA),
    "gemini.openapi.field": Case(
        "gemini", openapi(**{OA + "/properties/city/const": "Paris"}), OA + "/properties/city/const"
    ),
    "gemini.openapi.type": Case(
        "gemini", openapi(**{OA + "/properties/city/type": "string"}), OA + "/properties/city/type"
    ),
    "gemini.openapi.type-array": Case(
        "gemini",
        openapi(**{OA + "/properties/unit/type": ["STRING", "NULL"]}),
        OA + "/properties/unit/type",
    ),
    "gemini.openapi.enum-value": Case(
        "gemini", openapi(**{OA + "/properties/unit/enum": [1, 2]}), OA + "/properties/unit/enum/0"
    ),
    "gemini.openapi.additional-properties": Case(
        "gemini", openapi(**{OA + "/additionalProperties": False}), OA + "/additionalProperties"
    ),
    "gemini.openapi.property-name": Case(
        "gemini", openapi(**{OA + "/properties/a-b": {"type": "STRING"}}), OA + "/properties/a-b"
    ),
    "gemini.openapi.defs-location": Case(
        "gemini", openapi(**{OA + "/properties/city/$defs": {}}), OA + "/properties/city/$defs"
    ),
    "gemini.openapi.ref-target": Case(
        "gemini",
        openapi(**{OA + "/properties/place/$ref": "#/properties/a"}),
        OA + "/properties/place/$ref",
    ),
}


DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def tool(**changes: Any) -> Any:
    return edit(MCP, **changes)


MCP_CASES: dict[str, Case] = {
    "mcp.tool.not-object": Case("mcp", 3, ""),
    "mcp.tool.missing": Case("mcp", tool(**{"/inputSchema": DELETE}), ""),
    "mcp.tool.field-type": Case("mcp", tool(**{"/title": 5}), "/title"),
    "mcp.tool.unknown-field": Case(
        "mcp",
        tool(**{"/execution": {"taskSupport": "optional"}}),
        "/execution",
        tool(**{"/execution": {"taskSupport": "optional"}}),
        kept_options={"version": "2025-11-25"},
    ),
    "mcp.name.pattern": Case(
        "mcp", tool(**{"/name": "get weather"}), "/name", tool(**{"/name": "a" * 128})
    ),
    "mcp.annotations.field-type": Case(
        "mcp", tool(**{"/annotations/readOnlyHint": "yes"}), "/annotations/readOnlyHint"
    ),
    "mcp.annotations.unknown-field": Case(
        "mcp", tool(**{"/annotations/dangerous": True}), "/annotations/dangerous"
    ),
    "mcp.input-schema.root-type": Case(
        "mcp", tool(**{"/inputSchema/type": "array"}), "/inputSchema"
    ),
    "mcp.output-schema.root-type": Case(
        "mcp",
        tool(**{"/outputSchema": {"type": "array"}}),
        "/outputSchema",
        tool(**{"/outputSchema": {"type": "array"}}),
        {"version": "2025-06-18"},
    ),
    "mcp.schema.malformed": Case(
        "mcp", tool(**{"/inputSchema/required": "city"}), "/inputSchema/required"
    ),
    "mcp.schema.too-large": Case(
        "mcp", tool(**{"/outputSchema": TOO_DEEP}), "/outputSchema" + DEEP_STOP
    ),
    "mcp.schema.dialect": Case(
        "mcp", tool(**{"/inputSchema/$schema": DRAFT_07}), "/inputSchema/$schema"
    ),
    "mcp.schema.ref-unresolved": Case(
        "mcp",
        tool(**{"/inputSchema/properties/city/$ref": "https://x.dev/c.json"}),
        "/inputSchema/properties/city/$ref",
        tool(
            **{
                "/inputSchema/properties/city/$ref": "https://x.dev/c.json",
                "/inputSchema/$defs/c/$id": "https://x.dev/c.json",
            }
        ),
    ),
}


def card(**changes: Any) -> Any:
    return edit(CARD, **changes)


A2A_CASES: dict[str, Case] = {
    "a2a.card.not-object": Case("a2a", [CARD], ""),
    "a2a.field.missing": Case(
        "a2a", card(**{"/skills/0/tags": []}), "/skills/0/tags", card(**{"/skills/0/examples": []})
    ),
    "a2a.field.type": Case("a2a", card(**{"/skills/0/tags": "weather"}), "/skills/0/tags"),
    "a2a.field.unknown": Case(
        "a2a", card(**{"/skills/0/inputSchema": STRICT}), "/skills/0/inputSchema"
    ),
    "a2a.field.media-type": Case(
        "a2a", card(**{"/skills/0/inputModes": ["json"]}), "/skills/0/inputModes/0"
    ),
    "a2a.skill.duplicate-id": Case("a2a", card(**{"/skills/1": CARD["skills"][0]}), "/skills/1/id"),
}

PAYLOAD_CASES = {**OPENAI, **ANTHROPIC_CASES, **GEMINI_CASES, **MCP_CASES, **A2A_CASES}


def strict_tools(count: int, schema: dict[str, Any] | None = None) -> list[Any]:
    return [
        strict_tool(**{"/name": f"t{i}", **({S: schema} if schema else {})}) for i in range(count)
    ]


def named(base: Any, pointer: str, count: int) -> list[Any]:
    return [edit(base, **{pointer: f"t{i}"}) for i in range(count)]


def optional(count: int) -> dict[str, Any]:
    properties = {f"p{i}": CITY for i in range(count)}
    return {"type": "object", "properties": properties, "additionalProperties": False}


UNIONS_17 = strict_object({f"p{i}": {"type": ["string", "null"]} for i in range(17)})

REQUEST_CASES: dict[str, Case] = {
    "openai.request.too-many-tools": Case(
        "openai.chat",
        named(CHAT, "/function/name", 129),
        "/128",
        named(CHAT, "/function/name", 128),
    ),
    "openai.request.too-many-formats": Case(
        "openai.text_format", [TEXT_FORMAT] * 2, "/1", [TEXT_FORMAT]
    ),
    "openai.request.duplicate-name": Case(
        "openai.response_format", [RESPONSE_FORMAT] * 2, "/1/json_schema/name", [RESPONSE_FORMAT]
    ),
    "anthropic.request.too-many-strict-tools": Case(
        "anthropic",
        strict_tools(21),
        "/20",
        [*strict_tools(20), edit(ANTHROPIC, **{"/name": "t20", "/strict": False})],
    ),
    "anthropic.request.too-many-optional-parameters": Case(
        "anthropic",
        [*strict_tools(1, optional(20)), strict_tool(**{S: optional(5)})],
        "/1/input_schema",
        [*strict_tools(1, optional(24)), edit(ANTHROPIC, **{S: optional(5), "/strict": False})],
    ),
    "anthropic.request.too-many-union-parameters": Case(
        "anthropic",
        [*strict_tools(8), strict_tool(**{S: UNIONS_17})],
        "/8/input_schema",
        strict_tools(16),
    ),
    "anthropic.request.duplicate-name": Case("anthropic", [ANTHROPIC] * 2, "/1/name"),
    "gemini.request.too-many-functions": Case(
        "gemini", named(GEMINI, "/name", 129), "/128", named(GEMINI, "/name", 128)
    ),
    "gemini.request.duplicate-name": Case("gemini", [GEMINI, GEMINI_OPENAPI], "/1/name"),
    "mcp.request.duplicate-name": Case("mcp", [MCP, MCP], "/1/name", named(MCP, "/name", 2)),
    "a2a.request.duplicate-name": Case("a2a", [CARD] * 2, "/1/name", named(CARD, "/name", 2)),
}


def found(problems: tuple[Problem, ...]) -> list[tuple[str, str]]:
    return [(problem.rule, problem.pointer) for problem in problems]


# --- every rule, both ways --------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_a_clean_payload_breaks_no_rule(target: str) -> None:
    assert check_payload(target, CLEAN[target]) == ()
    assert check_request(target, [CLEAN[target]]) == ()


@pytest.mark.parametrize("payload", [CHAT_LOOSE, GEMINI_OPENAPI])
def test_non_strict_and_openapi_forms_break_no_rule(payload: Any) -> None:
    target = "openai.chat" if payload is CHAT_LOOSE else "gemini"
    assert check_payload(target, payload) == ()


@pytest.mark.parametrize("rule", sorted(PAYLOAD_CASES))
def test_rule_fires_where_the_payload_breaks_it(rule: str) -> None:
    case = PAYLOAD_CASES[rule]
    assert (rule, case.pointer) in found(check_payload(case.target, case.broken, **case.options))


@pytest.mark.parametrize("rule", sorted(PAYLOAD_CASES))
def test_rule_stays_quiet_on_the_payload_that_keeps_it(rule: str) -> None:
    case = PAYLOAD_CASES[rule]
    kept = CLEAN[case.target] if case.kept is None else case.kept
    assert rule not in {p.rule for p in check_payload(case.target, kept, **case.kept_options)}


@pytest.mark.parametrize("rule", sorted(REQUEST_CASES))
def test_request_rule_fires_where_the_request_breaks_it(rule: str) -> None:
    case = REQUEST_CASES[rule]
    assert (rule, case.pointer) in found(check_request(case.target, case.broken))


@pytest.mark.parametrize("rule", sorted(REQUEST_CASES))
def test_request_rule_stays_quiet_on_the_request_that_keeps_it(rule: str) -> None:
    case = REQUEST_CASES[rule]
    kept = [CLEAN[case.target]] if case.kept is None else case.kept
    assert rule not in {p.rule for p in check_request(case.target, kept)}


def test_every_rule_has_a_case_and_a_stable_id() -> None:
    rule_ids = [
        *openai.RULE_IDS,
        *anthropic.RULE_IDS,
        *gemini.RULE_IDS,
        *mcp.RULE_IDS,
        *a2a.RULE_IDS,
    ]
    assert len(rule_ids) == len(set(rule_ids))
    assert set(rule_ids) == set(PAYLOAD_CASES) | set(REQUEST_CASES)
    assert all(
        re.fullmatch(r"(openai|anthropic|gemini|mcp|a2a)(\.[a-z0-9-]+){2}", r) for r in rule_ids
    )


# --- particular behaviour ---------------------------------------------------------------------


def test_strict_rules_apply_only_to_strict_tools() -> None:
    loose = chat(**{"/function/strict": False, P + "/additionalProperties": DELETE})
    assert check_payload("openai.chat", loose) == ()
    assert (
        check_payload(
            "openai.responses", edit(RESPONSES, **{"/strict": False, "/parameters": LOOSE})
        )
        == ()
    )


def test_formats_are_checked_strict_even_when_they_say_otherwise() -> None:
    loose = edit(TEXT_FORMAT, **{"/strict": False, "/schema": LOOSE})
    rules = {p.rule for p in check_payload("openai.text_format", loose)}
    assert {"openai.envelope.not-strict", "openai.strict.additional-properties"} <= rules


def test_nesting_is_counted_through_references() -> None:
    schema = {**nested(1, {"$ref": "#/$defs/deep"}), "$defs": {"deep": nested(10)}}
    assert ("openai.strict.too-deep", P + "/properties/a") in found(
        check_payload("openai.chat", chat(**{P: schema}))
    )


def test_recursion_is_allowed_in_openai_strict_mode() -> None:
    schema = strict_object({"child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}})
    assert check_payload("openai.chat", chat(**{P: schema})) == ()


def test_mcp_versions_differ_on_output_schemas_and_fields() -> None:
    array_output = tool(**{"/outputSchema": {"type": "array", "items": CITY}})
    assert check_payload("mcp", array_output, version="2026-07-28") == ()
    assert found(check_payload("mcp", array_output, version="2025-11-25")) == [
        ("mcp.output-schema.root-type", "/outputSchema")
    ]
    icons = tool(**{"/icons": [{"src": "https://x.dev/i.png"}]})
    assert check_payload("mcp", icons, version="2025-11-25") == ()
    assert found(check_payload("mcp", icons, version="2025-06-18")) == [
        ("mcp.tool.unknown-field", "/icons")
    ]


def test_gemini_takes_exactly_one_parameters_form() -> None:
    neither = declaration(**{JS: DELETE, "/responseJsonSchema": DELETE})
    assert found(check_payload("gemini", neither)) == [("gemini.envelope.parameters-form", "")]


def test_messages_say_what_is_wrong_in_one_sentence() -> None:
    for problem in check_payload("openai.chat", chat(**{P + "/properties/city/minLength": 1})):
        assert problem.message
        assert "\n" not in problem.message


@pytest.mark.parametrize(
    ("call", "arguments", "options"),
    [
        (check_payload, ("openai.assistants", {}), {}),
        (check_payload, ("openai.chat", {}), {"version": "1"}),
        (check_payload, ("mcp", MCP), {"version": "2024-11-05"}),
        (check_request, ("mcp", [MCP]), {"version": "2024-11-05"}),
        (check_request, ("gemini", "get_weather"), {}),
    ],
)
def test_misuse_raises_usage_error(
    call: Any, arguments: tuple[Any, ...], options: dict[str, Any]
) -> None:
    with pytest.raises(UsageError):
        call(*arguments, **options)


# --- never raising ----------------------------------------------------------------------------

KEYWORDS = [
    "type",
    "properties",
    "required",
    "items",
    "anyOf",
    "allOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "additionalProperties",
    "format",
    "pattern",
    "minItems",
    "name",
    "strict",
    "skills",
    "tags",
    "annotations",
    "inputSchema",
    "parameters",
    "function",
    "schema",
]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["object", "array", "OBJECT", "#", "#/$defs/a", "(?=x)\\1", "string"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYWORDS) | st.text(max_size=4), inner, max_size=5)
    ),
    max_leaves=25,
)
# Where each target keeps a schema (or a skill), so that garbage reaches the schema rules too.
PLACES = {
    "openai.chat": lambda v: chat(**{P: v}),
    "openai.responses": lambda v: edit(RESPONSES, **{"/parameters": v}),
    "openai.response_format": lambda v: edit(RESPONSE_FORMAT, **{"/json_schema/schema": v}),
    "openai.text_format": lambda v: edit(TEXT_FORMAT, **{"/schema": v}),
    "anthropic": lambda v: strict_tool(**{S: v}),
    "gemini": lambda v: openapi(**{OA: v, "/response": v}),
    "mcp": lambda v: tool(**{"/inputSchema": v, "/outputSchema": v, "/annotations": v}),
    "a2a": lambda v: card(**{"/skills/0": v, "/capabilities": v}),
}


def _problems_resolve(payload: Any, problems: tuple[Problem, ...]) -> None:
    for problem in problems:
        resolve(payload, problem.pointer)  # raises KeyError for a pointer into nothing
        assert problem.rule
        assert problem.message


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(TARGETS), JSON)
def test_no_value_makes_a_checker_raise(target: str, value: Any) -> None:
    _problems_resolve(value, check_payload(target, value))
    placed = PLACES[target](value)
    _problems_resolve(placed, check_payload(target, placed))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(TARGETS), st.lists(JSON, max_size=4))
def test_no_request_makes_a_checker_raise(target: str, payloads: list[Any]) -> None:
    _problems_resolve(payloads, check_request(target, payloads))


def test_a_payload_that_contains_itself_ends_the_walk() -> None:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False}
    schema["properties"] = {"self": schema}
    problems = check_payload("anthropic", {"name": "loop", "input_schema": schema})
    assert "anthropic.schema.too-large" in {problem.rule for problem in problems}
