"""The OpenAI Agents SDK with schemawire's gates inside: a repository's tools as the SDK's own
`agents.FunctionTool` objects, an MCP server's tools the same way, and handoffs whose input
must satisfy a handoff schema.

Each tool is sent with our OpenAI strict projection of its canonical schema (references into
other files of the repository inlined) when that projection narrows nothing a valid call may
send, else with our non-strict projection; its calls are read with the same projection (a
strict ``null`` means absent) by the argument gate, which runs before the function: a refused
call never reaches it, and the model reads our rejection (``{"error": {...}}``) as the tool's
output. Every result passes the result gate (output schema, redaction, budget) before the
model reads it. Every call is a ``tool`` span of a schemawire `Trace`; `run` puts a whole
``Runner.run`` in a ``run`` span, so ``schemawire ui`` shows it as one of ours.

Example::

    from agents import Agent
    from schemawire.integrations.openai_agents import function_tools, run

    trace = Trace(run_id := new_run_id(), path=trace_path(run_id))
    agent = Agent(name="desk", tools=function_tools("examples/support-desk", trace=trace))
    result = await run(agent, "Weather in Paris?", trace=trace)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    import agents
    from agents import Agent, FunctionTool, Handoff, RunContextWrapper, Runner, RunResult
    from agents.tool_context import ToolContext
except ImportError as error:  # pragma: no cover - the extra is installed in the tests
    raise ImportError(
        "schemawire.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'schemawire[openai-agents]'"
    ) from error

from schemawire._json import quoted
from schemawire.errors import FlowError, UsageError
from schemawire.gates import ArgumentOptions, HandoffGate, ResultOptions, Route
from schemawire.host.tools import ToolRunner, mcp_tools, python_tools
from schemawire.integrations._gated import GatedTool, model_text
from schemawire.mcp import McpClient
from schemawire.project import project
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from schemawire.types import Projection, ToolSpec

__all__ = [
    "NARROWING_LOSSES",
    "function_tool_of",
    "function_tools",
    "gated_handoff",
    "mcp_function_tools",
    "projection_for",
    "run",
]

TARGET = "openai.responses"
"""The projection target: the SDK sends ``params_json_schema`` verbatim as a function tool's
``parameters`` (Responses by default; the Chat model sends the same object)."""

NARROWING_LOSSES = frozenset({"MAP_CLOSED", "RECURSION_TRUNCATED", "TYPE_NARROWED"})
"""Losses of the strict projection that refuse calls the canonical schema accepts (extra keys of
an open object, deep recursion, an untyped value that is not a scalar): a tool with one is sent
non-strict, so the model can still make every valid call. The other losses only widen what the
model may send (a dropped ``minLength``), which the argument gate checks anyway."""

OnHandoff = Callable[[RunContextWrapper[Any], Any], Awaitable[None] | None]


def projection_for(spec: ToolSpec, documents: Mapping[str, Any] | None = None) -> Projection:
    """The projection ``spec`` is sent with: strict unless that narrows or blocks (see
    `NARROWING_LOSSES`), else non-strict."""
    strict = project(spec, TARGET, strict=True, documents=documents)
    narrows = strict.blocked or any(loss.code in NARROWING_LOSSES for loss in strict.losses)
    return project(spec, TARGET, strict=False, documents=documents) if narrows else strict


def function_tool_of(
    runner: ToolRunner, trace: Trace, *, options: ArgumentOptions | None = None
) -> FunctionTool:
    """One runner (a `PythonTool` or an `McpTool`) as an SDK `FunctionTool`, both gates in its
    ``on_invoke_tool``."""
    repository = getattr(runner, "repository", None)
    documents = repository.documents if repository is not None else None
    projection = projection_for(runner.spec, documents)
    gated = GatedTool.of(runner, trace, projection=projection, options=options)

    async def on_invoke_tool(context: ToolContext[Any], arguments: str) -> str:
        return model_text(await gated.call(arguments, context.tool_call_id))

    payload = projection.payload
    return FunctionTool(
        name=projection.projected_name,
        description=payload.get("description", gated.description),
        params_json_schema=payload["parameters"],
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=bool(payload.get("strict")),
    )


def function_tools(
    repository: Repository | str | Path,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    *,
    trace: Trace | None = None,
    results: ResultOptions | None = None,
    options: ArgumentOptions | None = None,
) -> list[FunctionTool]:
    """The repository's Python tools as SDK `FunctionTool`s, each call through both gates.

    Args:
        repository: the schema repository, or the folder it is in.
        functions: each tool's implementation by tool name (default: the repository's
            ``[serve.tools]``).
        trace: where each call's span and hops go (default: a fresh in-memory trace).
        results: budget and redaction of the result gates.
        options: how the argument gate reads a call (limits, duplicate keys).

    Raises:
        UsageError: a function names a tool the repository does not have.
        ConfigError: a ``[serve.tools]`` function cannot be imported.
    """
    if not isinstance(repository, Repository):
        repository = Repository.load(repository)
    trace = trace if trace is not None else Trace()
    runners = python_tools(repository, functions, results)
    return [function_tool_of(runner, trace, options=options) for runner in runners]


async def mcp_function_tools(
    client: McpClient, *, trace: Trace | None = None, options: ArgumentOptions | None = None
) -> list[FunctionTool]:
    """The tools of the MCP server ``client`` is connected to, as SDK `FunctionTool`s: our
    argument gate before each call is sent, the client's result gate on its answer.

    Give the tools to ``Agent(tools=...)`` in place of ``Agent(mcp_servers=...)``: the SDK's
    own MCP servers send the model's arguments unchecked. Keep the client open while the agent
    runs.

    Args:
        client: a connected `McpClient` (with ``repository=`` for the canonical schemas).
        trace: where the calls go (default: the client's trace); the client records its
            JSON-RPC to it too.

    Raises:
        ServerError: the server cannot list its tools.
    """
    if trace is not None and trace is not client.trace:
        client.record_to(trace)
    return [function_tool_of(r, client.trace, options=options) for r in await mcp_tools(client)]


def gated_handoff(
    agent: Agent[Any],
    repository: Repository | str | Path,
    schema: str,
    *,
    trace: Trace | None = None,
    routes: Sequence[Route] | None = None,
    on_handoff: OnHandoff | None = None,
    tool_name: str | None = None,
) -> Handoff[Any, Agent[Any]]:
    """A handoff to ``agent`` whose input (the object the model sends with the transfer) must
    satisfy the repository's handoff schema ``schema`` and be taken by one of ``routes``.

    The SDK gives a handoff's input to ``on_handoff`` alone and has no way to answer the model
    with an error, so a refused handoff ends the run: `FlowError` with our rejection, and the
    next agent never starts.

    Args:
        agent: the agent handed to.
        repository: where the handoff schema is.
        schema: the schema, such as ``"handoffs/triage_to_billing"``.
        trace: where the handoff's verdict goes.
        routes: the routes the object must take (default: any object that passes, to ``agent``).
        on_handoff: called with the run context and the accepted (canonical) object.
        tool_name: the transfer tool's name (default: the SDK's ``transfer_to_<agent>``).

    Raises:
        UsageError: the repository has no such schema.
    """
    if not isinstance(repository, Repository):
        repository = Repository.load(repository)
    file = repository.find(schema)
    if file is None:
        raise UsageError(f"no handoff schema {quoted(schema)} in the repository")
    spec = ToolSpec(file.name, file.document)
    gate = HandoffGate(spec, routes or (Route(agent.name),), repository.validator(file))
    projection = projection_for(spec, repository.documents)
    record = trace if trace is not None else Trace()

    async def on_invoke_handoff(context: RunContextWrapper[Any], arguments: str) -> Agent[Any]:
        decision = gate.check(arguments)
        route = decision.route.label if decision.route is not None else None
        payload = {"handoff": decision.verdict.value, "route": route, "to": agent.name}
        verdict = decision.verdict.to_json()
        record.record("host", f"agent:{agent.name}", "handoff", "check", payload, verdict=verdict)
        rejection = decision.verdict.rejection
        if not decision.accepted:
            raise FlowError(f"handoff to {quoted(agent.name)} refused", rejection)
        if on_handoff is not None:
            done = on_handoff(context, decision.verdict.value)
            if done is not None:
                await done
        return agent

    default = agents.handoff(agent)
    payload = projection.payload
    return Handoff(
        tool_name=tool_name or default.tool_name,
        tool_description=default.tool_description,
        input_json_schema=payload["parameters"],
        on_invoke_handoff=on_invoke_handoff,
        agent_name=agent.name,
        strict_json_schema=bool(payload.get("strict")),
    )


async def run(agent: Agent[Any], input: Any, *, trace: Trace, **options: Any) -> RunResult:
    """``Runner.run(agent, input, **options)`` inside a ``run`` span of ``trace``: the user's
    text, every tool call's span and each handoff's verdict in it, as the page shows a run of
    our own host. The span ends ``error`` when the run raises (the exception goes on)."""
    with trace.span("run", agent.name, framework="openai-agents"):
        said = {"text": input} if isinstance(input, str) else {"input": input}
        trace.record("user", "host", "text", "receive", said)
        result = await Runner.run(agent, input, **options)
        trace.record("host", "user", "text", "send", {"text": str(result.final_output)})
    return result
