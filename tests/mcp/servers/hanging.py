"""A small MCP server over stdio that stops answering ``tools/list`` on request, or never
answers the handshake, for the gateway's tests of a hung upstream (a listing must not wait for
it longer than its deadline, nor a restart that hangs stall anyone's listing).

It speaks newline-delimited JSON-RPC by hand (no SDK), so it starts fast and can do what a
well-made server never would.

    python hanging.py [--hang-handshake-if FILE] [--extra-tool-if FILE] [--handshake-delay S]

``--hang-handshake-if FILE``: when FILE exists as the process starts, it reads every request
and answers none (a restart that hangs in the handshake).
``--extra-tool-if FILE``: when FILE exists as the process starts, it lists one more tool,
``extra`` (a server started again after an upgrade).
``--handshake-delay S``: answer ``initialize`` only after S seconds (a slow starter).

Tools: ``echo`` answers; ``hang_lists`` says its tool list changed, answers, and from then on
leaves every ``tools/list`` unanswered (pings and calls are still answered); ``forget_echo``
lists ``echo`` no more, says its tool list changed, and answers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from stdio_lines import ECHO, any_object_tool, send

TOOLS = [
    ECHO,
    any_object_tool("hang_lists", "Stops answering tools/list."),
    any_object_tool("forget_echo", "Lists echo no more."),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hang-handshake-if")
    parser.add_argument("--extra-tool-if")
    parser.add_argument("--handshake-delay", type=float, default=0.0)
    options = parser.parse_args()
    deaf = options.hang_handshake_if is not None and os.path.exists(options.hang_handshake_if)
    extra = options.extra_tool_if is not None and os.path.exists(options.extra_tool_if)
    tools = [*TOOLS, any_object_tool("extra", "Listed after an upgrade.")] if extra else TOOLS
    lists_hang = False
    for line in sys.stdin:
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        if deaf or rid is None or (method == "tools/list" and lists_hang):
            continue
        if method == "initialize":
            time.sleep(options.handshake_delay)
            answer: dict = {
                "protocolVersion": "2025-06-18",
                "serverInfo": {"name": "hanging", "version": "1.0.0"},
                "capabilities": {"tools": {"listChanged": True}},
            }
        elif method == "tools/list":
            answer = {"tools": tools}
        elif method == "ping":
            answer = {}
        elif method == "tools/call":
            name = request["params"]["name"]
            message = (request["params"].get("arguments") or {}).get("message", name)
            answer = {"content": [{"type": "text", "text": str(message)}]}
            if name == "forget_echo":
                tools = [tool for tool in tools if tool is not ECHO]
            if name in ("hang_lists", "forget_echo"):
                lists_hang = lists_hang or name == "hang_lists"
                # Said as the list changes, before the answer: a client that reads the answer
                # first could call again on the old list (the gateway's tests raced on it).
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                send({"jsonrpc": "2.0", "id": rid, "result": answer})
                continue
        else:
            error = {"code": -32601, "message": "Method not found"}
            send({"jsonrpc": "2.0", "id": rid, "error": error})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": answer})


if __name__ == "__main__":
    main()
