"""MCP both ways, on the official SDK: a traced, gated client for any server (`McpClient`), a
server for a repository's own tools, a gating proxy in front of any server, and a gateway that
serves several servers as one (`Gateway`, over `Upstream` servers)."""

from __future__ import annotations

from schemawire.errors import ServerError
from schemawire.mcp._addresses import HttpServer, StdioServer
from schemawire.mcp._calls import McpCall
from schemawire.mcp._problems import SERVER_PROBLEMS
from schemawire.mcp._tools import RemoteTool
from schemawire.mcp.client import McpClient
from schemawire.mcp.gateway import Gateway, Upstream, open_gateway

__all__ = [
    "SERVER_PROBLEMS",
    "Gateway",
    "HttpServer",
    "McpCall",
    "McpClient",
    "RemoteTool",
    "ServerError",
    "StdioServer",
    "Upstream",
    "open_gateway",
]
