"""LangChain tools with schemawire's gates inside: `structured_tools` turns a repository's tools
into ``StructuredTool``s (LangGraph's ``ToolNode`` runs them), each call through the argument
gate and the result gate of `GatedTool`, each hop in a schemawire `Trace`; `RunSpans`, a
LangChain callback handler, puts the calls of one LangChain (or LangGraph) run in one ``run``
span of that trace.

The model is sent the tool's canonical input schema, its references into other files of the
repository inlined (the MCP projection: canonical, self-contained), as a dict ``args_schema``:
LangChain then neither validates nor coerces the arguments, so our gate is the only one that
reads them. A refusal (or a failed result) is the tool message's content, our JSON, with
``status="error"``.

Example::

    trace = Trace()
    agent = build_graph(structured_tools("examples/support-desk", trace=trace))
    agent.invoke({"messages": [...]}, {"callbacks": [RunSpans(trace)]})
"""

from __future__ import annotations

import asyncio
import threading
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar
from uuid import UUID

try:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import InjectedToolArg, StructuredTool, ToolException
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "schemawire.integrations.langchain needs LangChain: pip install 'schemawire[langchain]'"
    ) from error

from schemawire._json import dumps, quoted
from schemawire.errors import UsageError
from schemawire.gates import ArgumentOptions, HandoffGate, ResultOptions, Route
from schemawire.host.tools import PythonTool, ToolRunner, mcp_tools, python_tools
from schemawire.integrations._gated import GatedTool, model_text
from schemawire.mcp import McpClient
from schemawire.project.mcp import project_mcp
from schemawire.schema.repository import Repository
from schemawire.trace import CURRENT, Trace
from schemawire.trace.spans import Current, error_json
from schemawire.types import ToolSpec

__all__ = [
    "RunSpans",
    "handoff_tool",
    "mcp_structured_tools",
    "structured_tool_of",
    "structured_tools",
]

_F = TypeVar("_F", bound=Callable[..., Any])

_Injected = Annotated[Any, InjectedToolArg]
"""What LangChain injects into a tool function, not an argument of the model's. Marked so, it is
left out of the tool input LangChain prints for its callbacks, on every call: LangGraph's
``runtime`` holds the graph's whole state, so printing it would make each call cost as much as
the conversation is long."""


