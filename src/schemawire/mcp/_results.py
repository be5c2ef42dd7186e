"""A ``CallToolResult`` as the server sent it, read for the result gate."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from schemawire._json import json_in_text
from schemawire.gates import McpResult, ResultGate, Verdict
from schemawire.mcp._tools import RemoteTool, unwrapped

__all__ = ["failure_result", "result_verdict"]


def failure_result(line: str) -> dict[str, Any]:
    """Why a call has no result, as the error result a server would have sent."""
    return {"content": [{"type": "text", "text": line}], "isError": True}


def result_verdict(
    gate: ResultGate, tool: RemoteTool | None, call_id: str, raw: dict[str, Any]
) -> Verdict:
    """The result gate's verdict on ``raw``, a ``CallToolResult`` as the server sent it."""
    return gate.check(_result_from_wire(raw, tool), call_id=call_id)


def _result_from_wire(raw: dict[str, Any], tool: RemoteTool | None) -> McpResult:
    """A ``CallToolResult`` for the result gate. A single text block holding a JSON object or
    array is also the structured result, when the server gave none; a structured result the
    server wraps as ``{"result": ...}`` (`RemoteTool.wrapped`) is unwrapped."""
    result = McpResult.from_json(raw)
    structured, content = result.structured, result.content
    if (
        structured is None
        and not result.is_error
        and isinstance(content, list)
        and len(content) == 1
    ):
        structured = _json_in_text(content[0])
    if tool is not None and tool.wrapped:
        structured = unwrapped(structured)
    return replace(result, structured=structured)


def _json_in_text(block: Any) -> Any:
    if not isinstance(block, dict) or block.get("type") != "text":
        return None
    text = block.get("text")
    return json_in_text(text) if isinstance(text, str) else None
