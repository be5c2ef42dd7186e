"""An MCP server on the official SDK (`MCPServer`) whose tool list grows: ``open_refunds`` adds
``refund_order`` and says so (``notifications/tools/list_changed``: to the subscribers of a
2026-07-28 session, and to a session that began with the ``initialize`` handshake).

    python growing.py
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("growing")


def refund_order(order_id: str, amount: float) -> str:
    """Refund part or all of a customer's order."""
    return f"refunded {amount} on {order_id}"


@app.tool()
async def open_refunds(ctx: Context) -> str:
    """Open the refund desk: its tools are listed from now on."""
    app.add_tool(refund_order)
    # a 2026-07-28 session is told if it subscribed (subscriptions/listen); an
    # initialize-handshake session, on its own channel
    await ctx.notify_tools_changed()
    await ctx.session.send_tool_list_changed()
    return "the refund desk is open"


@app.tool()
def order_status(order_id: str) -> str:
    """Where a customer's order is."""
    return f"{order_id} has shipped"


if __name__ == "__main__":
    app.run()
