"""An MCP server on the official SDK (`MCPServer`) whose tools return what is not an object: the
SDK lists their output schemas wrapped as ``{"result": ...}`` and sends ``{"result": value}``.

    python sdk_values.py
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer("numbers")


@app.tool()
def primes(limit: int) -> list[int]:
    """The primes below ``limit``."""
    return [n for n in range(2, limit) if all(n % d for d in range(2, n))]


@app.tool()
def count(word: str) -> int:
    """How many characters ``word`` has."""
    return len(word)


if __name__ == "__main__":
    app.run()
