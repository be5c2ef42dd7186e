"""A traced, gated client for any MCP server, over stdio or Streamable HTTP.

Built on the official SDK's `mcp.Client` (transports, handshake and the 2026-07-28 discovery
mode) with two things added: every JSON-RPC message is a hop in the trace, and every call
passes both gates. Arguments are checked before ``tools/call`` is sent (a rejected call never
reaches the server); results are checked before they are returned. Server failures (a crash, a
hang, garbage on stdout) become results the model can read, never exceptions that end a run.

A stdio server is supervised: one whose request times out gets a ping, and one that does not
answer it (or does not read a request at all) is stopped, so that a reconnect starts another;
concurrent reconnects share one restart; on Linux no server outlives this process
(`schemawire.mcp._children`).

Example:
    >>> async def main():                                            # doctest: +SKIP
    ...     async with McpClient(StdioServer("mcp-server-everything", ("stdio",))) as client:
    ...         call = await client.call("echo", '{"message": "hi"}')
    ...         return call.output.content
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal, TextIO, cast

import anyio
import anyio.abc
import httpx2
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from schemawire._json import json_in_text, quoted
from schemawire._version import __version__
from schemawire.errors import SchemawireError, ServerError, UsageError, one_line
from schemawire.gates import (
    ArgumentGate,
    ArgumentOptions,
    McpResult,
    ResultGate,
    ResultOptions,
    Verdict,
)
from schemawire.mcp._children import tied_to_this_process
from schemawire.mcp._offload import off_loop
from schemawire.mcp._problems import HttpStatuses, last_line, server_error, startup_problem
from schemawire.mcp._tools import RemoteTool, gates_for, remote_tools, unwrapped
from schemawire.mcp._wire import WireTap, record_verdicts, traced
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from schemawire.types import Rejection, ToolResult

__all__ = ["HttpServer", "McpCall", "McpClient", "ServerError", "StdioServer"]

_CLIENT_INFO = mcp_types.Implementation(name="schemawire", version=__version__)
_RAW = TypeAdapter(dict[str, Any])  # results as the server sent them: the gates read JSON
_STDERR_TAIL = 2000  # characters of a server's stderr quoted in an error
_MAX_PAGES = 1000  # a server that pages without end is cut off here
# A stdio server whose request timed out gets a ping this long to show it still reads its input
# (a healthy one answers in under a millisecond); one that does not is stopped and replaced.
_PING_TIMEOUT = 2.0
# The SDK's timeout starts once a request is written; a write may take this long beyond the
# timeout before the server counts as one that stopped reading its input.
_WRITE_SLACK = 1.0

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
Mode = Literal["auto", "legacy", "2026-07-28"]


@dataclass(frozen=True, slots=True)
class StdioServer:
    """A server the client starts as a process and speaks to over stdin and stdout.

    Attributes:
        command: the program.
        args: its arguments.
        env: variables added to the (filtered) environment the SDK passes on.
        cwd: the working directory.
        name: what hops and errors call it (default: the program and its first argument).
    """

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | Path | None = None
    name: str | None = None

    @property
    def label(self) -> str:
        """The name hops and errors use."""
        return self.name or " ".join([Path(self.command).name, *self.args[:1]])

    @classmethod
    def from_argv(cls, argv: Sequence[str], env: Mapping[str, str] | None = None) -> StdioServer:
        """The server a command line starts, such as ``["npx", "server", "stdio"]``."""
        if not argv:
            raise UsageError("a stdio server needs a command")
        return cls(argv[0], tuple(argv[1:]), env)


@dataclass(frozen=True, slots=True)
class HttpServer:
    """A server the client reaches over Streamable HTTP.

    Attributes:
        url: the endpoint, such as ``http://127.0.0.1:8000/mcp``.
        headers: extra headers sent with every request.
        token: a bearer token, sent as ``Authorization: Bearer <token>``.
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    token: str | None = None

    @property
    def label(self) -> str:
        return self.url


ServerAddress = StdioServer | HttpServer


