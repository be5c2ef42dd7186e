"""Helpers the eval tests import: the refund example's flow and cases, and responses to script."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from schemawire.cli._app import app
from tests.helpers import EXAMPLES

REFUND = EXAMPLES / "refund"
FLOW = REFUND / "flows" / "refund.json"
CASES = REFUND / "evals"
REQUEST = "I was charged twice for order A-1042; please refund the 20."

WriteCase = Callable[..., Path]
"""The `write_case` fixture."""


def flow_case(**expect: Any) -> dict[str, Any]:
    """The happy path's case, expecting ``expect``."""
    return {"flow": "flows/refund.json", "input": REQUEST, "expect": expect}


def flow_copy(folder: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    """The refund flow, copied into ``folder`` as ``edit`` changes it (its scripts named by
    absolute path, so that the copy plays them)."""
    flow = json.loads(FLOW.read_text(encoding="utf-8"))
    for agent in flow["agents"].values():
        script = (FLOW.parent / agent["model"].removeprefix("script:")).resolve()
        agent["model"] = f"script:{script}"
    edit(flow)
    path = folder / "flow.json"
    path.write_text(json.dumps(flow, indent=2), encoding="utf-8")
    return path


def chat(content: str | None = None, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One Chat Completions response: an answer, or tool calls."""
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        for i, (name, arguments) in enumerate(calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ]
    }


def script(*responses: dict[str, Any]) -> dict[str, Any]:
    return {"api": "openai.chat", "responses": list(responses)}


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)
