"""A small MCP server over stdio that stops reading its input on request, for the supervision
tests (a client must notice, stop it, and start another; no process may outlive its parent).

It speaks newline-delimited JSON-RPC by hand (no SDK), so it starts fast and can do what a
well-made server never would. Each process appends ``<pid> <parent pid>`` to the file given by
``--pids`` as it starts, so a test can count the processes started and check each is gone.

    python stalling.py --pids FILE [--stubborn]

``--stubborn``: ignore SIGTERM, and keep running after stdin closes (only SIGKILL stops it).
``--restarts-fail TEXT``: a process started after the first (the pids file names one already)
writes TEXT to stderr and exits before the handshake, as a server that lost its database would.

Tools: ``echo`` answers; ``stall`` never answers and stops reading stdin for good (the process
stays alive, sleeping); ``deafen`` answers, then does the same; ``crash`` exits mid-call.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

from stdio_lines import ECHO, any_object_tool, send

TOOLS = [
    ECHO,
    any_object_tool("stall", "Stops reading stdin."),
    any_object_tool("deafen", "Answers, then stops reading stdin."),
    any_object_tool("crash", "Exits mid-call."),
]


def sleep_forever() -> None:
    while True:
        time.sleep(3600)


def result(method: str, request: dict) -> dict | None:
    if method == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "serverInfo": {"name": "stalling", "version": "1.0.0"},
            "capabilities": {"tools": {}},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "ping":
        return {}
    if method != "tools/call":
        return None
    name = request["params"]["name"]
    if name == "stall":
        sleep_forever()
    if name == "crash":
        os._exit(3)
    message = (request["params"].get("arguments") or {}).get("message", "")
    return {"content": [{"type": "text", "text": str(message)}]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pids", required=True)
    parser.add_argument("--stubborn", action="store_true")
    parser.add_argument("--restarts-fail")
    options = parser.parse_args()
    if options.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if options.restarts_fail and os.path.exists(options.pids):
        sys.stderr.write(options.restarts_fail + "\n")
        sys.exit(1)
    with open(options.pids, "a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()} {os.getppid()}\n")
    for line in sys.stdin:
        request = json.loads(line)
        rid = request.get("id")
        if rid is None:
            continue  # notifications: initialized, cancelled
        answer = result(request.get("method"), request)
        if answer is None:
            error = {"code": -32601, "message": "Method not found"}
            send({"jsonrpc": "2.0", "id": rid, "error": error})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": answer})
        if request.get("method") == "tools/call" and request["params"]["name"] == "deafen":
            sleep_forever()
    if options.stubborn:
        sleep_forever()


if __name__ == "__main__":
    main()