@dataclass(frozen=True, slots=True)
class McpCall:
    """One gated ``tools/call``.

    Attributes:
        tool: the tool's name.
        call_id: the host's id of the call.
        arguments: the argument gate's verdict.
        result: the result gate's verdict; None when the call was not sent.
        raw: the ``CallToolResult`` exactly as the server sent it (None when none came).
        sent: whether ``tools/call`` was sent (never when the arguments were refused).
    """

    tool: str
    call_id: str
    arguments: Verdict
    result: Verdict | None = None
    raw: dict[str, Any] | None = None
    sent: bool = False

    @property
    def accepted(self) -> bool:
        """Whether both gates passed: the output is the tool's result."""
        return self.arguments.accepted and self.result is not None and self.result.accepted

    @property
    def rejection(self) -> Rejection | None:
        """Why the call was refused: by the argument gate, the result gate, or (passed on
        whole) by the server's own gates; None when both gates passed."""
        if not self.arguments.accepted:
            return self.arguments.rejection
        return self.result.rejection if self.result is not None else None

    @property
    def output(self) -> ToolResult:
        """What the model reads: the (redacted, cut) result, or the error object of the gate
        that refused."""
        if self.result is not None:
            result: ToolResult = self.result.value
            return result
        assert self.arguments.rejection is not None
        return ToolResult(self.call_id, self.arguments.rejection.to_json(), True)

    def to_json(self) -> dict[str, Any]:
        """The call, both verdicts and the output, as JSON (``schemawire call --json``)."""
        output = self.output
        return {
            "tool": self.tool,
            "call_id": self.call_id,
            "sent": self.sent,
            "accepted": self.accepted,
            "arguments": self.arguments.to_json(),
            "result": self.result.to_json() if self.result is not None else None,
            "output": {
                "content": output.content,
                "isError": output.is_error,
                "structuredContent": output.structured,
            },
        }


