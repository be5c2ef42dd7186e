"""LangChain tools with schemawire's gates inside: `structured_tools` turns a repository's tools
into ``StructuredTool``s (LangGraph's ``ToolNode`` runs them), each call through the argument
gate and the result gate of `GatedTool`, each hop in a schemawire `Trace`.

The model is sent the tool's canonical input schema, its references into other files of the
repository inlined (the MCP projection: canonical, self-contained), as a dict ``args_schema``:
LangChain then neither validates nor coerces the arguments, so our gate is the only one that
reads them. A refusal (or a failed result) is the tool message's content, our JSON, with
``status="error"``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

try:
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "schemawire.integrations.langchain needs LangChain: pip install 'schemawire[langchain]'"
    ) from error

from schemawire.integrations._gated import GatedTool, gated_tools, model_text
from schemawire.project import project
from schemawire.schema.repository import Repository
from schemawire.trace import Trace

__all__ = ["structured_tools"]


def structured_tools(
    repository: Repository | str | Path,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    *,
    trace: Trace | None = None,
) -> list[StructuredTool]:
    """The repository's Python tools as LangChain ``StructuredTool``s, every call gated.

    Args:
        repository: the schema repository, or its folder.
        functions: each tool's implementation by tool name (default: ``[serve.tools]``).
        trace: where every call's span and hops go (default: a new in-memory trace).
    """
    if not isinstance(repository, Repository):
        repository = Repository.load(Path(repository))
    trace = trace if trace is not None else Trace()
    return [_structured(tool, repository) for tool in gated_tools(repository, functions, trace)]


def _structured(tool: GatedTool, repository: Repository) -> StructuredTool:
    schema = project(tool.runner.spec, "mcp", documents=repository.documents).payload
    args_schema = dict(schema.get("inputSchema", schema))

    async def call(**arguments: Any) -> str:
        record = await tool.call(arguments)
        text = model_text(record)
        if record.status != "ok":
            raise ToolException(text)  # handle_tool_error makes it the content, status "error"
        return text

    def call_sync(**arguments: Any) -> str:
        return asyncio.run(call(**arguments))

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=args_schema,
        func=call_sync,
        coroutine=call,
        handle_tool_error=_as_content,
    )


def _as_content(error: ToolException) -> str:
    """Our structured refusal, verbatim, as what the model reads."""
    return str(error)
