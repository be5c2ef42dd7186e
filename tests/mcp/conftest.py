"""Real MCP servers for the tests: the npm reference servers (installed by `make test` into
tests/peers), `servers/scripted.py`, a server that misbehaves on purpose, and
`servers/sdk_values.py`, an SDK server whose tools return what is not an object."""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.server.lowlevel import Server

from schemawire.mcp import StdioServer
from schemawire.mcp._http import HttpOptions, http_app, running

PEERS = Path(__file__).parents[1] / "peers" / "node_modules" / ".bin"
SCRIPTED = Path(__file__).parent / "servers" / "scripted.py"
SDK_VALUES = Path(__file__).parent / "servers" / "sdk_values.py"  # not numbers.py: a stdlib name


def peer(name: str, *args: str, env: dict[str, str] | None = None) -> StdioServer:
    """An npm reference server (``everything``, ``filesystem``, ``memory``) over stdio."""
    binary = PEERS / f"mcp-server-{name}"
    if not binary.exists() or shutil.which("node") is None:
        pytest.fail(f"{binary} is missing: run `make test` (it installs tests/peers)")
    return StdioServer(str(binary), args, env)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def everything() -> StdioServer:
    return peer("everything", "stdio")


@pytest.fixture
def filesystem(tmp_path: Path) -> StdioServer:
    root = tmp_path / "files"
    root.mkdir()
    return peer("filesystem", str(root))


@pytest.fixture
def memory(tmp_path: Path) -> StdioServer:
    return peer("memory", env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})


def scripted(*args: str) -> StdioServer:
    """The misbehaving server; ``--version`` sets the protocol version it answers."""
    return StdioServer(sys.executable, (str(SCRIPTED), *args))


def numbers() -> StdioServer:
    """The official SDK's `MCPServer` with tools that return a list and a number."""
    return StdioServer(sys.executable, (str(SDK_VALUES),), name="numbers")


@asynccontextmanager
async def serving(server: Server[Any], options: HttpOptions | None = None) -> AsyncIterator[str]:
    """``server`` over Streamable HTTP on 127.0.0.1 (a free port) while the block runs: its URL."""
    options = options or HttpOptions(port=0)
    async with running(http_app(server, options), options) as listening:
        yield f"http://127.0.0.1:{listening.port}/mcp"
