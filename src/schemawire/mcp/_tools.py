"""A server's listed tools, and the gates a call to each passes.

The schema a call is checked against is the repository's canonical one when the repository has
a tool of that name, else the server's own ``inputSchema`` (imported as the importers do).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from schemawire.errors import SchemawireError
from schemawire.gates import ArgumentGate, ArgumentOptions, ResultGate, ResultOptions
from schemawire.project.importers import import_mcp
from schemawire.schema.repository import Repository
from schemawire.types import ToolSpec

__all__ = ["RemoteTool", "gates_for", "remote_tools"]


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
    """

    name: str
    listed: dict[str, Any]
    spec: ToolSpec | None
    canonical: bool = False
    problem: str | None = None


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
            tools[name] = RemoteTool(name, entry, canonical[name], canonical=True)
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
        return (ArgumentGate.from_repository(repository, tool.name, arguments),
                ResultGate.from_repository(repository, tool.name, results))  # fmt: skip
    return ArgumentGate(tool.spec, options=arguments), ResultGate(tool.spec, options=results)


def _server_spec(entry: dict[str, Any], server: str) -> ToolSpec:
    (imported,) = import_mcp([entry], id_base=f"mcp://{_host_label(server)}/")
    output = imported.output_schema
    # Without the importer's placeholder x-version: the server gives none, and it would mislead.
    return ToolSpec(
        imported.name,
        _unversioned(imported.schema),
        _unversioned(output) if output is not None else None,
    )


def _unversioned(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema without the importer's placeholder ``x-version``: the server gave none."""
    return {key: value for key, value in schema.items() if key != "x-version"}


def _host_label(server: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", server.lower()).strip("-") or "server"
