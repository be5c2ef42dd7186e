"""A server's listed tools, and the gates a call to each passes.

The schema a call is checked against is the repository's canonical one when the repository has
a tool of that name, else the server's own ``inputSchema`` (imported as the importers do).

Output schemas that are not objects: MCP before 2026-07-28 takes only object output schemas, so
servers (the official SDKs, and ours) list such a schema wrapped, ``{"type": "object",
"properties": {"result": <schema>}, "required": ["result"]}``, and send ``{"result": ...}``.
Where the canonical output schema is not an object and the server lists it wrapped, the client
unwraps the structured result before the result gate checks it (`RemoteTool.wrapped`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from schemawire.errors import SchemawireError
from schemawire.gates import ArgumentGate, ArgumentOptions, ResultGate, ResultOptions
from schemawire.project.importers import import_mcp
from schemawire.project.mcp import SCHEMA_META
from schemawire.schema.repository import Repository
from schemawire.types import ToolSpec

__all__ = [
    "OBJECT_OUTPUT_ONLY",
    "RemoteTool",
    "gates_for",
    "is_object_schema",
    "is_wrapped_output",
    "remote_tools",
    "unwrapped",
    "wrapped_output",
]

OBJECT_OUTPUT_ONLY = ("2025-06-18", "2025-11-25")
"""The versions a server lists tools for (`schemawire.project.mcp.VERSIONS`) whose output
schemas, and so structured results, must be objects."""


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """One tool as a server listed it.

    Attributes:
        name: the name the server calls it by.
        listed: the tool exactly as ``tools/list`` gave it.
        spec: the tool the gates check calls against; None when neither the repository nor the
            server gives a usable schema (``problem`` says why, and every call is refused).
        canonical: ``spec`` comes from the repository, not from the server.
        problem: why the server's schema cannot be used, when it cannot.
        wrapped: the server lists the output schema wrapped as ``{"result": ...}`` where
            ``spec``'s is not an object: its structured results are unwrapped to be checked.
    """

    name: str
    listed: dict[str, Any]
    spec: ToolSpec | None
    canonical: bool = False
    problem: str | None = None
    wrapped: bool = False


def remote_tools(
    listed: list[dict[str, Any]], server: str, repository: Repository | None
) -> dict[str, RemoteTool]:
    """The tools of one listing, by name, each with the spec its calls are checked against."""
    canonical = {spec.name: spec for spec in repository.tools()} if repository else {}
    tools: dict[str, RemoteTool] = {}
    for entry in listed:
        name = entry.get("name")
        if not isinstance(name, str):
            continue  # nothing can call a tool without a name
        if name in canonical:
            spec = canonical[name]
            wrapped = _lists_wrapped(entry, spec)
            tools[name] = RemoteTool(name, entry, spec, canonical=True, wrapped=wrapped)
            continue
        try:
            tools[name] = RemoteTool(name, entry, _server_spec(entry, server))
        except SchemawireError as error:
            tools[name] = RemoteTool(name, entry, None, problem=str(error))
    return tools


def gates_for(
    tool: RemoteTool,
    repository: Repository | None,
    arguments: ArgumentOptions | None,
    results: ResultOptions | None,
) -> tuple[ArgumentGate, ResultGate]:
    """The two gates of ``tool`` (which must have a spec).

    Raises:
        SchemaError: a schema does not compile.
    """
    assert tool.spec is not None
    if tool.canonical and repository is not None:
        return (
            ArgumentGate.from_repository(repository, tool.name, arguments),
            ResultGate.from_repository(repository, tool.name, results),
        )
    return ArgumentGate(tool.spec, options=arguments), ResultGate(tool.spec, options=results)


def is_object_schema(schema: Any) -> bool:
    """Whether an output schema is an object schema (``"type": "object"``), as MCP before
    2026-07-28 requires; any other is wrapped."""
    return isinstance(schema, dict) and schema.get("type") == "object"


def is_wrapped_output(schema: Any) -> bool:
    """Whether ``schema`` is a wrapped output schema: an object with the one required member
    ``result``."""
    if not is_object_schema(schema):
        return False
    properties, required = schema.get("properties"), schema.get("required")
    return (
        isinstance(properties, dict)
        and set(properties) == {"result"}
        and isinstance(required, list)
        and "result" in required
    )


def wrapped_output(schema: Any) -> dict[str, Any]:
    """``schema`` as an object schema: ``{"result": <schema>}``."""
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


def unwrapped(structured: Any) -> Any:
    """The value of a wrapped structured result ``{"result": value}``; anything else as it is
    (the gate then says what is wrong with it)."""
    if isinstance(structured, dict) and set(structured) == {"result"}:
        return structured["result"]
    return structured


def _lists_wrapped(entry: dict[str, Any], spec: ToolSpec) -> bool:
    output = spec.output_schema
    return (
        output is not None
        and not is_object_schema(output)
        and is_wrapped_output(entry.get("outputSchema"))
    )


def _server_spec(entry: dict[str, Any], server: str) -> ToolSpec:
    (imported,) = import_mcp([entry], id_base=f"mcp://{_host_label(server)}/")
    identity = _listed_identity(entry)
    output = imported.output_schema
    return ToolSpec(
        imported.name,
        _identified(imported.schema, identity),
        _identified(output, identity.get("output")) if output is not None else None,
    )


def _listed_identity(entry: dict[str, Any]) -> dict[str, Any]:
    """What a listed tool's ``_meta`` says its canonical schemas are (a schemawire server puts
    their ``$id`` and ``x-version`` there); nothing when it says nothing usable."""
    meta = entry.get("_meta")
    identity = meta.get(SCHEMA_META) if isinstance(meta, dict) else None
    return identity if isinstance(identity, dict) else {}


def _identified(schema: dict[str, Any], identity: Any) -> dict[str, Any]:
    """The schema under the ``$id`` and ``x-version`` the server gave it; without the importer's
    placeholder ``x-version`` when it gave none (a made-up version would mislead)."""
    named = {key: value for key, value in schema.items() if key != "x-version"}
    if not isinstance(identity, dict):
        return named
    if isinstance(identity.get("$id"), str):
        named["$id"] = identity["$id"]
    if isinstance(identity.get("x-version"), str):
        named["x-version"] = identity["x-version"]
    return named


def _host_label(server: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", server.lower()).strip("-") or "server"
