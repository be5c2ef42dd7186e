"""The gating proxy at the transport level: JSON-RPC messages forwarded between the client's
transport and the upstream's, intercepting only what the gates need.

The SDK keeps both transports (the client's stdio streams, the upstream's stdio or Streamable
HTTP client); no session or low-level ``Server`` stands between them, so a message costs one
parse and one dump on each side. What is intercepted:

- ``initialize``: forwarded, and its result answered with the upstream's capabilities plus
  ``tools.listChanged`` (the proxy passes changes on) and the proxy's name; the protocol version
  is the one the upstream agreed with the client;
- ``tools/list`` results: each tool listed from the repository's canonical schema, projected
  for the client's version (`listed_as`, what `UpstreamTools` lists);
- ``tools/call``: the argument gate first (a refusal is answered here and never sent upstream),
  the result gate on the way back; a call that gets no answer in time is cancelled upstream and
  answered with the failure, through the result gate;
- ``notifications/tools/list_changed``: the proxy's listing is forgotten, the notification
  passed on.

Everything else (prompts, resources, ping, logging, progress, cancellation, completion, and the
upstream's own requests: sampling, elicitation, roots) passes through as it came, ids kept. The
proxy's own requests upstream (a listing it needs for the gates, the ``initialize`` of a
restarted upstream) carry ids of their own, which the client never sees.

An upstream that went away is started again for the next request, its handshake replayed with
the client's ``initialize``; a restart that failed is not tried again for a while
(`RETRY_AFTER`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import IO, Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse
from mcp_types import ErrorData

from schemawire.errors import SchemawireError, ServerError
from schemawire.gates import ArgumentGate, ResultGate, Verdict
from schemawire.gates.redact import default_redactor
from schemawire.mcp._addresses import ServerAddress
from schemawire.mcp._calls import refused_unchecked, refused_unknown
from schemawire.mcp._connection import not_opened, open_transport, stderr_tail
from schemawire.mcp._offload import off_loop
from schemawire.mcp._problems import HttpStatuses, last_line, server_error
from schemawire.mcp._results import failure_result, result_verdict
from schemawire.mcp._sent import SentLines, arguments_as_sent
from schemawire.mcp._tools import RemoteTool, gates_for, remote_tools
from schemawire.mcp._wire import WireTap, tap_streams, traced
from schemawire.mcp.proxy import Restarts, listed_as, unreachable
from schemawire.mcp.server import verdict_result
from schemawire.project.mcp import VERSIONS
from schemawire.schema.repository import Repository
from schemawire.trace import Trace, record_verdicts
from schemawire.trace.spans import parse_traceparent

__all__ = ["Forwarder"]

_DEFAULT_VERSION = "2025-11-25"  # how tools are listed to a client of an unknown version
_OWN_ID = "schemawire-proxy-"  # how the ids of the proxy's own requests upstream begin, in traces
_SETTLED_KEPT = 1024  # ids whose late answers are dropped: the last this many given up on
_INTERNAL_ERROR = -32603
_VERSION_META = "io.modelcontextprotocol/protocolVersion"  # each request's, from 2026-07-28
_PING_TIMEOUT = 2.0  # seconds an upstream whose call timed out has to answer a ping
_INVALID_PARAMS = -32602
_log = logging.getLogger("schemawire.proxy")


@dataclass(slots=True)
class _Call:
    """A ``tools/call`` sent upstream, awaiting its result."""

    name: str
    tool: RemoteTool
    argument_verdict: Verdict
    result_gate: ResultGate
    answered: anyio.Event
    deadline: float  # anyio's clock: answered as failed if no result has come by then


class Forwarder:
    """One client's gating proxy: its messages to the upstream and back, gated.

    Use `run` with the client's transport streams; the upstream is started with it.
    """

    def __init__(
        self,
        upstream: ServerAddress,
        *,
        repository: Repository | None,
        trace: Trace,
        name: str,
        version: str,
        timeout: float,
        lines: SentLines | None = None,
    ) -> None:
        """
        Args:
            upstream: the server to stand in front of.
            repository: canonical schemas, listed and applied in place of the upstream's.
            trace: where every message of both sides and every verdict goes.
            name: the proxy's name, as the client is told it (and its label in hops).
            version: the proxy's version, as the client is told it.
            timeout: seconds an upstream request may take.
            lines: stdin, when the client's transport reads it (`schemawire.mcp._sent`), so
                that arguments that repeat a key are refused.
        """
        self.upstream = upstream
        self.repository = repository
        self.trace = trace
        self.name = name
        self.version = version
        self.timeout = timeout
        self.lines = lines
        self.label = f"mcp:{name}"
        self.upstream_label = f"mcp:{upstream.label}"
        self._restarts = Restarts()
        self._ids = itertools.count(1)
        self._to_client: Any = None
        self._client_write: Any = None
        self._client_tap: WireTap | None = None
        self._spans: dict[Any, str] = {}  # a served call's id -> its span, until answered
        self._to_upstream: Any = None
        self._group: anyio.abc.TaskGroup | None = None
        self._link: _Link | None = None
        self._restarting = anyio.Lock()
        self._initialize: dict[str, Any] | None = None  # the client's, replayed on a restart
        self._protocol = _DEFAULT_VERSION
        self._tools: dict[str, RemoteTool] | None = None
        self._gates: dict[str, tuple[ArgumentGate, ResultGate]] = {}
        self._listings: dict[tuple[str, str], tuple[RemoteTool, dict[str, Any], bool]] = {}
        self._calls: dict[Any, _Call] = {}  # the client's tools/call id -> the call upstream
        self._rewrites: dict[Any, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {}
        self._owed: set[Any] = set()  # the client's requests sent upstream, unanswered
        self._own: dict[Any, MemoryObjectSendStream[Any]] = {}  # own request id -> reply
        self._starting: set[Any] = set()  # the client's tools/call ids, not yet sent upstream
        # ids given up on (a call cancelled or timed out, an own request no longer awaited):
        # an answer that comes for one after all is dropped, never passed to the client
        self._settled: dict[Any, None] = {}

    # --- running ------------------------------------------------------------------------------

    @property
    def restarts(self) -> int:
        """Restarts of the upstream that succeeded."""
        return self._restarts.count

    async def run(self, read: Any, write: Any) -> None:
        """Serve the client on its transport's streams until it closes its side.

        Raises:
            ServerError: the upstream cannot be started.
        """
        self._client_tap = tap = WireTap(self.trace, self.label, "client")
        self._client_write = write
        client_read: Any = _Received(read, tap, self.trace)
        _, self._to_client = tap_streams(read, write, tap)
        failed: ServerError | None = None
        async with read, write, anyio.create_task_group() as group:  # closed: the transport ends
            self._group = group
            try:
                await self._connect()
            except ServerError as error:  # raised below, not as a group of one
                failed = error
                client_read = _NOTHING
            group.start_soon(self._watch)
            async for message in client_read:
                await self._from_client(message)
            group.cancel_scope.cancel()
        if self._link is not None:
            await self._link.close()
        if failed is not None:
            raise failed

    async def _connect(self) -> None:
        """Start the upstream and hold its transport open (`_Link`).

        Raises:
            ServerError: it could not be started.
        """
        assert self._group is not None
        link = _Link(self)
        try:
            await self._group.start(link.hold)
        except BaseException:  # not opened, or cancelled before it was: no one else closes it
            link.stderr.close()
            raise
        self._link = link
        self._to_upstream = link.write
        self._tools, self._gates = None, {}

    # --- from the client ----------------------------------------------------------------------

    async def _from_client(self, message: SessionMessage | Exception) -> None:
        if isinstance(message, Exception):
            return  # not JSON-RPC: the SDK's transport has no answer for it either
        inner = message.message
        if isinstance(inner, JSONRPCRequest):
            await self._request(message, inner)
            return
        if isinstance(inner, JSONRPCNotification) and inner.method == "notifications/cancelled":
            self._cancelled((inner.params or {}).get("requestId"))
        await self._upstream_send(message)

    def _cancelled(self, request_id: Any) -> None:
        """The client cancelled ``request_id``. A call of that id is settled: one not yet sent
        upstream never is, and a result that comes for one sent is dropped."""
        call = self._calls.pop(request_id, None)
        if call is None and request_id not in self._starting:
            return  # not a call: an answer, if one comes, passes as it came
        self._starting.discard(request_id)
        self._settle(request_id)
        self._spans.pop(request_id, None)
        if call is not None:
            call.answered.set()  # its task (and span) ends: no answer is owed

    def _settle(self, request_id: Any) -> None:
        """Give up on ``request_id``: an answer that comes for it is dropped (`_response`)."""
        self._settled[request_id] = None
        if len(self._settled) > _SETTLED_KEPT:
            del self._settled[next(iter(self._settled))]  # the oldest

    async def _request(self, message: SessionMessage, request: JSONRPCRequest) -> None:
        self._settled.pop(request.id, None)  # an id used again is awaited again
        meta = (request.params or {}).get("_meta")
        if isinstance(meta, dict) and meta.get(_VERSION_META) in VERSIONS:
            self._protocol = meta[_VERSION_META]  # a 2026-07-28 client: no initialize, its own
        if request.method == "initialize":
            self._initialize = dict(request.params or {})
            self._rewrites[request.id] = self._initialized
        elif request.method == "tools/list":
            cursor = (request.params or {}).get("cursor")
            self._rewrites[request.id] = lambda result: self._listed(result, fresh=not cursor)
        elif request.method == "tools/call":
            self._starting.add(request.id)  # before its task starts: a cancel may come first
            if self.trace.keeps_anything:  # its span lasts until it is answered: a task
                assert self._group is not None
                self._group.start_soon(self._call, request)
            else:  # no span to keep open: the result is answered from the upstream's reader
                await self._call(request, wait=False)
            return
        if not await self._available(request):
            return
        self._owed.add(request.id)
        if not await self._upstream_send(message):
            self._owed.discard(request.id)
            self._rewrites.pop(request.id, None)
            await self._error(request.id, _INTERNAL_ERROR, self._lost_line())

    async def _available(self, request: JSONRPCRequest) -> bool:
        """Whether the upstream is there to take ``request`` (started again if it went away);
        when it is not, the client is answered with why."""
        try:
            await self._ensure_connected()
        except ServerError as error:
            self._rewrites.pop(request.id, None)
            await self._error(request.id, _INTERNAL_ERROR, error.reason)
            return False
        return True

    # --- tools --------------------------------------------------------------------------------

    async def _call(self, request: JSONRPCRequest, *, wait: bool = True) -> None:
        """One ``tools/call``: gated, forwarded, its result gated on the way back (by the
        upstream's reader; ``wait``: until then)."""
        params = dict(request.params or {})
        meta = params.get("_meta")
        remote = meta.get("traceparent") if isinstance(meta, dict) else None
        context = {"traceparent": remote} if parse_traceparent(remote) is not None else {}
        with self.trace.span("mcp", "tools/call", label=self.label, served=True, **context):
            await self._served_in_span(request)
            try:
                call = await self._gated(request, params)
            finally:
                cancelled = request.id not in self._starting  # by the client, meanwhile
                self._starting.discard(request.id)
            if call is None or cancelled:
                return
            await self._forward_call(request, params, call)
            if wait:
                await call.answered.wait()  # bounded: the watchdog answers it at its deadline

    async def _gated(self, request: JSONRPCRequest, params: dict[str, Any]) -> _Call | None:
        """The call of ``request``, its arguments accepted by the gate; None when the client
        was answered here instead (no such tool, the upstream unreachable, a refusal)."""
        found = await self._tool_called(request.id, params.get("name"))
        if found is None:
            return None
        tool, tools = found
        gates = self._gates_of(tool, tools, request.id)
        if isinstance(gates, Verdict):
            await self._answer(request.id, verdict_result(gates))
            return None
        arguments = await arguments_as_sent(None, params.get("arguments"), request.id, self.lines)
        sent = arguments if arguments is not None else {}
        verdict = await off_loop(gates[0].check, sent, weight=sent)
        record_verdicts(self.trace, "host", verdict)
        if not verdict.accepted:
            await self._answer(request.id, await off_loop(verdict_result, verdict, weight=sent))
            return None
        deadline = anyio.current_time() + self.timeout
        return _Call(tool.name, tool, verdict, gates[1], anyio.Event(), deadline)

    async def _tool_called(
        self, request_id: Any, name: Any
    ) -> tuple[RemoteTool, dict[str, RemoteTool]] | None:
        """The upstream's tool ``name`` (listed again when it is not in the listing kept) and
        that listing; None when the client was answered here instead (no name, no such tool,
        the upstream unreachable)."""
        if not isinstance(name, str):
            await self._error(request_id, _INVALID_PARAMS, "tools/call needs a tool name")
            return None
        try:
            await self._ensure_connected()
            tools = await self._tools_listed()
        except ServerError as error:
            await self._answer(
                request_id, verdict_result(refused_unchecked(unreachable(name, error)))
            )
            return None
        tool = tools.get(name)
        if tool is None and self._tools is not None:  # listed since, by the upstream?
            self._tools = None
            with contextlib.suppress(ServerError):
                tool = (await self._tools_listed()).get(name)
        if tool is None:
            await self._error(
                request_id, _INVALID_PARAMS, f"Unknown tool: {name}", {"code": "tool_unknown"}
            )
            return None
        return tool, tools

    def _gates_of(
        self, tool: RemoteTool, tools: dict[str, RemoteTool], request_id: Any
    ) -> tuple[ArgumentGate, ResultGate] | Verdict:
        """The gates of ``tool``; or, when it cannot be called safely, the refusal."""
        gates = self._gates.get(tool.name)
        if gates is not None:
            return gates
        if tool.spec is not None:
            try:
                gates = gates_for(tool, self.repository, None, None)
            except SchemawireError as error:  # the server's schema does not compile
                tool = RemoteTool(tool.name, tool.listed, None, problem=str(error))
        if gates is None:
            return refused_unknown(tool.name, str(request_id), tools, tool).argument_verdict
        self._gates[tool.name] = gates
        return gates

    async def _forward_call(
        self, request: JSONRPCRequest, params: dict[str, Any], call: _Call
    ) -> None:
        """Send an accepted call upstream; its result is answered when it comes, or by the
        watchdog when it does not come in time (`_watch`)."""
        self._calls[request.id] = call
        forwarded = JSONRPCRequest(
            jsonrpc="2.0",
            id=request.id,
            method=request.method,
            params={**params, "arguments": call.argument_verdict.value},
        )
        if not await self._upstream_send(SessionMessage(forwarded)):
            self._calls.pop(request.id, None)
            await self._failed_call(request.id, call, self._lost_line())
            return

    async def _watch(self) -> None:
        """Answer each call that outlives its deadline: cancelled upstream, answered with the
        failure. One task for every call, waking a few times per timeout (a call is answered
        at most a tenth of the timeout late), instead of a timer per call."""
        tick = min(self.timeout / 10, 1.0)
        while True:
            await anyio.sleep(tick)
            now = anyio.current_time()
            for request_id, call in list(self._calls.items()):
                if call.deadline <= now and self._calls.pop(request_id, None) is not None:
                    await self._expired_or_failed(request_id, call)

    async def _expired_or_failed(self, request_id: Any, call: _Call) -> None:
        """`_expired`; or, when the proxy fails at that, the client told why (and the failure
        logged), the watchdog still watching the other calls."""
        try:
            await self._expired(request_id, call)
        except Exception as error:
            _log.exception("the proxy failed to answer a call that timed out")
            await self._error(request_id, _INTERNAL_ERROR, _failure_line(error))

    async def _expired(self, request_id: Any, call: _Call) -> None:
        self._settle(request_id)  # its result, should it come after all, is not passed on
        cancelled = {"requestId": request_id, "reason": "timed out"}
        notification = JSONRPCNotification(
            jsonrpc="2.0", method="notifications/cancelled", params=cancelled
        )
        with anyio.move_on_after(_PING_TIMEOUT):  # an upstream that stopped reading: see _probe
            await self._upstream_send(SessionMessage(notification))
        line = f"{call.name} did not answer within {self.timeout:g} s (the call was cancelled)"
        await self._failed_call(request_id, call, line)
        if self._group is not None and self._link is not None:
            self._group.start_soon(self._probe, self._link)

    async def _probe(self, link: _Link) -> None:
        """After a call timed out: stop the upstream unless it answers a ping (a slow tool
        keeps its upstream; one that stopped reading its input is stopped, and the next
        request starts another)."""
        if link.lost is not None or link is not self._link:
            return
        try:
            await self._own_request("ping", None, _PING_TIMEOUT)
        except ServerError:
            link.lost = (
                f"the server did not answer within {self.timeout:g} s, nor a ping "
                f"{_PING_TIMEOUT:g} s after, so it was stopped"
            )
            await link.close()

    async def _called(self, request_id: Any, call: _Call, raw: dict[str, Any]) -> None:
        """The upstream's result of ``call``, through the result gate, to the client; ``call``
        answered in any case (its task waits for that)."""
        try:
            verdict = await off_loop(
                result_verdict, call.result_gate, call.tool, str(request_id), raw, weight=raw
            )
            record_verdicts(self.trace, "host", verdict)
            _, wrapped = self._shown(call.tool)
            answer = await off_loop(
                functools.partial(verdict_result, verdict, wrap=wrapped), weight=raw
            )
            await self._answer(request_id, answer)
        finally:
            call.answered.set()

    async def _failed_call(self, request_id: Any, call: _Call, line: str) -> None:
        await self._called(request_id, call, failure_result(line))

    async def _tools_listed(self) -> dict[str, RemoteTool]:
        """The upstream's tools, listed by the proxy itself when no listing is kept.

        Raises:
            ServerError: the upstream did not list them.
        """
        if self._tools is not None:
            return self._tools
        listed: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(1000):
            params = {"cursor": cursor} if cursor else None
            page = await self._own_request("tools/list", params)
            listed.extend(t for t in page.get("tools", ()) if isinstance(t, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        self._tools = remote_tools(listed, self.upstream.label, self.repository)
        self._gates = {}
        return self._tools

    async def _listed(self, result: dict[str, Any], *, fresh: bool) -> dict[str, Any]:
        """A ``tools/list`` result, as the client is to see it; kept for the gates when it is
        the whole listing (one page, the first)."""
        page = [t for t in result.get("tools", ()) if isinstance(t, dict)]
        tools = remote_tools(page, self.upstream.label, self.repository)
        if fresh and not result.get("nextCursor"):
            self._tools, self._gates = dict(tools), {}
        return {**result, "tools": [self._shown(tool)[0] for tool in tools.values()]}

    def _shown(self, tool: RemoteTool) -> tuple[dict[str, Any], bool]:
        """``tool`` as listed to the client, and whether its structured results are wrapped
        (`listed_as`): projected once per listing, not on every call."""
        key = (tool.name, self._protocol)
        shown = self._listings.get(key)
        if shown is None or shown[0] is not tool:  # a new listing makes new tools
            shown = (tool, *listed_as(tool, self._protocol, self.repository))
            self._listings[key] = shown
        return shown[1], shown[2]

    async def _initialized(self, result: dict[str, Any]) -> dict[str, Any]:
        """The upstream's ``initialize`` result, as the client is to see it."""
        agreed = result.get("protocolVersion")
        self._protocol = agreed if agreed in VERSIONS else _DEFAULT_VERSION
        capabilities = dict(result.get("capabilities") or {})
        capabilities["tools"] = {**(capabilities.get("tools") or {}), "listChanged": True}
        info = {"name": self.name, "version": self.version}
        return {**result, "capabilities": capabilities, "serverInfo": info}

    # --- from the upstream --------------------------------------------------------------------

    async def from_upstream(self, message: SessionMessage | Exception) -> None:
        """One message the upstream wrote."""
        if isinstance(message, Exception):
            return  # not JSON-RPC: kept by the tap for errors to quote
        inner = message.message
        if isinstance(inner, JSONRPCResponse | JSONRPCError):
            await self._response(message, inner)
            return
        if isinstance(inner, JSONRPCNotification) and inner.method == (
            "notifications/tools/list_changed"
        ):
            self._tools, self._gates = None, {}
        await self._client_send(message)

    async def _response(
        self, message: SessionMessage, inner: JSONRPCResponse | JSONRPCError
    ) -> None:
        own = self._own.pop(inner.id, None)
        if own is not None:
            await own.send(inner)
            return
        call = self._calls.pop(inner.id, None)
        if call is not None:
            if isinstance(inner, JSONRPCResponse):
                raw = inner.result
            else:
                refused = f"the server refused the call: {inner.error.message}"
                raw = failure_result(f"{refused} (JSON-RPC error {inner.error.code})")
            await self._called(inner.id, call, raw)
            return
        if inner.id in self._settled:  # a call given up on, a request of ours no longer awaited
            del self._settled[inner.id]
            return
        self._owed.discard(inner.id)
        rewrite = self._rewrites.pop(inner.id, None)
        if rewrite is not None and isinstance(inner, JSONRPCResponse):
            await self._answer(inner.id, await rewrite(inner.result))
            return
        await self._client_send(message)

    async def upstream_lost(self, link: _Link) -> None:
        """The upstream went away: every call it owed is answered with why."""
        if self._link is not link:
            return
        line = self._lost_line()
        # all taken before the first await: what a restarted upstream is sent meanwhile is its own
        calls, self._calls = self._calls, {}
        own, self._own = self._own, {}
        owed, self._owed = self._owed, set()
        for request_id in owed:
            self._rewrites.pop(request_id, None)
        for reply in own.values():
            reply.close()
        for request_id, call in calls.items():
            await self._failed_call(request_id, call, line)
        for request_id in owed:
            await self._error(request_id, _INTERNAL_ERROR, line)

    # --- the upstream's lifecycle -------------------------------------------------------------

    async def _ensure_connected(self) -> None:
        """Start again an upstream that went away, its handshake replayed; a restart that
        failed is not tried again for a while (`RETRY_AFTER`).

        Raises:
            ServerError: the upstream cannot be started again (or could not, lately).
        """
        if self._link is not None and self._link.lost is None:
            return
        seen = self._link
        async with self._restarting:
            if self._link is not seen and self._link is not None and self._link.lost is None:
                return
            self._restarts.check()
            try:
                if self._link is not None:
                    await self._link.close()
                await self._connect()
                await self._handshake()
            except ServerError as error:
                await self._drop_link()
                self._restarts.failed(error)
                raise
            self._restarts.succeeded()

    async def _drop_link(self) -> None:
        """Close the upstream whose restart failed and stop using it: the next request starts
        another (once `RETRY_AFTER` allows), none is sent to one that is not initialized."""
        link, self._link = self._link, None
        if link is not None:
            await link.close()

    async def _handshake(self) -> None:
        """The client's ``initialize`` again, for a restarted upstream.

        Raises:
            ServerError: the upstream did not answer it.
        """
        if self._initialize is None:
            return
        await self._own_request("initialize", self._initialize)
        initialized = JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized")
        await self._upstream_send(SessionMessage(initialized))

    async def _own_request(
        self, method: str, params: dict[str, Any] | None, timeout: float | None = None
    ) -> dict[str, Any]:
        """A request of the proxy's own upstream, and its result.

        Raises:
            ServerError: the upstream is gone, answered with an error or not in time.
        """
        request_id = f"{_OWN_ID}{next(self._ids)}"
        limit = timeout if timeout is not None else self.timeout
        send, receive = anyio.create_memory_object_stream[Any](1)
        self._own[request_id] = send
        request = JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method)
        if params is not None:  # else no "params" at all: a server may refuse null
            request.params = params
        try:
            with anyio.fail_after(limit):
                if not await self._upstream_send(SessionMessage(request)):
                    raise anyio.ClosedResourceError
                reply = await receive.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise self._unavailable(self._lost_line()) from None
        except TimeoutError:
            raise self._unavailable(f"{method} got no answer within {limit:g} s") from None
        finally:
            if self._own.pop(request_id, None) is not None:  # not answered: if it is, dropped
                self._settle(request_id)
            send.close()
            receive.close()
        if isinstance(reply, JSONRPCError):
            raise self._unavailable(f"{method} failed: {reply.error.message}")
        result: dict[str, Any] = reply.result
        return result

    def _lost_line(self) -> str:
        link = self._link
        return link.lost_line() if link is not None else "not connected"

    def _unavailable(self, reason: str) -> ServerError:
        tail = self._link.stderr_tail() if self._link is not None else ""
        return server_error(self.upstream.label, reason, tail)

    # --- sending ------------------------------------------------------------------------------

    async def _upstream_send(self, message: SessionMessage) -> bool:
        """Send ``message`` upstream; False when the upstream is gone (it was not sent)."""
        try:
            await self._to_upstream.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        return True

    async def _client_send(self, message: SessionMessage, answers: Any = None) -> None:
        """Send ``message`` to the client (``answers``: the id of the request it answers, whose
        span, if the request was served in one, it is recorded in)."""
        span = self._spans.pop(answers, None) if answers is not None and self._spans else None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            if span is None or self._client_tap is None:
                await self._to_client.send(message)
                return
            await self._client_tap.sent_in(message, span)
            await self._client_write.send(message)

    async def _served_in_span(self, request: JSONRPCRequest) -> None:
        """Record the call's request in the span open here, its answer to come in it too."""
        span = self.trace.current_span
        if span is None or self._client_tap is None:
            return
        self._spans[request.id] = span
        await self._client_tap.received_in(SessionMessage(request), span)

    async def _answer(self, request_id: Any, result: dict[str, Any]) -> None:
        response = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        await self._client_send(SessionMessage(response), request_id)

    async def _error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error = ErrorData(code=code, message=message, data=data)
        response = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        await self._client_send(SessionMessage(response), request_id)


class _Received:
    """The client's messages, each recorded as read, except a ``tools/call`` when spans are
    kept: that one is recorded in the span that serves it (`Forwarder._served_in_span`)."""

    def __init__(self, read: Any, tap: WireTap, trace: Trace) -> None:
        self._read = read
        self._tap = tap
        self._trace = trace

    def __aiter__(self) -> _Received:
        return self

    async def __anext__(self) -> Any:
        try:
            message = await self._read.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
        if not (self._trace.keeps_anything and _is_call(message)):
            await self._tap.received(message)
        return message


def _is_call(message: Any) -> bool:
    inner = message.message if isinstance(message, SessionMessage) else None
    return isinstance(inner, JSONRPCRequest) and inner.method == "tools/call"


class _Nothing:
    """No message: what a forwarder whose upstream did not start reads from its client."""

    def __aiter__(self) -> _Nothing:
        return self

    async def __anext__(self) -> Any:
        raise StopAsyncIteration


_NOTHING = _Nothing()


class _Link:
    """The upstream's transport, held open by a task of the forwarder's task group; its
    messages read by that task."""

    def __init__(self, forwarder: Forwarder) -> None:
        self.forwarder = forwarder
        self.write: Any = None
        self.lost: str | None = None
        self.tap = WireTap(forwarder.trace, "host", forwarder.upstream_label)
        self.stderr: IO[str] = tempfile.TemporaryFile(  # noqa: SIM115
            "w+", encoding="utf-8", errors="replace"
        )
        self.statuses = HttpStatuses()
        self._scope = anyio.CancelScope()
        self._done = anyio.Event()

    async def hold(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Open the transport, hand it over, and pass on what the upstream writes until it
        stops (or the link is closed).

        Raises:
            ServerError: the transport could not be opened (before it was handed over).
        """
        forwarder = self.forwarder
        started = False
        try:
            with self._scope:
                async with AsyncExitStack() as stack:
                    transport = await open_transport(
                        forwarder.upstream, forwarder.timeout, stack, self.stderr, self.statuses
                    )
                    read, self.write = await stack.enter_async_context(traced(transport, self.tap))
                    started = True
                    task_status.started()
                    async for message in read:
                        await forwarder.from_upstream(message)
        except Exception as error:
            if not started:
                problem = not_opened(
                    forwarder.upstream,
                    error,
                    timeout=forwarder.timeout,
                    stderr=self.stderr,
                    tap=self.tap,
                    statuses=self.statuses,
                )
                raise problem from None
            # a gate, the trace or the proxy itself failed: said as that, not as a lost upstream
            _log.exception("the proxy failed forwarding what %s wrote", forwarder.upstream.label)
            self.lost = self.lost or _failure_line(error)
        finally:
            self.lost = self.lost or self.lost_line()
            self._done.set()
            if started:
                with anyio.CancelScope(shield=True):
                    await forwarder.upstream_lost(self)

    def lost_line(self) -> str:
        """Why the upstream is gone: what it last showed."""
        if self.lost is not None:
            return self.lost
        line = "the server closed the connection"
        if self.tap.unreadable:
            line += f" (it wrote what is not JSON-RPC: {self.tap.unreadable[-1][:200]})"
        said = last_line(self.stderr_tail())
        if said:
            line += f"; its last words: {said}"
        return default_redactor().text(line)[0]  # quoted to the client: as `server_error` does

    def stderr_tail(self) -> str:
        return stderr_tail(self.stderr)

    async def close(self) -> None:
        """Stop the upstream and wait (boundedly) for it to stop."""
        self.lost = self.lost or "the proxy closed the connection"
        self._scope.cancel()
        with anyio.move_on_after(10):
            await self._done.wait()
        self.stderr.close()


def _failure_line(error: BaseException) -> str:
    """What the client is told of a failure of the proxy's own, redacted: the first error of
    a group (a transport's task group wraps what its tasks raised)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return default_redactor().text(f"the proxy failed: {type(error).__name__}: {error}")[0]
