"""The Tools page without a repository, on the MCP server it was given: the server's tools,
each projected from the server's own schema, as `schemawire tools` reads them.

Every answer connects, lists and disconnects (a stdio server is started for it): the page
keeps no connection between requests, so nothing is left running when it is closed.
"""

from __future__ import annotations

from typing import Any

from schemawire._json import dumps
from schemawire.project import project_catalogue
from schemawire.types import ToolSpec
from schemawire.ui._config import UiConfig
from schemawire.ui._tools_call import mcp_address
from schemawire.ui._tools_form import form_schema

__all__ = ["server_tool", "server_tools"]


async def server_tools(config: UiConfig) -> list[dict[str, Any]]:
    """The server's tools as the page lists them.

    Raises:
        ServerError: the server cannot be reached or cannot list its tools.
    """
    return [_summary(tool) for tool in await _listed(config)]


async def server_tool(config: UiConfig, name: str, views: Any) -> dict[str, Any] | None:
    """One of the server's tools, with each of ``views`` projected from its schema; None when
    the server lists no such tool (or one whose schema cannot be used)."""
    tool = next((t for t in await _listed(config) if t.name == name), None)
    if tool is None or tool.spec is None:
        return None
    spec: ToolSpec = tool.spec
    return {
        **_summary(tool),
        "schema": dumps(spec.input_schema),
        "output_schema": dumps(spec.output_schema) if spec.output_schema is not None else None,
        "output_file": None,
        "form_schema": dumps(form_schema(spec.input_schema, {})),
        "projections": [_projection(spec, view) for view in views],
    }


async def _listed(config: UiConfig) -> list[Any]:
    from schemawire.mcp import McpClient

    async with McpClient(mcp_address(config), timeout=config.call_timeout) as client:
        return list(await client.list_tools())


def _summary(tool: Any) -> dict[str, Any]:
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
