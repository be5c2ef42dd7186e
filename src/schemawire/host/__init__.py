"""The host: the agent loop across model APIs, its model clients and its tools.

- `Host` runs a conversation: tools projected for the model's API, every call gated, results
  gated, every hop traced.
- Models: `HttpModel` (OpenAI Chat and Responses, Anthropic, Gemini, OpenAI-compatible servers)
  and `ScriptedModel` (recorded responses, offline); `model_from_spec` reads ``--model``.
- Tools: `PythonTool` (a function) and `McpTool` (a tool of an MCP server).
"""

from __future__ import annotations

from schemawire.host.loop import CallRecord, Host, HostOptions, RunResult
from schemawire.host.models import HttpModel, Model, ModelError, ScriptedModel, model_from_spec
from schemawire.host.tools import McpTool, PythonTool, ToolRunner, mcp_tools, python_tools

__all__ = [
    "CallRecord",
    "Host",
    "HostOptions",
    "HttpModel",
    "McpTool",
    "Model",
    "ModelError",
    "PythonTool",
    "RunResult",
    "ScriptedModel",
    "ToolRunner",
    "mcp_tools",
    "model_from_spec",
    "python_tools",
]
