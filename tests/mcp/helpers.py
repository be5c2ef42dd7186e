"""Real MCP servers for the tests: the npm reference servers (installed by `make test` into
tests/peers), `servers/scripted.py`, a server that misbehaves on purpose, and
`servers/sdk_values.py`, an SDK server whose tools return what is not an object; and ways to
reach a server without our client (the SDK's own, in memory or over HTTP)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.server.lowlevel import Server
from pydantic import TypeAdapter

from schemawire.mcp import StdioServer
from schemawire.mcp._http import HttpOptions, http_app, running

PEERS = Path(__file__).parents[1] / "peers" / "node_modules" / ".bin"
SCRIPTED = Path(__file__).parent / "servers" / "scripted.py"
LATE = Path(__file__).parent / "servers" / "late.py"
SDK_VALUES = Path(__file__).parent / "servers" / "sdk_values.py"  # not numbers.py: a stdlib name

_RAW = TypeAdapter(dict[str, Any])


def peer(name: str, *args: str, env: dict[str, str] | None = None) -> StdioServer:
    """An npm reference server (``everything``, ``filesystem``, ``memory``) over stdio."""
    binary = PEERS / f"mcp-server-{name}"
    if not binary.exists() or shutil.which("node") is None:
        pytest.fail(f"{binary} is missing: run `make test` (it installs tests/peers)")
    return StdioServer(str(binary), args, env)


def scripted(*args: str) -> StdioServer:
    """The misbehaving server; ``--version`` sets the protocol version it answers."""
    return StdioServer(sys.executable, (str(SCRIPTED), *args))


def late(*args: str) -> StdioServer:
    """The server whose ``late`` tool answers when ``release`` is called (``--once PATH``: it
    refuses the handshake once restarted)."""
    return StdioServer(sys.executable, (str(LATE), *args))


def numbers() -> StdioServer:
    """The official SDK's `MCPServer` with tools that return a list and a number."""
    return StdioServer(sys.executable, (str(SDK_VALUES),), name="numbers")


@asynccontextmanager
async def serving(server: Server[Any], options: HttpOptions | None = None) -> AsyncIterator[str]:
    """``server`` over Streamable HTTP on 127.0.0.1 (a free port) while the block runs: its URL."""
    options = options or HttpOptions(port=0)
    async with running(http_app(server, options), options) as listening:
        yield f"http://127.0.0.1:{listening.port}/mcp"


def sdk_client(server: Server[Any] | StdioServerParameters | str, mode: Any = "legacy") -> Client:
    """The SDK's own client of ``server``: in memory (a `Server`), a process over stdio, or over
    HTTP (a URL). In ``"legacy"`` mode an in-memory server reads JSON-RPC messages, as over a
    transport; in a 2026-07-28 mode the SDK hands it each request directly."""
    return Client(server, mode=mode, cache=None, read_timeout_seconds=30)


async def raw_call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Send one ``tools/call`` as given; the ``CallToolResult`` exactly as the server sent it
    (the SDK's client would check it against the listed output schema)."""
    request = mcp_types.CallToolRequest(
        params=mcp_types.CallToolRequestParams(name=name, arguments=arguments)
    )
    session: Any = client.session  # the SDK types results as models; the tests read JSON
    result: dict[str, Any] = await session.send_request(request, _RAW, 30)
    return result
