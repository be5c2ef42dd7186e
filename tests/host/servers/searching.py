"""An MCP server on the official SDK (`MCPServer`) with a tool named ``search_tools``, as a
gateway that shortlists lists one.

    python searching.py
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer("searching")


@app.tool()
def search_tools(query: str) -> str:
    """Find the tools of the servers behind this one."""
    return f"nothing found for {query}"


if __name__ == "__main__":
    app.run()
