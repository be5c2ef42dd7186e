"""An MCP server whose every call passes both gates, on the SDK's low-level `Server`.

The SDK's server advertises each tool's ``inputSchema`` but never applies it, and sends whatever
``structuredContent`` a tool returns. Here a call reaches the tool only once its arguments pass
the argument gate (checked against the full canonical schema), and its result reaches the client
only once it passes the result gate (validated, redacted, cut to budget).

A refused call is an error result that carries the rejection whole: its one text block is the
model-facing object, and its ``_meta`` marks it (`schemawire.gates.REJECTION_META`), so our
client, and every proxy between, passes it on unchanged.

What serves the tools is a `ToolBackend`: `LocalTools` (Python functions, for `schemawire serve`)
or `schemawire.mcp.proxy.UpstreamTools` (another MCP server, for the gating proxy).
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged
from pydantic import BaseModel

from schemawire._invoke import DEFAULT_TIMEOUT, invoke
from schemawire._json import dumps
from schemawire.gates import (
    ArgumentGate,
    ArgumentOptions,
    ResultGate,
    ResultOptions,
    Verdict,
    rejection_meta,
)
from schemawire.mcp._offload import is_large, off_loop, off_loop_if
from schemawire.mcp._problems import unknown_tool_error
from schemawire.mcp._sent import SentLines, arguments_as_sent
from schemawire.project.mcp import VERSIONS, project_mcp
from schemawire.schema.implementations import implemented_specs
from schemawire.schema.repository import Repository
from schemawire.trace import Trace, record_verdicts
from schemawire.trace.spans import parse_traceparent
from schemawire.types import Rejection, ToolResult

__all__ = ["LocalTools", "Sessions", "ToolBackend", "build_server", "mcp_result", "verdict_result"]

_DEFAULT_VERSION = "2025-11-25"  # how tools are listed to a client of an unknown version


class ToolBackend(Protocol):
    """Serves tools: lists them for a protocol version and runs calls, gated."""

    async def list_tools(self, version: str) -> list[dict[str, Any]]:
        """The tools as MCP ``Tool`` objects for protocol ``version``."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | str | None,
        *,
        version: str,
        trace: Trace,
        label: str,
    ) -> dict[str, Any]:
        """The ``CallToolResult`` (as JSON) of one gated call from a client of protocol
        ``version``: ``arguments`` as parsed, or the JSON text sent where the parse would hide
        a problem (a repeated key); the gates' verdicts go to ``trace`` as hops of ``label``."""
        ...


class Sessions:
    """The clients a server has seen, to tell them its tool list changed (a proxy, when its
    upstream's list changes).

    What is kept is each client's connection, not the `ServerSession` a handler is given: the
    SDK makes a session per request, and holding those would keep every request's context
    alive. Connections are held weakly, because the SDK gives no signal when an HTTP session
    ends: one it has let go of (ended, idled out) is forgotten with it, and a server that sees a
    new client every second for a week holds only the live ones. At most the newest `LIMIT`.

    Clients of the 2026-07-28 protocol get no such notification (the SDK drops it for them):
    they open a ``subscriptions/listen`` stream instead, served from `bus`.
    """

    LIMIT = 1000

    def __init__(self) -> None:
        self._connections: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self.bus = InMemorySubscriptionBus()
        """What the server's ``subscriptions/listen`` streams carry."""

    def add(self, session: Any) -> None:
        """Remember the client of ``session`` (a handler's ``ctx.session``)."""
        # The SDK (2.x) names a request's connection only privately; its notifications go out
        # on it (`ServerSession.send_tool_list_changed` sends on the connection's channel).
        connection = getattr(session, "_connection", session)
        self._connections.pop(id(connection), None)
        self._connections[id(connection)] = connection  # the newest last
        while len(self._connections) > self.LIMIT:
            self._connections.pop(next(iter(self._connections)))

    def __len__(self) -> int:
        return len(self._connections)

    async def tools_changed(self) -> None:
        """Tell every client the tool list changed: ``notifications/tools/list_changed`` to
        each one still connected, and an event on every ``subscriptions/listen`` stream that
        asked for tool list changes (the 2026-07-28 protocol's way)."""
        for connection in list(self._connections.values()):
            with contextlib.suppress(Exception):  # a client that went away meanwhile
                await connection.send_tool_list_changed()
        await self.bus.publish(ToolsListChanged())


