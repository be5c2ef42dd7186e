"""A small MCP server over stdio that misbehaves on purpose, for the client's fault tests.

It speaks newline-delimited JSON-RPC by hand (no SDK), so it can do what a well-made server
never would: hang, die mid-call, write garbage to stdout, send results that break their own
output schema. Each behaviour is a tool; the protocol version it answers is ``--version``.

    python scripted.py [--version 2025-06-18] [--page-size N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from stdio_lines import ECHO, any_object_tool, send

OUTPUT = {
    "type": "object",
    "properties": {"total": {"type": "integer"}},
    "required": ["total"],
    "additionalProperties": False,
}
TOOLS = [
    ECHO,
    {
        "name": "add",
        "description": "Adds two integers.",
        "outputSchema": OUTPUT,
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "wrong_total",
        "description": "Returns a total that is a string.",
        "outputSchema": OUTPUT,
        "inputSchema": {"type": "object"},
    },
    any_object_tool("leak", "Returns a record holding a key."),
    any_object_tool("hang", "Never answers."),
    any_object_tool("crash", "Exits mid-call."),
    any_object_tool("garbage", "Writes garbage, then exits."),
    any_object_tool("progress", "Reports progress, then answers."),
    any_object_tool("grow", "Adds a tool and says the list changed."),
    any_object_tool("stack", "Fails with a stack trace."),
    {
        "name": "broken",
        "description": "Its schema is not a schema.",
        "inputSchema": {"type": "object", "properties": {"x": {"minimum": "ten"}}},
    },
]
EXTRA = any_object_tool("grown", "Appears after grow.")


def text(value: object) -> list[dict]:
    return [{"type": "text", "text": value if isinstance(value, str) else json.dumps(value)}]


def call(name: str, arguments: dict, request: dict, tools: list) -> dict | None:  # noqa: PLR0911, PLR0912 - one branch per behaviour
    if name == "echo":
        return {"content": text(arguments.get("message"))}
    if name == "add":
        total = {"total": arguments["a"] + arguments["b"]}
        return {"content": text(total), "structuredContent": total}
    if name == "wrong_total":
        return {"content": text({"total": "12"}), "structuredContent": {"total": "12"}}
    if name == "leak":
        return {
            "content": text(
                {"user": "ana", "api_key": "sk-proj-" + "Q" * 20 + "T3BlbkFJ" + "x" * 20}
            )
        }
    if name == "hang":
        return None
    if name == "crash":
        sys.stderr.write("scripted: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "garbage":
        sys.stdout.write("this is not json-rpc\n")
        sys.stdout.flush()
        os._exit(4)
    if name == "progress":
        token = request["params"].get("_meta", {}).get("progressToken")
        for step in (1, 2, 3):
            if token is not None:
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step, "total": 3},
                    }
                )
        return {"content": text("done")}
    if name == "grow":
        if EXTRA not in tools:
            tools.append(EXTRA)
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return {"content": text("grown")}
    if name == "stack":
        trace = 'Traceback (most recent call last):\n  File "/srv/app.py", line 3\nKeyError: x'
        return {"content": text(trace), "isError": True}
    return {"content": text(f"Unknown tool: {name}"), "isError": True}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default="2025-06-18")
    parser.add_argument("--page-size", type=int, default=4)
    options = parser.parse_args()
    tools = list(TOOLS)
    for line in sys.stdin:
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        if rid is None:
            continue  # notifications: initialized, cancelled
        if method == "initialize":
            result = {
                "protocolVersion": options.version,
                "serverInfo": {"name": "scripted", "version": "1.0.0"},
                "capabilities": {"tools": {"listChanged": True}},
            }
        elif method == "tools/list":
            start = int(request.get("params", {}).get("cursor") or 0)
            result = {"tools": tools[start : start + options.page_size]}
            if start + options.page_size < len(tools):
                result["nextCursor"] = str(start + options.page_size)
        elif method == "tools/call":
            params = request["params"]
            result = call(params["name"], params.get("arguments") or {}, request, tools)
            if result is None:
                continue
        elif method == "ping":
            result = {}
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    time.sleep(0)


if __name__ == "__main__":
    main()
