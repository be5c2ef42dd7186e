"""The agent frameworks people already run, with schemawire's gates inside: each module turns a
repository's tools (Python functions, or an MCP server's tools through `McpClient`) into the
framework's own tool objects, every call through the argument gate and every result through
the result gate, every hop in a schemawire `Trace`.

- `schemawire.integrations.pydantic_ai` (extra ``pydantic-ai``): a Pydantic AI toolset.
- `schemawire.integrations.openai_agents` (extra ``openai-agents``): OpenAI Agents SDK tools.
- `schemawire.integrations.langchain` (extra ``langchain``): LangChain tools (LangGraph's
  ``ToolNode`` runs them).

Each imports its framework, so import the one you use; this package imports none of them.
`GatedTool` is what they share: one gated, traced call.
"""

from __future__ import annotations

from schemawire.integrations._gated import GatedTool, gated_tools, model_text

__all__ = ["GatedTool", "gated_tools", "model_text"]