def build_server(
    backend: ToolBackend,
    *,
    name: str,
    version: str,
    trace: Trace,
    instructions: str | None = None,
    sessions: Sessions | None = None,
    lines: SentLines | None = None,
) -> Server[Any]:
    """A low-level SDK server that lists ``backend``'s tools and runs its calls, every message
    traced as a hop of ``trace``; ``sessions`` collects the client sessions it serves. Served
    over stdio, ``lines`` must be the stdin the transport reads (`schemawire.mcp._sent`), so that
    arguments that repeat a key are refused, as they are over HTTP."""
    label = f"mcp:{name}"
    sessions = sessions if sessions is not None else Sessions()

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        sessions.add(ctx.session)
        listed = await backend.list_tools(_projection_version(ctx.protocol_version))
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in listed])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        version = _projection_version(ctx.protocol_version)
        arguments = await arguments_as_sent(ctx.request, params.arguments, ctx.request_id, lines)
        result = await backend.call_tool(
            params.name, arguments, version=version, trace=trace, label=label
        )
        return await off_loop(types.CallToolResult.model_validate, result, weight=result)

    server = _ListChangedServer(
        name,
        version=version,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(sessions.bus),
    )
    server.middleware.insert(0, _TraceMiddleware(trace, label))
    return server


class _ListChangedServer(Server[Any]):
    """Advertises ``tools.listChanged``: a proxy passes its upstream's changes on. (To a
    2026-07-28 client the SDK advertises it because ``subscriptions/listen`` is served.)"""

    def create_initialization_options(  # type: ignore[no-untyped-def]
        self, notification_options=None, experimental_capabilities=None, extensions=None
    ):
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, experimental_capabilities, extensions)


