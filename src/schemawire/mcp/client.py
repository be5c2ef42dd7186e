"""A traced, gated client for any MCP server, over stdio or Streamable HTTP.

Built on the official SDK's `mcp.Client` (transports, handshake and the 2026-07-28 discovery
mode) with two things added: every JSON-RPC message is a hop in the trace, and every call
passes both gates. Arguments are checked before ``tools/call`` is sent (a rejected call never
reaches the server); results are checked before they are returned. Server failures (a crash, a
hang, garbage on stdout) become results the model can read, never exceptions that end a run.

A stdio server is supervised (`schemawire.mcp._connection`); concurrent reconnects share one
restart.

Example:
    >>> async def main():                                            # doctest: +SKIP
    ...     async with McpClient(StdioServer("mcp-server-everything", ("stdio",))) as client:
    ...         call = await client.call("echo", '{"message": "hi"}')
    ...         return call.output.content
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import mcp_types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from schemawire.errors import SchemawireError, ServerError, UsageError, one_line
from schemawire.gates import ArgumentGate, ArgumentOptions, ResultGate, ResultOptions, Verdict
from schemawire.mcp._addresses import ServerAddress
from schemawire.mcp._calls import McpCall, call_request, refused_unknown, refused_unreachable
from schemawire.mcp._connection import Connection, Mode, ProgressCallback, hold_connection
from schemawire.mcp._offload import off_loop
from schemawire.mcp._problems import server_error
from schemawire.mcp._results import failure_result, result_verdict
from schemawire.mcp._tools import RemoteTool, gates_for, remote_tools
from schemawire.schema.repository import Repository
from schemawire.trace import Trace, record_verdicts

__all__ = ["McpClient"]

_MAX_PAGES = 1000  # a server that pages without end is cut off here


class McpClient:
    """A gated, traced connection to one MCP server. Use it as an async context manager."""

    def __init__(
        self,
        server: ServerAddress,
        *,
        repository: Repository | None = None,
        trace: Trace | None = None,
        mode: Mode = "auto",
        timeout: float = 30.0,
        argument_options: ArgumentOptions | None = None,
        result_options: ResultOptions | None = None,
        on_tools_changed: Callable[[], Awaitable[None]] | None = None,
        tracing: bool = True,
    ) -> None:
        """
        Args:
            server: where the server is (`StdioServer` or `HttpServer`).
            repository: canonical schemas; a listed tool of the same name is checked against
                the repository's schema instead of the server's.
            trace: where hops go; a fresh in-memory `Trace` when not given (a `Host` given this
                client's tools then has it record to the host's trace: see `record_to`).
            mode: ``"auto"`` probes the 2026-07-28 discovery and falls back to the
                ``initialize`` handshake; ``"legacy"`` always handshakes.
            timeout: seconds any request may take (a call may set its own).
            argument_options: options of the argument gates.
            result_options: options of the result gates.
            on_tools_changed: awaited when the server says its tool list changed.
            tracing: record every JSON-RPC message and every verdict as a hop; off, the
                trace gets nothing from this client (for measuring what tracing costs).
        """
        self.server = server
        self.repository = repository
        self.trace = trace if trace is not None else Trace()
        self.trace_given = trace is not None
        self.mode = mode
        self.timeout = timeout
        self.argument_options = argument_options
        self.result_options = result_options
        self.on_tools_changed = on_tools_changed
        self.tracing = tracing
        self._group: anyio.abc.TaskGroup | None = None
        self._connection: Connection | None = None
        self._tools: dict[str, RemoteTool] | None = None
        self._gates: dict[str, tuple[ArgumentGate, ResultGate]] = {}
        self._restarting = anyio.Lock()  # one reconnect at a time; the others share its outcome
        self._restarts = 0  # reconnects finished (or failed)
        self._restart_error: ServerError | None = None  # how the last one failed, if it did

    def record_to(self, trace: Trace) -> None:
        """Record every hop from now on to ``trace``, the open connection's JSON-RPC included
        (what was recorded before stays where it was)."""
        self.trace = trace
        if self._connection is not None and self._connection.tap is not None:
            self._connection.tap.trace = trace

    # --- lifecycle -----------------------------------------------------------------------------

    async def __aenter__(self) -> McpClient:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        try:
            await self.connect()
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._disconnect()
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)

    async def connect(self) -> None:
        """Start (or reach) the server and agree on a protocol version.

        Raises:
            ServerError: the server cannot be started or reached, or the handshake
                failed or took longer than the timeout.
        """
        if self._group is None:
            raise UsageError("use the client as `async with McpClient(...) as client:`")
        holding = partial(
            hold_connection,
            self.server,
            trace=self.trace if self.tracing else None,
            mode=self.mode,
            timeout=self.timeout,
            on_message=self._on_message,
        )
        self._connection = await self._group.start(holding)
        self._tools, self._gates = None, {}

    async def reconnect(self) -> None:
        """Close the session (if any is left) and open a new one: after a crash, for one.

        Callers that ask while a reconnect is under way wait for it and share its outcome (one
        new server process, not one each).

        Raises:
            ServerError: the server cannot be started or reached again.
        """
        seen = self._restarts
        async with self._restarting:
            if self._restarts != seen:  # another caller reconnected while this one waited
                if self._restart_error is not None:
                    raise self._restart_error
                return
            self._restart_error = None
            try:
                await self._disconnect()
                await self.connect()
            except ServerError as error:
                self._restart_error = error
                raise
            finally:
                self._restarts += 1

    @property
    def connected(self) -> bool:
        """Whether a session is open and the server has not gone away."""
        return self._connection is not None and self._connection.lost is None

    @property
    def protocol_version(self) -> str | None:
        """The protocol version agreed with the server."""
        return self._connection.client.protocol_version if self._connection else None

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The server's name and version, as it gave them."""
        info = self._connection.client.server_info if self._connection else None
        return info.model_dump(by_alias=True, mode="json", exclude_none=True) if info else None

    @property
    def label(self) -> str:
        """The server's name in hops: ``mcp:<command or URL>``."""
        return f"mcp:{self.server.label}"

    async def _on_message(self, message: Any) -> None:
        """Notifications and transport errors from the server (requests and results go to
        their callers)."""
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._tools, self._gates = None, {}
            if self.on_tools_changed is not None:
                await self.on_tools_changed()

    async def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    def _live(self) -> Connection:
        """The open session (which says itself, when asked, that its server went away).

        Raises:
            ServerError: there is none: the client is not connected.
        """
        if self._connection is None:
            raise server_error(self.server.label, "not connected")
        return self._connection

    def _lost_line(self) -> str:
        return self._connection.lost_line() if self._connection is not None else "not connected"

    def _mark_lost(self) -> str:
        return self._connection.mark_lost() if self._connection is not None else "not connected"

    # --- tools ---------------------------------------------------------------------------------

    async def list_tools(self, *, refresh: bool = False) -> tuple[RemoteTool, ...]:
        """The server's tools, every page of them. The list is kept until the server says it
        changed (``notifications/tools/list_changed``) or ``refresh`` is set.

        Raises:
            ServerError: the server is gone or did not answer in time.
        """
        if self._tools is None or refresh:
            listed = await self._list_all()
            self._tools = remote_tools(listed, self.server.label, self.repository)
            self._gates = {}
        return tuple(self._tools.values())

    async def _list_all(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        connection = self._live()
        for _ in range(_MAX_PAGES):
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            request = mcp_types.ListToolsRequest(params=params)
            try:
                page = await connection.request(request, self.timeout)
            except MCPError as error:
                if error.error.code == mcp_types.CONNECTION_CLOSED:
                    raise connection.unavailable(connection.mark_lost()) from None
                raise connection.unavailable(f"tools/list failed: {one_line(error)}") from None
            except ValidationError as error:
                raise connection.unavailable(f"tools/list failed: {one_line(error)}") from None
            tools.extend(t for t in page.get("tools", ()) if isinstance(t, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
        raise connection.unavailable(f"tools/list gave more than {_MAX_PAGES} pages")

    # --- calls ---------------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Any,
        *,
        call_id: str | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> McpCall:
        """Call ``name`` with ``arguments`` (a JSON text or an object), through both gates.

        Never raises for what the server or the model does: a rejected argument, a timeout, a
        crash or a malformed result each come back as an `McpCall` whose output the model can
        read. Cancel the calling task to cancel the call (the server is told).
        """
        call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
        with self.trace.deferring():  # the call's hops kept and flushed before it returns
            gates = await self._gates_for_call(name, call_id)
            if isinstance(gates, McpCall):  # no tool to call: the server is gone, or has none
                return gates
            argument_gate, result_gate = gates
            verdict = await self._gate(argument_gate.check, arguments)
            if not verdict.accepted:
                return McpCall(name, call_id, verdict)
            return await self._call_accepted(
                name, call_id, verdict, result_gate, timeout=timeout, on_progress=on_progress
            )

    async def call_accepted(
        self,
        name: str,
        verdict: Verdict,
        *,
        call_id: str,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> McpCall:
        """Send a call whose arguments a gate has already accepted (``verdict``: the host's
        own gate, which knows how the model's tools were projected); the result gate still
        applies. Never raises, as `call`."""
        with self.trace.deferring():  # the call's hops kept and flushed before it returns
            gates = await self._gates_for_call(name, call_id)
            if isinstance(gates, McpCall):
                return gates
            return await self._call_accepted(
                name, call_id, verdict, gates[1], timeout=timeout, on_progress=on_progress
            )

    async def _call_accepted(
        self,
        name: str,
        call_id: str,
        verdict: Verdict,
        result_gate: ResultGate,
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> McpCall:
        if not self.connected:  # gone since the tools were listed: say so, send nothing
            lost = failure_result(self._lost_line())
            return await self._checked(name, call_id, verdict, result_gate, lost)
        raw, failure = await self._send(name, verdict.value, timeout, on_progress)
        if failure is not None:
            return await self._checked(
                name, call_id, verdict, result_gate, failure_result(failure), sent=True
            )
        return await self._checked(
            name, call_id, verdict, result_gate, raw, sent=True, received=True
        )

    async def _checked(
        self,
        name: str,
        call_id: str,
        argument_verdict: Verdict,
        gate: ResultGate,
        result: dict[str, Any],
        *,
        sent: bool = False,
        received: bool = False,
    ) -> McpCall:
        """The call, once its ``result`` (as the server sent it, or the failure in its place)
        has passed the result gate."""
        tool = (self._tools or {}).get(name)
        verdict = await self._gate(partial(result_verdict, gate, tool, call_id), result)
        received_result = result if received else None
        return McpCall(name, call_id, argument_verdict, verdict, received_result, sent=sent)

    async def _send(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> tuple[dict[str, Any], str | None]:
        """The raw result of one ``tools/call``, or why there is none (one line)."""
        try:
            request = call_request(name, arguments)
            raw = await self._live().request(request, timeout or self.timeout, on_progress)
        except ServerError as error:
            return {}, error.reason
        except MCPError as error:
            return {}, self._call_error(name, error, timeout)
        except ValidationError as error:
            return {}, f"the server's result is not a CallToolResult: {one_line(error)}"
        return raw, None

    def _call_error(self, name: str, error: MCPError, timeout: float | None) -> str:
        code = error.error.code
        if code == mcp_types.REQUEST_TIMEOUT:
            seconds = timeout or self.timeout
            return f"{name} did not answer within {seconds:g} s (the call was cancelled)"
        if code == mcp_types.CONNECTION_CLOSED:
            return self._mark_lost()
        return f"the server refused the call: {error.error.message} (JSON-RPC error {code})"

    async def _gate(self, check: Callable[[Any], Verdict], payload: Any) -> Verdict:
        """``check(payload)``, its verdict recorded: the one place the client's argument and
        result gates run (both `call` and `call_accepted` come here). On a large payload the
        check runs in a worker thread, so a proxy's other clients are served meanwhile."""
        verdict = await off_loop(check, payload, weight=payload)
        self._record(verdict)
        return verdict

    def _record(self, verdict: Verdict) -> None:
        if self.tracing:
            record_verdicts(self.trace, "host", verdict)

    async def _gates_for_call(
        self, name: str, call_id: str
    ) -> tuple[ArgumentGate, ResultGate] | McpCall:
        """The gates of tool ``name``; or, when it cannot be called, the call refused."""
        try:
            tools = {t.name: t for t in await self.list_tools()}
        except ServerError as error:
            return refused_unreachable(name, call_id, error.reason)
        tool = tools.get(name)
        if tool is None or tool.spec is None:
            return refused_unknown(name, call_id, tools, tool)
        gates = self._gates.get(name)
        if gates is None:
            try:
                gates = gates_for(tool, self.repository, self.argument_options, self.result_options)
            except SchemawireError as error:  # the server's schema does not compile
                unusable = replace(tool, spec=None, problem=str(error))
                return refused_unknown(name, call_id, tools, unusable)
            self._gates[name] = gates
        return gates
