"""The gating proxy: an MCP server in front of any other MCP server.

Clients see the upstream's tools (with the repository's canonical schema in place of the
upstream's own, where the repository has the tool); every call is checked by the argument gate
before it goes upstream and by the result gate before it comes back, and every message on both
sides is a hop of the trace. This is the validation the MCP SDK's server advertises but never
applies.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from schemawire.mcp.client import McpClient, ServerError
from schemawire.mcp.server import mcp_result
from schemawire.project.mcp import project_mcp
from schemawire.trace import Trace

__all__ = ["UpstreamTools"]


class UpstreamTools:
    """The tools of an upstream server, served through the gates of an `McpClient`."""

    def __init__(self, client: McpClient) -> None:
        """
        Args:
            client: connected to the upstream; its repository (if any) supplies canonical
                schemas, its gate options apply to every call.
        """
        self.client = client

    async def list_tools(self, version: str) -> list[dict[str, Any]]:
        """The upstream's tools; a tool the repository defines is listed from its canonical
        schema (so clients see the schema the gate applies).

        Raises:
            ServerError: the upstream is gone and cannot be restarted.
        """
        await self._ensure_connected()
        tools = await self.client.list_tools()
        documents = self.client.repository.documents if self.client.repository else None
        listed = []
        for tool in tools:
            if tool.canonical and tool.spec is not None:
                listed.append(project_mcp(tool.spec, version=version, documents=documents).payload)
            else:
                listed.append(tool.listed)
        return listed

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, *, version: str, trace: Trace,
        label: str,
    ) -> dict[str, Any]:  # fmt: skip
        try:
            await self._ensure_connected()
        except ServerError as error:
            return mcp_result(_unreachable(name, error))
        if name not in {tool.name for tool in await self.client.list_tools()}:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
        call = await self.client.call(name, arguments if arguments is not None else {})
        return mcp_result(call.output)  # the client put both verdicts in the trace

    async def _ensure_connected(self) -> None:
        """Restart an upstream that went away (once per call): a crashed stdio server comes
        back for the next call."""
        if not self.client.connected:
            await self.client.reconnect()


def _unreachable(name: str, error: ServerError) -> Any:
    from schemawire.types import Rejection, ToolResult, Violation

    rejection = Rejection("arguments", "tool_failed", name, None, None,
                          (Violation("", "tool", f"the upstream server is unavailable: "
                                     f"{error.reason}"),),
                          f"{name} cannot be reached now; tell the user.")  # fmt: skip
    return ToolResult("", rejection.to_json(), True)
