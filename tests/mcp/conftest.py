"""Real MCP servers for the tests: the npm reference servers (installed by `make test` into
tests/peers) and `servers/scripted.py`, a server that misbehaves on purpose."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from schemawire.mcp import StdioServer

PEERS = Path(__file__).parents[1] / "peers" / "node_modules" / ".bin"
SCRIPTED = Path(__file__).parent / "servers" / "scripted.py"


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
