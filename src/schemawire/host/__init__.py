"""The host: the agent loop across model APIs, its model clients and its tools.

- `Host` runs a conversation: tools projected for the model's API, every call gated, results
  gated, every hop traced.
- Models: `HttpModel` (OpenAI Chat and Responses, Anthropic, Gemini, OpenAI-compatible servers;
  streamed by default) and `ScriptedModel` (recorded responses, offline); `model_from_spec`
  reads ``--model``.
- Tools: `PythonTool` (a function) and `McpTool` (a tool of an MCP server).

The names load on first use, so that a run of a scripted model never imports the HTTP client
(`HttpModel` brings it), and importing one part (``schemawire.host.model_spec`` for
`model_from_spec`, say) does not import the loop. Flow files are `schemawire.flows`, below the
host; `schemawire.host.workflow` runs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schemawire.host.loop import CallRecord, Host, HostOptions, RunResult
    from schemawire.host.model_spec import model_from_spec
    from schemawire.host.models import (
        DeltaSink,
        Model,
        ModelError,
        PoolingModel,
        ScriptedModel,
        StreamingModel,
    )
    from schemawire.host.providers import HttpModel
    from schemawire.host.tools import McpTool, PythonTool, ToolRunner, mcp_tools, python_tools

__all__ = [
    "CallRecord",
    "DeltaSink",
    "Host",
    "HostOptions",
    "HttpModel",
    "McpTool",
    "Model",
    "ModelError",
    "PoolingModel",
    "PythonTool",
    "RunResult",
    "ScriptedModel",
    "StreamingModel",
    "ToolRunner",
    "mcp_tools",
    "model_from_spec",
    "python_tools",
]

# Each module's names again, as in its own __all__: the facade names them to load lazily.
_HOMES = {
    "loop": ("CallRecord", "Host", "HostOptions", "RunResult"),
    "models": (
        "DeltaSink",
        "Model",
        "ModelError",
        "ScriptedModel",
        "PoolingModel",
        "StreamingModel",
    ),
    "model_spec": ("model_from_spec",),
    "providers": ("HttpModel",),
    "tools": ("McpTool", "PythonTool", "ToolRunner", "mcp_tools", "python_tools"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'schemawire.host' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"schemawire.host.{module}"), name)
    globals()[name] = value
    return value
