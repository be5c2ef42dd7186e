"""The host: the agent loop across model APIs, its model clients and its tools.

- `Host` runs a conversation: tools projected for the model's API (a large catalogue
  shortlisted per request, with ``HostOptions(shortlist=k)``), every call gated, results
  gated, every hop traced.
- Models: `HttpModel` (OpenAI Chat and Responses, Anthropic, Gemini, OpenAI-compatible servers;
  streamed by default) and `ScriptedModel` (recorded responses, offline); `model_from_spec`
  reads ``--model``.
- Tools: `PythonTool` (a function) and `McpTool` (a tool of an MCP server).

The names load on first use, so that a run of a scripted model never imports the HTTP client
(`HttpModel` brings it), and importing one part (``schemawire.host.model_spec`` for
`model_from_spec`, say) does not import the loop. Flow files are `schemawire.flows`, below the
host; `schemawire.host.workflow` runs them (`FlowRunner`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schemawire._lazy import LazyNames

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
    from schemawire.host.tools import (
        McpTool,
        PythonTool,
        ToolRunner,
        current_idempotency_key,
        mcp_tools,
        python_tools,
    )
    from schemawire.host.workflow import FlowResult, FlowRunner, JournaledTool

__all__ = [
    "CallRecord",
    "DeltaSink",
    "FlowResult",
    "FlowRunner",
    "Host",
    "HostOptions",
    "HttpModel",
    "JournaledTool",
    "McpTool",
    "Model",
    "ModelError",
    "PoolingModel",
    "PythonTool",
    "RunResult",
    "ScriptedModel",
    "StreamingModel",
    "ToolRunner",
    "current_idempotency_key",
    "mcp_tools",
    "model_from_spec",
    "python_tools",
]

# Each module's names again, as in its own __all__: the facade names them to load lazily.
_HOMES = {
    "schemawire.host.loop": ("CallRecord", "Host", "HostOptions", "RunResult"),
    "schemawire.host.models": (
        "DeltaSink",
        "Model",
        "ModelError",
        "ScriptedModel",
        "PoolingModel",
        "StreamingModel",
    ),
    "schemawire.host.model_spec": ("model_from_spec",),
    "schemawire.host.providers": ("HttpModel",),
    "schemawire.host.tools": (
        "McpTool",
        "PythonTool",
        "ToolRunner",
        "current_idempotency_key",
        "mcp_tools",
        "python_tools",
    ),
    "schemawire.host.workflow": ("FlowResult", "FlowRunner", "JournaledTool"),
}
_NAMES = LazyNames("schemawire.host", _HOMES)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)
