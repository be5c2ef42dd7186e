"""A call to a tool the server does not have: the spec's JSON-RPC error, naming `tool_unknown`."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from schemawire.mcp.server import LocalTools, build_server
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from tests.helpers import WriteRepo, tool_schema

pytestmark = pytest.mark.anyio


async def test_an_unknown_tool_is_the_json_rpc_error_that_names_tool_unknown(
    write_repo: WriteRepo,
) -> None:
    root = write_repo({"schemas/tools/lookup.json": tool_schema("lookup")})
    backend = LocalTools(Repository.load(root), {"lookup": lambda city: {"city": city}})
    server = build_server(backend, name="t", version="1.0.0", trace=Trace())
    with anyio.fail_after(10):
        async with Client(server) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("teleport", {})
    error: Any = raised.value.error
    assert (error.code, error.data) == (mcp_types.INVALID_PARAMS, {"code": "tool_unknown"})
