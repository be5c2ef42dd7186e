"""The tools a host offers a model, behind one interface: Python functions and MCP tools.

A runner is given arguments a gate has already accepted and returns the result gate's verdict
on what the tool gave back. It never raises: a tool that fails, hangs or vanishes is a result
the model can read.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from schemawire._invoke import DEFAULT_TIMEOUT, invoke
from schemawire.gates import ResultGate, ResultOptions, Verdict
from schemawire.schema.implementations import implemented_specs, load_implementations
from schemawire.schema.repository import Repository
from schemawire.schema.validator import CompiledSchema
from schemawire.trace import Trace, record_verdicts
from schemawire.types import ToolResult, ToolSpec

if TYPE_CHECKING:  # the MCP SDK loads only for MCP tools: a host of Python tools never needs it
    from schemawire.mcp import McpClient

__all__ = [
    "McpTool",
    "PythonTool",
    "ToolRunner",
    "current_idempotency_key",
    "mcp_tools",
    "python_tools",
]

current_idempotency_key: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "schemawire_idempotency_key", default=None
)
"""The idempotency key of the tool call being run, set by a workflow's journal, for tools that
pass it on: a Python tool whose function takes ``idempotency_key`` receives it."""


class ToolRunner(Protocol):
    """One tool the host can run."""

    spec: ToolSpec
    """The tool, with its canonical schemas."""
    validator: CompiledSchema | None
    """Its input schema compiled with its references, if the runner has it (else the host
    compiles ``spec.input_schema``)."""
    repository: Repository | None
    """The repository its schemas come from: where their ``$ref``s resolve (None: the schemas
    stand alone). A runner without this member is taken to have none."""

    async def run(self, call_id: str, accepted: Verdict, trace: Trace) -> Verdict:
        """Run the tool with the arguments ``accepted`` holds; the result gate's verdict. The
        runner traces the call, with both verdicts."""
        ...


@dataclass(slots=True)
class PythonTool:
    """A Python function as a tool: called with the arguments as keywords; a synchronous
    function runs in a worker thread.

    Build one from a repository with `python_tools`, or from a spec written in code::

        PythonTool(ToolSpec("get_weather", schema), get_weather)

    Attributes:
        spec: the tool.
        function: what runs it, called with the accepted arguments as keywords.
        results: the gate its results pass (default: the spec's output schema, if any, with
            the default budget and redaction).
        repository: where the spec's ``$ref``s resolve, when it comes from a repository.
        validator: the input schema compiled with its references (default: from
            ``repository``, else from ``spec.input_schema``).
        timeout: seconds a call may take before it is answered with ``tool_failed``.
    """

    spec: ToolSpec
    function: Callable[..., Any]
    results: ResultGate | None = None
    repository: Repository | None = None
    validator: CompiledSchema | None = None
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        repository = self.repository
        if self.validator is None and repository is not None:
            file = repository.find(f"tools/{self.spec.name}")
            self.validator = repository.validator(file) if file is not None else None
        if self.results is None:
            self.results = _result_gate(self.spec, repository)

    def _arguments(self, accepted: dict[str, Any]) -> dict[str, Any]:
        """The keywords to call with: the arguments, and the call's idempotency key when the
        function takes one (a workflow's journal sets it)."""
        key = current_idempotency_key.get()
        if key is not None and _takes_key(self.function):
            return {**accepted, "idempotency_key": key}
        return accepted

    async def run(self, call_id: str, accepted: Verdict, trace: Trace) -> Verdict:
        assert self.results is not None  # set in __post_init__
        label = f"python:{self.spec.name}"
        sent = {"call": call_id, "tool": self.spec.name, "arguments": accepted.value}
        trace.record("host", label, "python", "send", sent, verdict=accepted.to_json())
        outcome = await invoke(self.function, self._arguments(accepted.value), self.timeout)
        verdict = self.results.check(outcome, call_id=call_id)
        value: ToolResult = verdict.value
        received = {"call": call_id, "content": value.content, "isError": value.is_error}
        trace.record(label, "host", "python", "receive", received, verdict=verdict.to_json())
        return verdict


def _result_gate(spec: ToolSpec, repository: Repository | None) -> ResultGate:
    """The tool's result gate: the repository's, when it holds the tool; else one of the spec's
    own output schema (its ``$ref``s resolved in the repository, if there is one)."""
    if repository is not None and repository.find(f"tools/{spec.name}") is not None:
        return ResultGate.from_repository(repository, spec.name)
    return ResultGate(spec, documents=repository.documents if repository is not None else None)


@functools.lru_cache(maxsize=1024)
def _takes_key(function: Callable[..., Any]) -> bool:
    try:
        return "idempotency_key" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


@dataclass(slots=True)
class McpTool:
    """A tool of an MCP server, called through a connected `McpClient` (which traces the
    JSON-RPC and applies the result gate)."""

    spec: ToolSpec
    client: McpClient
    validator: CompiledSchema | None = None
    repository: Repository | None = None

    @property
    def trace(self) -> Trace:
        """Where the client records the JSON-RPC of its calls."""
        return self.client.trace

    async def run(self, call_id: str, accepted: Verdict, trace: Trace) -> Verdict:
        # The JSON-RPC hops are the client's (on its own trace); the verdicts go beside them.
        record_verdicts(trace, "host", accepted)
        call = await self.client.call_accepted(self.spec.name, accepted, call_id=call_id)
        if call.result is not None:
            return call.result
        # The call was not sent (the server is gone, or has no such tool): the client's
        # refusal says why, and the model reads it as the call's result.
        rejection = call.rejection
        assert rejection is not None  # a call with no result was refused (`McpCall.output`)
        return Verdict.reject(rejection, gate="results", tool=self.spec.name, value=call.output)


def python_tools(
    repository: Repository,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    results: ResultOptions | None = None,
) -> list[PythonTool]:
    """The repository's tools that ``functions`` implement (tool name -> function), each checked
    against the repository's schemas (references resolved) and answered through its result gate.

    Args:
        repository: where the tools' schemas are.
        functions: each tool's implementation, by the tool's name (default: the functions the
            repository names under ``[serve.tools]``, imported).
        results: budget and redaction of the result gates (default: 32 KiB, redacted).

    Raises:
        UsageError: a function names a tool the repository does not have.
        ConfigError: a ``[serve.tools]`` function cannot be imported.
    """
    if functions is None:
        functions = load_implementations(repository)
    specs = implemented_specs(repository, functions)
    return [
        PythonTool(
            specs[name],
            function,
            ResultGate.from_repository(repository, name, results),
            repository=repository,
        )
        for name, function in functions.items()
    ]


async def mcp_tools(client: McpClient) -> list[McpTool]:
    """The tools of the server ``client`` is connected to (with the client's repository's
    canonical schemas where it has them); a tool whose schema cannot be used is left out.

    Raises:
        ServerError: the server cannot list its tools.
    """
    runners = []
    for tool in await client.list_tools():
        if tool.spec is None:
            continue
        repository = client.repository if tool.canonical else None
        validator = None
        if repository is not None:
            file = repository.find(f"tools/{tool.name}")
            validator = repository.validator(file) if file is not None else None
        runners.append(McpTool(tool.spec, client, validator, repository))
    return runners