class _Connection:
    """One live session with the server, held open by a task of the client's task group."""

    def __init__(self, client: Client, tap: WireTap | None, stderr: IO[str] | None) -> None:
        self.client = client
        self.tap = tap
        self.stderr = stderr
        self.stop = anyio.Event()  # set to close the session
        self.done = anyio.Event()  # set once it is closed
        self.lost: str | None = None  # why the server went away, once it has
        self.probing = anyio.Lock()  # one ping at a time after timeouts

    def retire(self, reason: str) -> None:
        """Take the session out of use and stop its server (the SDK closes stdin, then sends
        SIGTERM, then SIGKILL); calls fail fast with ``reason`` until a reconnect."""
        self.lost = self.lost or reason
        self.stop.set()

    def stderr_tail(self) -> str:
        return _tail(self.stderr)


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
        arguments: ArgumentOptions | None = None,
        results: ResultOptions | None = None,
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
            arguments: options of the argument gates.
            results: options of the result gates.
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
        self.argument_options = arguments
        self.result_options = results
        self.on_tools_changed = on_tools_changed
        self.tracing = tracing
        self._group: anyio.abc.TaskGroup | None = None
        self._connection: _Connection | None = None
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
        self._connection = await self._group.start(self._hold_connection)
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
        for _ in range(_MAX_PAGES):
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            try:
                page = await self._request(mcp_types.ListToolsRequest(params=params), self.timeout)
            except MCPError as error:
                if error.error.code == mcp_types.CONNECTION_CLOSED:
                    raise self._unavailable(self._mark_lost()) from None
                raise self._unavailable(f"tools/list failed: {one_line(error)}") from None
            except ValidationError as error:
                raise self._unavailable(f"tools/list failed: {one_line(error)}") from None
            tools.extend(t for t in page.get("tools", ()) if isinstance(t, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
        raise self._unavailable(f"tools/list gave more than {_MAX_PAGES} pages")

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
            lost = _failure(self._lost_line())
            return await self._checked(name, call_id, verdict, result_gate, lost)
        raw, failure = await self._send(name, verdict.value, timeout, on_progress)
        if failure is not None:
            return await self._checked(
                name, call_id, verdict, result_gate, _failure(failure), sent=True
            )
        return await self._checked(
            name, call_id, verdict, result_gate, raw, sent=True, received=True
        )

    async def _checked(
        self,
        name: str,
        call_id: str,
        arguments: Verdict,
        gate: ResultGate,
        result: dict[str, Any],
        *,
        sent: bool = False,
        received: bool = False,
    ) -> McpCall:
        """The call, once its ``result`` (as the server sent it, or the failure in its place)
        has passed the result gate."""
        tool = (self._tools or {}).get(name)
        verdict = await self._gate(partial(_result_verdict, gate, tool, call_id), result)
        return McpCall(name, call_id, arguments, verdict, result if received else None, sent=sent)

    async def call_unchecked(
        self, name: str, arguments: dict[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send one ``tools/call`` as given and return the raw result: for the gating proxy,
        which runs the gates itself, and for tests of what a server does with bad input.

        Raises:
            ServerError: the server is gone or did not answer in time, answered with a
                JSON-RPC error (code ``rpc_error``), or with what is not a ``CallToolResult``.
        """
        try:
            return await self._request(_call_request(name, arguments), timeout or self.timeout)
        except MCPError as error:
            if error.error.code == mcp_types.CONNECTION_CLOSED:
                raise self._unavailable(self._mark_lost()) from None
            if error.error.code == mcp_types.REQUEST_TIMEOUT:
                raise self._unavailable(one_line(error)) from None
            reason = f"tools/call failed: {error.error.message} (JSON-RPC error {error.error.code})"
            label, code = self.server.label, error.error.code
            raise server_error(label, reason, code="rpc_error", rpc_code=code) from error
        except ValidationError as error:
            raise self._unavailable(f"tools/call failed: {one_line(error)}") from None

    async def _send(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> tuple[dict[str, Any], str | None]:
        """The raw result of one ``tools/call``, or why there is none (one line)."""
        try:
            request = _call_request(name, arguments)
            raw = await self._request(request, timeout or self.timeout, on_progress)
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
            return self._failed(name, call_id, error.reason)
        tool = tools.get(name)
        if tool is None or tool.spec is None:
            return _unknown(name, call_id, tools, tool)
        gates = self._gates.get(name)
        if gates is None:
            try:
                gates = gates_for(tool, self.repository, self.argument_options, self.result_options)
            except SchemawireError as error:  # the server's schema does not compile
                return _unknown(name, call_id, tools, replace(tool, spec=None, problem=str(error)))
            self._gates[name] = gates
        return gates

    def _failed(self, name: str, call_id: str, reason: str) -> McpCall:
        """A call that could not be made at all: the server is gone."""
        hint = f"{name} could not be reached; tell the user."
        rejection = Rejection.for_tool(
            name, gate="arguments", code="tool_unavailable", line=reason, hint=hint
        )
        return McpCall(name, call_id, _refused(rejection))

    # --- the session ---------------------------------------------------------------------------

    def _live(self) -> _Connection:
        connection = self._connection
        if connection is None or connection.lost is not None:
            raise self._unavailable(self._lost_line())
        return connection

    async def _request(
        self, request: Any, timeout: float, on_progress: ProgressCallback | None = None
    ) -> dict[str, Any]:
        """Send one request and wait for its result. A stdio server that does not answer in
        time is asked whether it still reads its input; one that does not (or whose request
        could not even be written) is stopped, so that a call after it can start another.

        Raises:
            ServerError: the server is gone, or stopped reading its input and was stopped.
            MCPError: the server answered with a JSON-RPC error, or did not answer in time.
            ValidationError: the result is not a JSON object.
        """
        connection = self._live()
        session = connection.client.session
        if not isinstance(self.server, StdioServer):
            return await _sent(session, request, timeout, on_progress)
        unanswered: MCPError | None = None
        with anyio.move_on_after(timeout + _WRITE_SLACK):
            try:
                return await _sent(session, request, timeout, on_progress)
            except MCPError as error:
                if error.error.code != mcp_types.REQUEST_TIMEOUT:
                    raise
                unanswered = error
        if unanswered is not None:
            await self._probe(connection, timeout)
            raise unanswered
        # The SDK's own timeout starts once the request is written: this one took too long.
        within = timeout + _WRITE_SLACK
        connection.retire(
            f"the server did not read a request within {within:g} s (it stopped reading its "
            "input), so it was stopped"
        )
        raise self._unavailable(self._lost_line())

    async def _probe(self, connection: _Connection, timeout: float) -> None:
        """After a request timed out: stop the server unless it answers a ping (a slow tool
        keeps its server; a server that stopped reading its input is stopped).

        Raises:
            ServerError: the server did not answer the ping, and was stopped.
        """
        async with connection.probing:
            if connection.lost is None and not await _answers_ping(connection):
                connection.retire(
                    f"the server did not answer within {timeout:g} s, nor a ping "
                    f"{_PING_TIMEOUT:g} s after, so it was stopped"
                )
        if connection.lost is not None:
            raise self._unavailable(connection.lost)

    async def _hold_connection(self, *, task_status: anyio.abc.TaskStatus[_Connection]) -> None:
        """Open the session, hand it over, and keep it open until it is told to stop or the
        server goes away; nothing it meets on the way out escapes into the task group.

        Raises:
            ServerError: the session could not be opened (before it was handed over).
        """
        stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        tap = WireTap(self.trace, "host", self.label) if self.tracing else None
        statuses = HttpStatuses()
        connection: _Connection | None = None
        try:
            async with AsyncExitStack() as stack:
                transport = await self._transport(stack, stderr, statuses)
                client = Client(
                    traced(transport, tap),
                    mode=self.mode,
                    cache=None,
                    read_timeout_seconds=self.timeout,
                    client_info=_CLIENT_INFO,
                    message_handler=self._on_message,
                )
                await stack.enter_async_context(client)
                connection = _Connection(client, tap, stderr)
                task_status.started(connection)
                await connection.stop.wait()
        except Exception as error:
            if connection is not None:
                connection.lost = connection.lost or f"the connection failed: {one_line(error)}"
                return
            problem = self._not_opened(error, stderr, tap, statuses)
            stderr.close()
            raise problem from None
        finally:
            if connection is not None:
                connection.done.set()

    def _not_opened(
        self, error: Exception, stderr: IO[str], tap: WireTap | None, statuses: HttpStatuses
    ) -> ServerError:
        """Why the session did not open, from all the transport saw."""
        tail = _tail(stderr)
        code, reason = startup_problem(
            error,
            statuses=statuses,
            stderr=tail,
            unreadable=tuple(tap.unreadable) if tap is not None else (),
            timeout=self.timeout,
            process=isinstance(self.server, StdioServer),
            credentials=_sends_credentials(self.server),
        )
        return server_error(self.server.label, reason, tail, code)

    async def _transport(
        self, stack: AsyncExitStack, stderr: IO[str], statuses: HttpStatuses
    ) -> Any:
        server = self.server
        if isinstance(server, StdioServer):
            env = dict(server.env or {})
            command, args = tied_to_this_process(
                server.command, server.args, get_default_environment() | env, server.cwd
            )
            parameters = StdioServerParameters(command=command, args=args, env=env, cwd=server.cwd)
            return stdio_client(parameters, errlog=cast(TextIO, stderr))
        headers = dict(server.headers)
        if server.token:
            headers["Authorization"] = f"Bearer {server.token}"
        http = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(self.timeout, read=300.0),
            event_hooks={"response": [statuses]},
        )
        await stack.enter_async_context(http)
        return streamable_http_client(server.url, http_client=http)

    async def _on_message(self, message: Any) -> None:
        """Notifications and transport errors from the server (requests and results go to
        their callers)."""
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._tools, self._gates = None, {}
            if self.on_tools_changed is not None:
                await self.on_tools_changed()

    async def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        connection.stop.set()
        with anyio.move_on_after(10):  # the SDK stops a stdio server within a few seconds
            await connection.done.wait()
        if connection.stderr is not None:
            connection.stderr.close()

    def _mark_lost(self) -> str:
        """Note that the server went away (calls fail fast until `reconnect`); say how."""
        line = self._lost_line()
        if self._connection is not None and self._connection.lost is None:
            self._connection.lost = line
        return line

    def _lost_line(self) -> str:
        if self._connection is not None and self._connection.lost is not None:
            return self._connection.lost
        connection = self._connection
        if connection is None:
            return "not connected"
        exit_line = "the server closed the connection"
        if connection.tap is not None and connection.tap.unreadable:
            exit_line += f" (it wrote what is not JSON-RPC: {connection.tap.unreadable[-1][:200]})"
        said = last_line(connection.stderr_tail())
        if said:
            exit_line += f"; its last words: {said}"
        return exit_line

    def _unavailable(self, reason: str) -> ServerError:
        connection = self._connection
        return server_error(
            self.server.label, reason, connection.stderr_tail() if connection else ""
        )


async def _sent(
    session: Any, request: Any, timeout: float, on_progress: ProgressCallback | None
) -> dict[str, Any]:
    raw: dict[str, Any] = await session.send_request(
        request, _RAW, timeout, progress_callback=on_progress
    )
    return raw


async def _answers_ping(connection: _Connection) -> bool:
    """Whether the server answers a ping in time (its write included)."""
    ping = mcp_types.PingRequest()
    with anyio.move_on_after(_PING_TIMEOUT + _WRITE_SLACK):
        try:
            await connection.client.session.send_request(ping, mcp_types.EmptyResult, _PING_TIMEOUT)
        except MCPError:
            return False
        return True
    return False


def _sends_credentials(server: ServerAddress) -> bool:
    if isinstance(server, StdioServer):
        return False
    return bool(server.token) or any(name.lower() == "authorization" for name in server.headers)


def _call_request(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolRequest:
    return mcp_types.CallToolRequest(
        params=mcp_types.CallToolRequestParams(name=name, arguments=arguments)
    )


def _failure(line: str) -> dict[str, Any]:
    """Why a call has no result, as the error result a server would have sent."""
    return {"content": [{"type": "text", "text": line}], "isError": True}


def _result_verdict(
    gate: ResultGate, tool: RemoteTool | None, call_id: str, raw: dict[str, Any]
) -> Verdict:
    """The result gate's verdict on ``raw``, a ``CallToolResult`` as the server sent it."""
    return gate.check(_result_from_wire(raw, tool), call_id=call_id)


def _result_from_wire(raw: dict[str, Any], tool: RemoteTool | None) -> McpResult:
    """A ``CallToolResult`` for the result gate. A single text block holding a JSON object or
    array is also the structured result, when the server gave none; a structured result the
    server wraps as ``{"result": ...}`` (`RemoteTool.wrapped`) is unwrapped."""
    result = McpResult.from_json(raw)
    structured, content = result.structured, result.content
    if (
        structured is None
        and not result.is_error
        and isinstance(content, list)
        and len(content) == 1
    ):
        structured = _json_in_text(content[0])
    if tool is not None and tool.wrapped:
        structured = unwrapped(structured)
    return replace(result, structured=structured)


def _json_in_text(block: Any) -> Any:
    if not isinstance(block, dict) or block.get("type") != "text":
        return None
    text = block.get("text")
    return json_in_text(text) if isinstance(text, str) else None


def _unknown(
    name: str, call_id: str, tools: dict[str, RemoteTool], tool: RemoteTool | None
) -> McpCall:
    if tool is not None:  # listed, but its schema cannot be used
        code = "tool_unusable"
        line = f"the server's schema for {name} cannot be used: {tool.problem}"
        hint = f"{name} cannot be called safely; tell the user."
    else:
        known = ", ".join(sorted(tools)) or "none"
        code = "tool_unknown"
        line = f"the server has no tool {quoted(name)} (its tools: {known})"
        hint = "Call one of the server's tools."
    rejection = Rejection.for_tool(name, gate="arguments", code=code, line=line, hint=hint)
    return McpCall(name, call_id, _refused(rejection))


def _refused(rejection: Rejection) -> Verdict:
    """A call refused before its arguments were checked (no schema to say they conform)."""
    return Verdict.reject(rejection, gate="arguments", tool=rejection.tool, conforms=None)


def _tail(stderr: IO[str] | None) -> str:
    """The end of a server's stderr, read without moving the file offset the server writes at."""
    if stderr is None or stderr.closed:
        return ""
    fd = stderr.fileno()
    size = os.fstat(fd).st_size
    start = max(0, size - _STDERR_TAIL)
    return os.pread(fd, size - start, start).decode("utf-8", "replace")
