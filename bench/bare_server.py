"""The bench's ``lookup`` tool on the MCP SDK alone: no gates, no trace, no redaction.

What `bench/hostile.py`, `bench/load.py` and `bench/soak.py` set schemawire beside. Over
Streamable HTTP it serves as the SDK's own ``streamable_http_app`` does by default (stateful,
answers as server-sent events, the SDK's DNS-rebinding checks), on a free loopback port that it
announces on stderr; over stdio it is the upstream of schemawire's gating proxy.

    python -m bench.bare_server --http     # prints "serving MCP at http://127.0.0.1:PORT/mcp"
    python -m bench.bare_server            # stdio
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from bench.serving import LOOKUP_SCHEMA

_TOOL = types.Tool(
    name="lookup",
    description=LOOKUP_SCHEMA["description"],
    input_schema={k: v for k, v in LOOKUP_SCHEMA.items() if k not in ("$id", "x-version")},
)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_TOOL])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    city, items = arguments.get("city", ""), arguments.get("items") or ()
    answer = {"city": city[:20] if isinstance(city, str) else "", "items": len(items)}
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(answer))])


def build() -> Server[Any]:
    return Server("bench-lookup (bare SDK)", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio() -> None:
    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http() -> None:
    app = build().streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        with anyio.fail_after(30):
            while not server.started:
                await anyio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(
            f"bare server: serving MCP at http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    anyio.run(serve_http if parser.parse_args().http else serve_stdio)


if __name__ == "__main__":
    main()
