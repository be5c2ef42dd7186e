"""A small MCP server over stdio whose answers come late, for the forwarder's tests.

``late`` is not answered until ``release`` is called: its result (holding a key) then comes
first, answering a call the client may have given up on. ``prompts/get`` is never answered.
``resources/read`` makes the server die, a key in its last words. With ``--once PATH``, only
the start that creates PATH answers ``initialize``; a restarted server refuses it.

    python late.py [--once PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from stdio_lines import ECHO, any_object_tool, send

KEY = "sk-proj-" + "Q" * 20 + "T3BlbkFJ" + "x" * 20
TOOLS = [
    ECHO,
    any_object_tool("late", "Answers when release is called."),
    any_object_tool("release", "Answers the late calls, then itself."),
]


def text(value: object) -> list[dict]:
    return [{"type": "text", "text": json.dumps(value)}]


def called(request: dict, held: list) -> dict | None:
    """The result of a tools/call, or None when it is held for later."""
    params = request["params"]
    if params["name"] == "echo":
        return {"content": [{"type": "text", "text": params["arguments"]["message"]}]}
    if params["name"] == "late":
        held.append(request["id"])
        return None
    for late in held:
        send({"jsonrpc": "2.0", "id": late, "result": {"content": text({"api_key": KEY})}})
    held.clear()
    return {"content": text("released")}


def die() -> None:
    sys.stderr.write(f"late: dying, my key is {KEY}\n")
    sys.stderr.flush()
    os._exit(5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--once")
    options = parser.parse_args()
    restarted = options.once is not None and os.path.exists(options.once)
    if options.once is not None:
        open(options.once, "a").close()
    held: list = []
    for line in sys.stdin:
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        result: dict | None = {}
        if rid is None:
            continue  # notifications: initialized, cancelled
        if method == "initialize" and restarted:
            error = {"code": -32603, "message": "restarts are refused"}
            send({"jsonrpc": "2.0", "id": rid, "error": error})
            continue
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "serverInfo": {"name": "late", "version": "1.0.0"},
                "capabilities": {"tools": {"listChanged": True}, "resources": {}},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            result = called(request, held)
        elif method == "resources/read":
            die()
        elif method == "prompts/get":
            result = None
        if result is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
