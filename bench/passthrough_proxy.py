"""A proxy made of the MCP SDK alone, for `bench/mcp_calls.py`: what any proxy hop costs.

It serves, over stdio, the tools of the server whose command follows, and forwards each call as
it came: no gates, no trace. schemawire's proxy does the same plus both gates and the trace, so
the difference between the two is what schemawire adds.

    python -m bench.passthrough_proxy COMMAND [ARGS...]
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def main(command: list[str]) -> None:
    upstream = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(upstream) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return await session.list_tools()

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            request = types.CallToolRequest(params=params)
            return await session.send_request(request, types.CallToolResult)

        server = Server("passthrough", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (server_read, server_write):
            await server.run(server_read, server_write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