class RunSpans(BaseCallbackHandler):
    """A LangChain callback handler that opens a ``run`` span of ``trace`` for each root run
    (a graph's or chain's ``invoke``, or a tool invoked alone) and closes it when that run
    ends; the tools of `structured_tools` on the same trace put their tool spans in it.

    Pass it where LangChain takes callbacks, for the whole run:
    ``graph.invoke(state, {"callbacks": [RunSpans(trace)]})``. A run is keyed by its root
    run id: LangChain gives every callback the run's id and its parent's, and a tool reads
    its own from the callback manager it is handed, so parallel runs, threads and event
    loops never mix. Without the handler, each tool span is a root of the trace.

    Args:
        trace: where the run spans go (the trace the tools were given).
        framework: the ``framework`` attribute of each run span.
    """

    run_inline = True  # a few dict operations: no worker thread for them in an async run

    def __init__(self, trace: Trace, *, framework: str = "langchain") -> None:
        self.trace = trace
        self.framework = framework
        self._lock = threading.Lock()
        self._root_of: dict[UUID, UUID] = {}  # every run seen -> its root run
        self._spans: dict[UUID, str | None] = {}  # a root run -> its run span
        self._members: dict[UUID, list[UUID]] = {}  # a root run -> the runs in it

    def span_of(self, run_id: UUID | None) -> str | None:
        """The id of the run span that run ``run_id`` is in (None: a run not seen)."""
        root = self._root_of.get(run_id) if run_id is not None else None
        return self._spans.get(root) if root is not None else None

    def _started(self, run_id: UUID, parent_run_id: UUID | None, name: Any, *, opens: bool) -> None:
        """Remember ``run_id``'s root; a root that may hold tool calls opens a run span."""
        with self._lock:
            if parent_run_id is None:
                if not opens:
                    return  # a chat model called alone: no tool of ours runs in it
                label = name if isinstance(name, str) and name else self.framework
                span = self.trace.open_span("run", label, parent=None, framework=self.framework)
                self._spans[run_id], self._members[run_id] = span, []
                self._root_of[run_id] = run_id
                return
            root = self._root_of.get(parent_run_id)
            if root is not None:
                self._root_of[run_id] = root
                self._members[root].append(run_id)

    def _ended(self, run_id: UUID, error: BaseException | None = None) -> None:
        """Close the run span of root run ``run_id`` (nothing for any other run)."""
        with self._lock:
            if run_id not in self._spans:
                return
            span = self._spans.pop(run_id)
            for member in self._members.pop(run_id):
                self._root_of.pop(member, None)
            self._root_of.pop(run_id, None)
        status = "ok" if error is None else "error"
        self.trace.close_span(span, "run", status, error_json(error) if error else None)

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._started(run_id, parent_run_id, _run_name(serialized, kwargs), opens=True)

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._started(run_id, parent_run_id, _run_name(serialized, kwargs), opens=True)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._started(run_id, parent_run_id, None, opens=False)

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._started(run_id, parent_run_id, None, opens=False)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._ended(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._ended(run_id, error)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._ended(run_id)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._ended(run_id, error)


def _run_name(serialized: dict[str, Any] | None, kwargs: Mapping[str, Any]) -> Any:
    """A run's name as LangChain gives it: the run's ``run_name``, else its runnable's."""
    return kwargs.get("name") or (serialized or {}).get("name")


def structured_tools(
    repository: Repository | str | Path,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    *,
    trace: Trace | None = None,
    results: ResultOptions | None = None,
    options: ArgumentOptions | None = None,
) -> list[StructuredTool]:
    """The repository's Python tools as LangChain ``StructuredTool``s, every call gated.

    Args:
        repository: the schema repository, or its folder.
        functions: each tool's implementation by tool name (default: ``[serve.tools]``).
        trace: where every call's span and hops go (default: a new in-memory trace).
        results: budget and redaction of the result gates.
        options: how the argument gate reads a call (limits, duplicate keys).

    Raises:
        UsageError: a function names a tool the repository does not have.
        ConfigError: a ``[serve.tools]`` function cannot be imported.
    """
    if not isinstance(repository, Repository):
        repository = Repository.load(Path(repository))
    trace = trace if trace is not None else Trace()
    runners = python_tools(repository, functions, results)
    return [structured_tool_of(runner, trace, options=options) for runner in runners]


async def mcp_structured_tools(
    client: McpClient, *, trace: Trace | None = None, options: ArgumentOptions | None = None
) -> list[StructuredTool]:
    """The tools of the MCP server ``client`` is connected to, as ``StructuredTool``s: our
    argument gate before a call is sent, the client's result gate on its answer.

    Keep the client open while the tools run; they run on its event loop only (``ainvoke``,
    an async graph), so they have no synchronous path.

    Args:
        client: a connected `McpClient` (with ``repository=`` for the canonical schemas).
        trace: where the calls go (default: the client's trace); the client records its
            JSON-RPC to it too.

    Raises:
        ServerError: the server cannot list its tools.
    """
    if trace is not None and trace is not client.trace:
        client.record_to(trace)
    runners = await mcp_tools(client)
    return [structured_tool_of(runner, client.trace, options=options) for runner in runners]


def structured_tool_of(
    runner: ToolRunner, trace: Trace, *, options: ArgumentOptions | None = None
) -> StructuredTool:
    """One runner (a `PythonTool` or an `McpTool`) as a ``StructuredTool``, both gates in its
    coroutine; a Python tool also runs synchronously (``invoke``, a sync graph)."""
    repository = getattr(runner, "repository", None)
    documents = repository.documents if repository is not None else None
    projection = project_mcp(runner.spec, documents=documents)
    tool = GatedTool.of(runner, trace, projection=projection, options=options)

    async def call(callbacks: Any = None, runtime: _Injected = None, **arguments: Any) -> str:
        # Injected by name: ``callbacks``, the manager LangChain hands the tool (its parent run
        # is this call's run); ``runtime``, LangGraph's `ToolRuntime` (the model's call id).
        call_id = getattr(runtime, "tool_call_id", None)
        record = await tool.call(arguments, call_id, parent=_run_span(trace, callbacks))
        text = model_text(record)
        if record.status != "ok":
            raise ToolException(text)  # handle_tool_error makes it the content, status "error"
        return text

    def call_sync(callbacks: Any = None, runtime: _Injected = None, **arguments: Any) -> str:
        return asyncio.run(call(callbacks, runtime, **arguments))

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=dict(projection.payload["inputSchema"]),
        func=_resolved(call_sync) if isinstance(runner, PythonTool) else None,
        coroutine=_resolved(call),
        handle_tool_error=_as_content,
    )


