"""Fixtures of the MCP tests: the npm reference servers over stdio. (Helpers they import:
`tests.mcp.helpers`.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from schemawire.mcp import StdioServer
from tests.mcp.helpers import peer


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
