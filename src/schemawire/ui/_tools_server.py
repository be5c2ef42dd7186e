"""The MCP server's tools as the Tools page shows them: without a repository, all of them;
with one, those the repository does not have (marked server-only). Each is projected from the
server's own schema, as `schemawire tools` reads them.

The list comes over the launch's one session (`schemawire.ui._tools_session`), kept by the
client until the server says it changed: showing a tool costs no round trip.
"""

from __future__ import annotations

from typing import Any

from schemawire._json import dumps
from schemawire.project import project_catalogue
from schemawire.trace import Trace
from schemawire.types import ToolSpec
from schemawire.ui._tools_form import form_schema
from schemawire.ui._tools_session import ServerSession

__all__ = ["server_tool", "server_tools"]


async def server_tools(
    session: ServerSession, *, server_only: bool = False
) -> list[dict[str, Any]]:
    """The server's tools as the page lists them (``server_only``: beside a repository's).

    Raises:
        ServerError: the server cannot be reached or cannot list its tools.
    """
    return [_summary(tool, server_only) for tool in await _listed(session)]


async def server_tool(
    session: ServerSession, name: str, views: Any, *, server_only: bool = False
) -> dict[str, Any] | None:
    """One of the server's tools, with each of ``views`` projected from its schema; None when
    the server lists no such tool (or one whose schema cannot be used).

    Raises:
        ServerError: the server cannot be reached or cannot list its tools.
    """
    tool = next((t for t in await _listed(session) if t.name == name), None)
    if tool is None or tool.spec is None:
        return None
    spec: ToolSpec = tool.spec
    return {
        **_summary(tool, server_only),
        "schema": dumps(spec.input_schema),
        "output_schema": dumps(spec.output_schema) if spec.output_schema is not None else None,
        "output_file": None,
        "form_schema": dumps(form_schema(spec.input_schema, {})),
        "projections": [_projection(spec, view) for view in views],
    }


async def _listed(session: ServerSession) -> list[Any]:
    async with session.using(Trace(keep=False)) as client:  # listing is no run: no trace
        return list(await client.list_tools())


def _summary(tool: Any, server_only: bool) -> dict[str, Any]:
    listed = tool.listed
    title = listed.get("title")
    return {
        "name": tool.name,
        "title": title if isinstance(title, str) else None,
        "description": str(listed.get("description") or ""),
        "version": None,
        "file": None,
        "id": None,
        "implemented": False,
        "source": "mcp",
        "server_only": server_only,
        "problem": tool.problem,
    }


def _projection(spec: ToolSpec, view: Any) -> dict[str, Any]:
    [found] = project_catalogue([spec], view.target, **view.options).projections
    return {
        "label": view.label,
        "target": view.target,
        "options": view.options,
        "command": "",
        "file": "",
        "projected_name": found.projected_name,
        "payload": dumps(found.payload),
        "losses": [loss.to_json() for loss in found.losses],
        "lossless": found.lossless,
        "blocked": found.blocked,
    }
