"""MCP: one Tool object of a ``tools/list`` result, for a given protocol version.

Rules from projections.md §5 (versions §5.1, the Tool object §5.2, JSON Schema use §5.4). The
version is an option: ``"2025-06-18"``, ``"2025-11-25"`` or ``"2026-07-28"`` (the default).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from schemawire._json import quoted
from schemawire._pointer import join
from schemawire.errors import UsageError

# The checkers' shared pieces: each target module imports what its own rules use.
from schemawire.project.checkers import (
    Flaw,
    Member,
    Problem,
    SchemaTree,
    describe,
    duplicate_names,
    malformed_json_schema,
    member_flaws,
    resolve_ref,
    run_rules,
    walk_schema,
    walk_stopped,
)

__all__ = ["RULE_IDS", "VERSIONS", "check_payload", "check_request"]

VERSIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
LATEST = "2026-07-28"
# tools.mdx (normative), not SEP-986's 1-64 with "/" (§5.2, §11.11).
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
DIALECT = "https://json-schema.org/draft/2020-12/schema"
_TOOL = {
    "name": Member("string", True),
    "title": Member("string"),
    "description": Member("string"),
    "inputSchema": Member("object", True),
    "outputSchema": Member("object"),
    "annotations": Member("object"),
    "_meta": Member("object"),
}
SHAPES = {
    "2025-06-18": _TOOL,
    "2025-11-25": {**_TOOL, "icons": Member("objects"), "execution": Member("object")},
    # execution moved into the io.modelcontextprotocol/tasks extension (§5.1).
    "2026-07-28": {**_TOOL, "icons": Member("objects")},
}
ANNOTATIONS = {
    "title": Member("string"),
    **dict.fromkeys(
        ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"), Member("boolean")
    ),
}
_SCHEMA_KEYS = ("inputSchema", "outputSchema")


@dataclass(frozen=True, slots=True)
class _Tool:
    version: str
    payload: dict[Any, Any]


def check_payload(target: str, payload: Any, options: Mapping[str, Any]) -> Iterator[Problem]:
    """Every rule of the MCP target (at ``options["version"]``) that ``payload`` breaks.

    Raises:
        UsageError: an unknown version.
    """
    version = _version(options)
    if not isinstance(payload, dict):
        message = f"an MCP Tool must be a JSON object, not {describe(payload)}"
        yield Problem("", "mcp.tool.not-object", message)
        return
    yield from run_rules(TOOL_RULES, _Tool(version, payload))
    for key in _SCHEMA_KEYS:
        schema = payload.get(key)
        if isinstance(schema, dict):
            yield from run_rules(SCHEMA_RULES, walk_schema(schema, join("", key)))


def _version(options: Mapping[str, Any]) -> str:
    version = options.get("version", LATEST)
    if version not in VERSIONS:
        raise UsageError(
            f"unknown MCP version {quoted(version)}; expected one of {', '.join(VERSIONS)}"
        )
    return str(version)


# --- the Tool object --------------------------------------------------------------------------


def _members(tool: _Tool, which: str) -> list[Flaw]:
    return member_flaws(tool.payload, SHAPES[tool.version], "", "an MCP Tool")[which]


def _annotations(tool: _Tool, which: str) -> list[Flaw]:
    annotations = tool.payload.get("annotations")
    if not isinstance(annotations, dict):
        return []
    return member_flaws(annotations, ANNOTATIONS, "/annotations", "ToolAnnotations")[which]


def check_name(tool: _Tool) -> Iterator[Flaw]:
    name = tool.payload.get("name")
    if isinstance(name, str) and not NAME.match(name):
        yield Flaw("/name", f"tool name {describe(name)} must be 1-128 of A-Z a-z 0-9 _ - .")


def check_input_root(tool: _Tool) -> Iterator[Flaw]:
    schema = tool.payload.get("inputSchema")
    if isinstance(schema, dict) and schema.get("type") != "object":
        yield Flaw("/inputSchema", 'inputSchema must be "type": "object" at its root')


def check_output_root(tool: _Tool) -> Iterator[Flaw]:
    schema = tool.payload.get("outputSchema")
    older = tool.version != LATEST
    if older and isinstance(schema, dict) and schema.get("type") != "object":
        message = f'MCP {tool.version} restricts outputSchema to "type": "object" at its root'
        yield Flaw("/outputSchema", message)


TOOL_RULES: dict[str, Callable[[_Tool], Iterable[Flaw]]] = {
    "mcp.tool.missing": lambda tool: _members(tool, "missing"),
    "mcp.tool.field-type": lambda tool: _members(tool, "type"),
    "mcp.tool.unknown-field": lambda tool: _members(tool, "unknown"),
    "mcp.name.pattern": check_name,
    "mcp.annotations.field-type": lambda tool: _annotations(tool, "type"),
    "mcp.annotations.unknown-field": lambda tool: _annotations(tool, "unknown"),
    "mcp.input-schema.root-type": check_input_root,
    "mcp.output-schema.root-type": check_output_root,
}


# --- inputSchema and outputSchema (§5.4) ------------------------------------------------------


def check_dialect(tree: SchemaTree) -> Iterator[Flaw]:
    # Peers MUST support 2020-12 and MAY refuse any other dialect they do not support.
    declared = tree.root.schema.get("$schema")
    if isinstance(declared, str) and declared.rstrip("#") != DIALECT:
        message = f"$schema {describe(declared)} is not 2020-12, the one dialect peers must take"
        yield Flaw(join(tree.pointer, "$schema"), message)


def check_ref_resolves(tree: SchemaTree) -> Iterator[Flaw]:
    ids, anchors = _declared(tree, "$id"), _declared(tree, "$anchor")
    for node in tree.nodes:
        ref = node.schema.get("$ref") if isinstance(node.schema, dict) else None
        if isinstance(ref, str) and not _resolves(tree, ref, ids, anchors):
            message = (
                f"$ref {describe(ref)} resolves to nothing in the schema; peers must not fetch it"
            )
            yield Flaw(join(node.pointer, "$ref"), message)


def _declared(tree: SchemaTree, keyword: str) -> set[str]:
    return {
        node.schema[keyword]
        for node in tree.nodes
        if isinstance(node.schema, dict) and isinstance(node.schema.get(keyword), str)
    }


def _resolves(tree: SchemaTree, ref: str, ids: set[str], anchors: set[str]) -> bool:
    """Whether ``ref`` names something inside the schema: a local pointer or anchor, or a
    resource the schema embeds under that ``$id`` (matched as written)."""
    base, _, fragment = ref.partition("#")
    if not base and not fragment:
        return True  # "" and "#" name the document itself
    if base:
        return base in ids
    if fragment and not fragment.startswith("/"):
        return fragment in anchors
    return resolve_ref(tree, ref) is not None


SCHEMA_RULES: dict[str, Callable[[SchemaTree], Iterable[Flaw]]] = {
    "mcp.schema.malformed": malformed_json_schema,
    "mcp.schema.too-large": walk_stopped,
    "mcp.schema.dialect": check_dialect,
    "mcp.schema.ref-unresolved": check_ref_resolves,
}


# --- request ----------------------------------------------------------------------------------


def check_request(
    target: str, payloads: list[Any], options: Mapping[str, Any]
) -> Iterator[Problem]:
    """Every rule over the tools of one ``tools/list``: names are unique per server.

    Raises:
        UsageError: an unknown version.
    """
    _version(options)
    named = [(f"/{i}/name", p.get("name")) for i, p in enumerate(payloads) if isinstance(p, dict)]
    for flaw in duplicate_names(named):
        yield Problem(flaw.pointer, "mcp.request.duplicate-name", flaw.message)


RULE_IDS = ("mcp.tool.not-object", *TOOL_RULES, *SCHEMA_RULES, "mcp.request.duplicate-name")
