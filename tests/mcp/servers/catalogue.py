"""An MCP server on the official SDK's low-level `Server` that lists a large catalogue: ``--tools
N`` tools (300 by default), each a verb on a thing (``archive_invoice_042``) with a schema of its
own, for the gateway's ``--shortlist`` tests. A call answers with the tool's name and its
arguments.

    python catalogue.py [--tools 300]
"""

from __future__ import annotations

import argparse
import itertools
import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

VERBS = (
    "archive",
    "create",
    "delete",
    "export",
    "find",
    "merge",
    "rename",
    "share",
    "tag",
    "update",
)
THINGS = ("invoice", "ticket", "contact", "meeting", "playlist", "recipe", "shipment", "photo")


def catalogue(size: int) -> list[dict[str, Any]]:
    """``size`` tools, each named and described for its verb, its thing and its number."""
    pairs = itertools.cycle(itertools.product(VERBS, THINGS))
    tools = []
    for number, (verb, thing) in zip(range(size), pairs, strict=False):
        tools.append(
            {
                "name": f"{verb}_{thing}_{number:03d}",
                "description": f"{verb.capitalize()} a {thing} in workspace {number}.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        f"{thing}_id": {"type": "string", "description": f"The {thing}'s id."},
                        "dry_run": {"type": "boolean"},
                    },
                    "required": [f"{thing}_id"],
                    "additionalProperties": False,
                },
            }
        )
    return tools


def build(size: int) -> Server[Any]:
    tools = [types.Tool.model_validate(tool) for tool in catalogue(size)]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        answer = json.dumps({"tool": params.name, "arguments": params.arguments or {}})
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer)])

    return Server("catalogue", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(size: int) -> None:
    server = build(size)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=300)
    anyio.run(main, parser.parse_args().tools)
