"""Pydantic AI with schemawire's gates: `SchemawireToolset`, a Pydantic AI toolset of a
repository's tools (Python functions, and the tools of MCP servers through our `McpClient`).

Each tool carries its canonical input schema, references into other files of the repository
resolved (the MCP projection of it: self-contained, every keyword kept). Pydantic AI's own
argument validation is left open (an args validator that accepts any JSON): our argument gate
decides, and a refused call raises `ModelRetry` with our structured error as the retry prompt,
so the model reads our violations (JSON Pointers) and the function never runs. Pydantic AI's
retry limit still applies. Results pass our result gate (output schema, budget, redaction)
before the model reads them. Every call is one tool span of a schemawire `Trace`, inside one
run span per agent run.

Example::

    agent = Agent(model, toolsets=[SchemawireToolset("examples/support-desk")])
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    from pydantic_ai import ModelRetry, RunContext
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
except ImportError as error:  # pragma: no cover - the extra is installed in the tests
    raise ImportError(
        "schemawire.integrations.pydantic_ai needs Pydantic AI: "
        "pip install 'schemawire[pydantic-ai]'"
    ) from error

from schemawire.gates import ArgumentOptions, ResultOptions
from schemawire.host.tools import ToolRunner, mcp_tools, python_tools
from schemawire.integrations._gated import GatedTool, model_text
from schemawire.mcp import McpClient
from schemawire.project.mcp import project_mcp
from schemawire.schema.repository import Repository
from schemawire.trace import Span, Trace

__all__ = ["SchemawireToolset"]

_RAW = "\x00schemawire:raw"
"""The key under which `_OpenArguments` passes on arguments that are not a JSON object (our gate
refuses them with its own error, not Pydantic AI's)."""


class _OpenArguments:
    """An args validator that refuses nothing: what the model sent reaches our gate as it is
    (a JSON object as a dict; anything else, unparsed, under `_RAW`)."""

    def validate_json(self, input: str | bytes | bytearray, **_: Any) -> dict[str, Any]:
        try:
            value = json.loads(input)
        except ValueError:
            return {
                _RAW: input if isinstance(input, str) else bytes(input).decode(errors="replace")
            }
        return value if isinstance(value, dict) else {_RAW: input}

    def validate_python(self, input: Any, **_: Any) -> dict[str, Any]:
        return input if isinstance(input, dict) else {_RAW: input}


_OPEN = _OpenArguments()


class SchemawireToolset(AbstractToolset[Any]):
    """A repository's tools as a Pydantic AI toolset, every call through both gates.

    Example::

        agent = Agent("openai:gpt-5", toolsets=[SchemawireToolset("examples/support-desk")])

    Args:
        repository: the schema repository (or its folder).
        functions: each Python tool's implementation by tool name (default: the repository's
            ``[serve.tools]``; pass ``{}`` for MCP tools only).
        mcp: MCP clients whose servers' tools join the toolset (connected by the caller, or
            connected here while the toolset is entered); their calls pass our argument gate,
            and the client's result gate.
        trace: where every hop goes (default: a fresh in-memory `Trace`).
        max_retries: refused calls of one tool the model may retry (Pydantic AI's limit).
        results: budget and redaction of the Python tools' result gates.
        options: the argument gate's options.
        id: the toolset's id among an agent's toolsets.

    Raises:
        UsageError: a function names a tool the repository does not have.
        ConfigError: a ``[serve.tools]`` function cannot be imported.
    """

    def __init__(
        self,
        repository: Repository | str | Path,
        functions: Mapping[str, Callable[..., Any]] | None = None,
        *,
        mcp: McpClient | Sequence[McpClient] = (),
        trace: Trace | None = None,
        max_retries: int = 1,
        results: ResultOptions | None = None,
        options: ArgumentOptions | None = None,
        id: str | None = None,
    ) -> None:
        self.repository = (
            repository if isinstance(repository, Repository) else Repository.load(repository)
        )
        self.trace = trace if trace is not None else Trace()
        self.max_retries = max_retries
        self._options = options
        self._id = id
        self._clients = [mcp] if isinstance(mcp, McpClient) else list(mcp)
        self._entered: list[McpClient] = []
        self._tools: dict[str, ToolsetTool[Any]] = {}
        self._gated: dict[str, GatedTool] = {}
        self._mcp_listed = not self._clients
        for runner in python_tools(self.repository, functions, results):
            self._add(runner)

    @property
    def id(self) -> str | None:
        return self._id

    @property
    def gated(self) -> Mapping[str, GatedTool]:
        """Each tool's gated call, by tool name."""
        return self._gated

    def _add(self, runner: ToolRunner) -> None:
        """``runner`` as one tool of the set: its self-contained canonical schema, its gate."""
        repository = getattr(runner, "repository", None)
        documents = repository.documents if repository is not None else None
        projection = project_mcp(runner.spec, documents=documents)
        gated = GatedTool.of(runner, self.trace, projection=projection, options=self._options)
        definition = ToolDefinition(
            name=gated.name,
            description=gated.description or None,
            parameters_json_schema=projection.payload["inputSchema"],
            # Not strict: a strict transform makes every property required, which is not the
            # canonical schema; our gate reads the canonical one.
            strict=False,
        )
        self._gated[gated.name] = gated
        self._tools[gated.name] = ToolsetTool(
            toolset=self, tool_def=definition, max_retries=self.max_retries, args_validator=_OPEN
        )

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        """This run's toolset: the same tools, in a run span of their own."""
        return _RunToolset(self, ctx)

    async def __aenter__(self) -> SchemawireToolset:
        for client in self._clients:
            if not client.connected:
                self._entered.append(await client.__aenter__())
        if not self._mcp_listed:
            for client in self._clients:
                client.record_to(self.trace)
                for runner in await mcp_tools(client):
                    self._add(runner)
            self._mcp_listed = True
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        entered, self._entered = self._entered, []
        for client in reversed(entered):
            await client.__aexit__(None, None, None)
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return self._tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run one call through the gates: our refusal as a retry prompt, else what the result
        gate passed: its structured content as a value (Pydantic AI serialises it for the
        model, and scans a text result for look-alike framing on every later request, which
        costs milliseconds in a long run), or the text of `model_text`."""
        arguments = tool_args.get(_RAW, tool_args)
        record = await self._gated[name].call(arguments, ctx.tool_call_id)
        if record.result is None:
            raise ModelRetry(model_text(record))
        structured = record.output.structured
        return structured if structured is not None else model_text(record)


class _RunToolset(AbstractToolset[Any]):
    """One agent run's view of a `SchemawireToolset`: its tools, inside a ``run`` span that
    opens when the run enters the toolset and closes when it leaves."""

    def __init__(self, tools: SchemawireToolset, ctx: RunContext[Any]) -> None:
        self.tools = tools
        self._name = ctx.model.model_name if ctx.model is not None else "pydantic-ai"
        self._span: Span | None = None
        self._depth = 0

    @property
    def id(self) -> str | None:
        return self.tools.id

    async def __aenter__(self) -> _RunToolset:
        self._depth += 1
        if self._depth == 1:
            await self.tools.__aenter__()
            self._span = self.tools.trace.span("run", self._name, framework="pydantic-ai")
            self._span.__enter__()
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        self._depth -= 1
        if self._depth == 0:
            span, self._span = self._span, None
            if span is not None:
                span.__exit__(*args)
            await self.tools.__aexit__(*args)
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=tool.tool_def,
                max_retries=tool.max_retries,
                args_validator=tool.args_validator,
            )
            for name, tool in (await self.tools.get_tools(ctx)).items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        return await self.tools.call_tool(name, tool_args, ctx, tool)