class _TraceMiddleware:
    """Records every message the server receives and every answer it sends as a hop."""

    def __init__(self, trace: Trace, label: str) -> None:
        self.trace = trace
        self.label = label

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if not self.trace.keeps_anything:  # no --trace: the hops are numbered, nothing built
            return await self._numbered(ctx, call_next)
        if ctx.request_id is None:  # a notification: one hop, no span
            return await self._served(ctx, call_next)
        # A span per request served: the gates' verdicts and an upstream's hops go inside.
        remote = _traceparent(ctx.params)
        context = {"traceparent": remote} if remote is not None else {}
        with self.trace.span("mcp", ctx.method, label=self.label, served=True, **context):
            return await self._served(ctx, call_next)

    async def _numbered(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Serve with a trace that keeps nothing: the same hops, counted, none of them built
        (nor weighed to build off the loop)."""
        self.trace.record("client", self.label, "mcp", "receive", None)
        try:
            result = await call_next(ctx)
        except MCPError:
            self.trace.record(self.label, "client", "mcp", "send", None)
            raise
        if ctx.request_id is not None:
            self.trace.record(self.label, "client", "mcp", "send", None)
        return result

    async def _served(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": ctx.method}
        if ctx.request_id is not None:
            message["id"] = ctx.request_id
        if ctx.params is not None:
            message["params"] = dict(ctx.params)
        await off_loop(
            self.trace.record, "client", self.label, "mcp", "receive", message, weight=ctx.params
        )
        try:
            result = await call_next(ctx)
        except MCPError as error:
            answer = {"code": error.error.code, "message": error.error.message}
            self._answered(ctx.request_id, {"error": answer})
            raise
        if ctx.request_id is not None:
            await off_loop(self._answered_with, ctx.request_id, result, weight=result)
        return result

    def _answered_with(self, request_id: Any, result: HandlerResult) -> None:
        keeps = self.trace.keeps_anything  # else the hop is only numbered: build nothing
        dumped = (
            result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if keeps and isinstance(result, BaseModel)
            else result
        )
        self._answered(request_id, {"result": dumped})

    def _answered(self, request_id: Any, body: dict[str, Any]) -> None:
        self.trace.record(
            self.label, "client", "mcp", "send", {"jsonrpc": "2.0", "id": request_id, **body}
        )


def _projection_version(protocol: str | None) -> str:
    return protocol if protocol in VERSIONS else _DEFAULT_VERSION


def mcp_result(
    result: ToolResult, *, wrap: bool = False, rejection: Rejection | None = None
) -> dict[str, Any]:
    """A checked `ToolResult` as an MCP ``CallToolResult``: content blocks as they are, any other
    value as its JSON text; the structured result (``{"result": ...}`` when ``wrap``, for output
    schemas an older client takes only as objects) beside it. A result that is ``rejection``'s
    model-facing object is marked as one in ``_meta``."""
    content = result.content
    if not result.has_content_blocks:
        text = content if isinstance(content, str) else dumps(content, indent=False)
        content = [{"type": "text", "text": text}]
    answer: dict[str, Any] = {"content": content, "isError": result.is_error}
    if result.structured is not None and not result.is_error:
        answer["structuredContent"] = {"result": result.structured} if wrap else result.structured
    if rejection is not None:
        answer["_meta"] = rejection_meta(rejection)
    return answer


def verdict_result(verdict: Verdict, *, wrap: bool = False) -> dict[str, Any]:
    """A gate's verdict as the ``CallToolResult`` a client reads: the result it passed, or the
    rejection of the gate that refused (arguments refused have no result of their own)."""
    if verdict.rejection is not None:
        value = verdict.value if verdict.gate == "results" else None
        shown = value if isinstance(value, ToolResult) else _refusal(verdict.rejection)
        return mcp_result(shown, rejection=verdict.rejection)
    return mcp_result(verdict.value, wrap=wrap)


def _refusal(rejection: Rejection) -> ToolResult:
    return ToolResult("", rejection.to_json(), True)


# --- Python functions as tools ------------------------------------------------------------------

Implementation = Callable[..., Any]


class LocalTools:
    """The repository's tools, each run by a Python function given the arguments as keywords.

    A synchronous function runs in a worker thread, so a slow tool does not stall the server;
    a call that takes longer than ``timeout`` seconds is answered as a failure
    (`schemawire._invoke.invoke`, the runner the host's Python tools use too).
    """

    def __init__(
        self,
        repository: Repository,
        implementations: Mapping[str, Implementation],
        *,
        arguments: ArgumentOptions | None = None,
        results: ResultOptions | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """
        Args:
            repository: the tools' schemas.
            implementations: tool name -> the function that runs it.
            arguments: options of the argument gates.
            results: options of the result gates.
            timeout: seconds one call may take.

        Raises:
            UsageError: an implementation names a tool the repository does not have.
        """
        self.repository = repository
        self.specs = implemented_specs(repository, implementations)
        self.implementations = dict(implementations)
        self.timeout = timeout
        self._gates = {
            name: (
                ArgumentGate.from_repository(repository, name, arguments),
                ResultGate.from_repository(repository, name, results),
            )
            for name in self.specs
        }

    @functools.cache  # noqa: B019 - one server, a handful of protocol versions
    def _listing(self, version: str) -> dict[str, tuple[str, dict[str, Any], bool]]:
        """Name on the wire -> (canonical name, the ``Tool`` for ``version``, whether its
        output is wrapped as ``{"result": ...}``)."""
        listing = {}
        for spec in self.specs.values():
            projection = project_mcp(spec, version=version, documents=self.repository.documents)
            wrapped = any(loss.code == "OUTPUT_SCHEMA_WRAPPED" for loss in projection.losses)
            listing[projection.projected_name] = (spec.name, projection.payload, wrapped)
        return listing

    async def list_tools(self, version: str) -> list[dict[str, Any]]:
        return [tool for _, tool, _ in self._listing(version).values()]

    # ToolBackend.call_tool's signature, which this implements.
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | str | None,
        *,
        version: str,
        trace: Trace,
        label: str,
    ) -> dict[str, Any]:
        listed = self._listing(version).get(name)
        if listed is None:
            raise unknown_tool_error(name)
        canonical, _, wrapped = listed
        argument_gate, result_gate = self._gates[canonical]
        sent = arguments if arguments is not None else {}
        large = is_large(sent)  # weighed once for the steps that work on the arguments
        verdict = await off_loop_if(large, _checked, argument_gate, sent, trace, label)
        if not verdict.accepted:
            return await off_loop_if(large, verdict_result, verdict)  # quotes what it got
        # What the function raised, or its timeout, comes back as the outcome: the result
        # gate makes it one line, and no stack trace reaches the client.
        outcome = await invoke(self.implementations[canonical], verdict.value, self.timeout)
        large = is_large(outcome)  # and once for those on the result
        checked = await off_loop_if(large, _checked, result_gate, outcome, trace, label)
        return await off_loop_if(large, functools.partial(verdict_result, checked, wrap=wrapped))


def _checked(gate: ArgumentGate | ResultGate, value: Any, trace: Trace, label: str) -> Verdict:
    """``gate``'s verdict on ``value``, recorded in ``trace``; one step, so that it runs off the
    event loop in one piece when ``value`` is large."""
    verdict = gate.check(value)
    record_verdicts(trace, label, verdict)
    return verdict


def _traceparent(params: Any) -> str | None:
    """The W3C ``traceparent`` a client put in a request's ``params._meta``, if a valid one."""
    meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
    if meta is None:
        return None
    value = (
        meta.get("traceparent") if isinstance(meta, dict) else getattr(meta, "traceparent", None)
    )
    return value if parse_traceparent(value) is not None else None
