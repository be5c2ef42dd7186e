"""Chat Completions responses for a `ScriptedModel` to answer, and what a request sent back.

The host tests (and the MCP chains that run a host) script the model with these.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["calls", "says", "tool_messages"]


def calls(*calls: tuple[str, str, Any]) -> dict[str, Any]:
    """A Chat Completions response asking for ``(id, tool, arguments)`` calls; arguments that
    are not a string are sent as their JSON text, as OpenAI does."""
    tool_calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for call_id, name, args in calls
    ]
    return _response({"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls")


def says(text: str) -> dict[str, Any]:
    """A Chat Completions response that answers ``text`` and ends the turn."""
    return _response({"role": "assistant", "content": text}, "stop")


def _response(message: dict[str, Any], finish: str) -> dict[str, Any]:
    # Only what the reader reads: tests/wire pins the API reference's whole body.
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


def tool_messages(request: dict[str, Any]) -> dict[str, str]:
    """The tool results a request sends back, by call id."""
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}
