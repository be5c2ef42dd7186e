"""What the hand-written stdio servers beside this file share: writing a JSON-RPC line, and the
tools they list alike. Each server runs as a script, so it imports this as a sibling module."""

from __future__ import annotations

import json
import sys

ECHO = {
    "name": "echo",
    "description": "Echoes the message.",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
}


def any_object_tool(name: str, description: str) -> dict:
    """A tool listing that takes any object: what it does is its name's business."""
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