def handoff_tool(
    repository: Repository | str | Path,
    schema: str,
    *,
    to: str,
    trace: Trace | None = None,
    routes: Sequence[Route] | None = None,
    name: str | None = None,
    graph: str | None = None,
) -> StructuredTool:
    """A LangGraph handoff whose input must satisfy the repository's handoff schema ``schema``
    and be taken by one of ``routes``: a tool the model calls with the handoff object.

    LangGraph has no handoff object of its own; a handoff is a tool that returns a
    ``Command(goto=...)``, which ``ToolNode`` passes on. Accepted, this tool returns that
    command: to the route's node, the tool message saying so, the accepted (canonical) object
    under ``"handoff"`` in the message's ``artifact``. Refused, the model reads our rejection
    (``{"error": {...}}``, ``status="error"``) as the tool's answer and may hand off again:
    the next node never starts with an object that breaks the schema. Every decision is a
    ``handoff`` hop with its verdict, in the run's span.

    Args:
        repository: where the handoff schema is.
        schema: the schema, such as ``"handoffs/triage_to_billing"``.
        to: the node handed to (by the default route).
        trace: where the verdicts go (default: a fresh in-memory trace).
        routes: the routes the object must take (default: any object that passes, to ``to``).
        name: the tool's name (default: ``transfer_to_<to>``).
        graph: the graph whose node ``goto`` names (``Command.PARENT`` from a subgraph's
            agent; default: the graph the ``ToolNode`` is in).

    Raises:
        UsageError: the repository has no such schema.
    """
    if not isinstance(repository, Repository):
        repository = Repository.load(Path(repository))
    file = repository.find(schema)
    if file is None:
        raise UsageError(f"no handoff schema {quoted(schema)} in the repository")
    spec = ToolSpec(file.name, file.document)
    gate = HandoffGate(spec, routes or (Route(to),), repository.validator(file))
    record = trace if trace is not None else Trace()
    handoff = _Handoff(gate, name or f"transfer_to_{to}", to, record, graph)

    async def hand_off(callbacks: Any = None, runtime: _Injected = None, **value: Any) -> Any:
        call_id = getattr(runtime, "tool_call_id", None)
        return handoff.decide(value, _run_span(record, callbacks), call_id)

    def hand_off_sync(callbacks: Any = None, runtime: _Injected = None, **value: Any) -> Any:
        return asyncio.run(hand_off(callbacks, runtime, **value))

    return StructuredTool(
        name=handoff.tool_name,
        description=str(file.document.get("title") or f"Hand off to {to}."),
        args_schema=dict(project_mcp(spec, documents=repository.documents).payload["inputSchema"]),
        func=_resolved(hand_off_sync),
        coroutine=_resolved(hand_off),
        handle_tool_error=_as_content,
    )


@dataclass(frozen=True, slots=True)
class _Handoff:
    """What a `handoff_tool` decides on the object the model sent, and what it answers."""

    gate: HandoffGate
    tool_name: str
    to: str  # the default route's node
    trace: Trace
    graph: str | None

    def decide(self, value: Any, span: str | Current | None, call_id: str | None) -> Any:
        """The command to the route's node (just our JSON, outside a ``ToolNode``), once the
        decision is recorded in ``span``.

        Raises:
            ToolException: refused or unrouted; our rejection, for the model to read.
        """
        decision = self.gate.check(value)
        route = decision.route
        payload = {"handoff": decision.verdict.value, "route": route.label if route else None}
        verdict = decision.verdict.to_json()
        target = f"agent:{route.to if route else self.to}"
        self.trace.record("host", target, "handoff", "check", payload, verdict=verdict, span=span)
        rejection = decision.verdict.rejection
        if not decision.accepted or route is None:
            assert rejection is not None  # a handoff no route takes is rejected too
            raise ToolException(dumps(rejection.to_json(), indent=False))
        return self._command(route, decision.verdict.value, call_id)

    def _command(self, route: Route, value: Any, call_id: str | None) -> Any:
        text = dumps({"handoff": "accepted", "to": route.to}, indent=False)
        if call_id is None:  # not run by a ToolNode: nowhere to go, say what was accepted
            return text
        # Here only when a ToolNode ran the tool, so LangGraph is there (the extra needs only
        # langchain-core).
        from langgraph.types import Command

        artifact = {"handoff": value}
        message = ToolMessage(text, name=self.tool_name, tool_call_id=call_id, artifact=artifact)
        return Command(goto=route.to, update={"messages": [message]}, graph=self.graph)


def _resolved(function: _F) -> _F:
    """``function`` with its annotations evaluated: LangChain reads a tool function's type
    hints on every call (to find a ``RunnableConfig`` parameter), and the strings of
    ``from __future__ import annotations`` would be compiled each time (about 40 µs a call)."""
    function.__annotations__ = typing.get_type_hints(function, include_extras=True)
    return function


def _run_span(trace: Trace, callbacks: Any) -> str | Current | None:
    """The run span a `RunSpans` handler of ``trace`` opened for this call's root run, if
    one is among the callbacks; else the span open here."""
    handlers = getattr(callbacks, "handlers", None) or ()
    for handler in handlers:
        if isinstance(handler, RunSpans) and handler.trace is trace:
            span = handler.span_of(getattr(callbacks, "parent_run_id", None))
            if span is not None:
                return span
    return CURRENT


def _as_content(error: ToolException) -> str:
    """Our structured refusal, verbatim, as what the model reads."""
    return str(error)
