"""One live session with an MCP server: opened on the SDK's `mcp.Client`, supervised, closed.

A stdio server is supervised: one whose request times out gets a ping, and one that does not
answer it (or does not read a request at all) is stopped (`Connection.retire`), so that a
reconnect starts another; on Linux no server outlives this process (`schemawire.mcp._children`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import IO, Any, Literal, TextIO, cast

import anyio
import anyio.abc
import httpx2
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.session import MessageHandlerFnT
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from schemawire._version import __version__
from schemawire.errors import ServerError, one_line
from schemawire.mcp._addresses import ServerAddress, StdioServer, sends_credentials
from schemawire.mcp._children import tied_to_this_process
from schemawire.mcp._problems import HttpStatuses, last_line, server_error, startup_problem
from schemawire.mcp._wire import WireTap, traced
from schemawire.trace import Trace

__all__ = [
    "Connection",
    "Mode",
    "ProgressCallback",
    "hold_connection",
    "not_opened",
    "open_transport",
    "stderr_tail",
]

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
Mode = Literal["auto", "legacy", "2026-07-28"]

_CLIENT_INFO = mcp_types.Implementation(name="schemawire", version=__version__)
_RAW = TypeAdapter(dict[str, Any])  # results as the server sent them: the gates read JSON
_STDERR_TAIL = 2000  # characters of a server's stderr quoted in an error
# A stdio server whose request timed out gets a ping this long to show it still reads its input
# (a healthy one answers in under a millisecond); one that does not is stopped and replaced.
_PING_TIMEOUT = 2.0
# The SDK's timeout starts once a request is written; a write may take this long beyond the
# timeout before the server counts as one that stopped reading its input.
_WRITE_SLACK = 1.0


class Connection:
    """One live session with the server, held open by a task of the client's task group
    (`hold_connection`)."""

    def __init__(
        self, server: ServerAddress, client: Client, tap: WireTap | None, stderr: IO[str]
    ) -> None:
        self.server = server
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

    def mark_lost(self) -> str:
        """Note that the server went away (calls fail fast until a reconnect); say how."""
        line = self.lost_line()
        self.lost = self.lost or line
        return line

    def lost_line(self) -> str:
        """Why the server is gone: the reason it was retired, else what it last showed."""
        if self.lost is not None:
            return self.lost
        line = "the server closed the connection"
        if self.tap is not None and self.tap.unreadable:
            line += f" (it wrote what is not JSON-RPC: {self.tap.unreadable[-1][:200]})"
        said = last_line(self.stderr_tail())
        if said:
            line += f"; its last words: {said}"
        return line

    def unavailable(self, reason: str) -> ServerError:
        """The error of a request this session cannot carry."""
        return server_error(self.server.label, reason, self.stderr_tail())

    def stderr_tail(self) -> str:
        return stderr_tail(self.stderr)

    async def request(
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
        if self.lost is not None:
            raise self.unavailable(self.lost)
        if not isinstance(self.server, StdioServer):
            return await self._sent(request, timeout, on_progress)
        unanswered: MCPError | None = None
        with anyio.move_on_after(timeout + _WRITE_SLACK):
            try:
                return await self._sent(request, timeout, on_progress)
            except MCPError as error:
                if error.error.code != mcp_types.REQUEST_TIMEOUT:
                    raise
                unanswered = error
        if unanswered is not None:
            await self._probe(timeout)
            raise unanswered
        # The SDK's own timeout starts once the request is written: this one took too long.
        within = timeout + _WRITE_SLACK
        self.retire(
            f"the server did not read a request within {within:g} s (it stopped reading its "
            "input), so it was stopped"
        )
        raise self.unavailable(self.lost_line())

    async def _sent(
        self, request: Any, timeout: float, on_progress: ProgressCallback | None
    ) -> dict[str, Any]:
        session: Any = self.client.session  # the SDK types results as models; ours is JSON
        raw: dict[str, Any] = await session.send_request(
            request, _RAW, timeout, progress_callback=on_progress
        )
        return raw

    async def _probe(self, timeout: float) -> None:
        """After a request timed out: stop the server unless it answers a ping (a slow tool
        keeps its server; a server that stopped reading its input is stopped).

        Raises:
            ServerError: the server did not answer the ping, and was stopped.
        """
        async with self.probing:
            if self.lost is None and not await self._answers_ping():
                self.retire(
                    f"the server did not answer within {timeout:g} s, nor a ping "
                    f"{_PING_TIMEOUT:g} s after, so it was stopped"
                )
        if self.lost is not None:
            raise self.unavailable(self.lost)

    async def _answers_ping(self) -> bool:
        """Whether the server answers a ping in time (its write included)."""
        ping = mcp_types.PingRequest()
        with anyio.move_on_after(_PING_TIMEOUT + _WRITE_SLACK):
            try:
                await self.client.session.send_request(ping, mcp_types.EmptyResult, _PING_TIMEOUT)
            except MCPError:
                return False
            return True
        return False

    async def close(self) -> None:
        """End the session and wait (boundedly) for its server to stop."""
        self.stop.set()
        with anyio.move_on_after(10):  # the SDK stops a stdio server within a few seconds
            await self.done.wait()
        self.stderr.close()


async def hold_connection(
    server: ServerAddress,
    *,
    trace: Trace | None,
    mode: Mode,
    timeout: float,
    on_message: MessageHandlerFnT,
    task_status: anyio.abc.TaskStatus[Connection],
) -> None:
    """Open a session with ``server``, hand it over, and keep it open until it is told to stop
    or the server goes away; nothing it meets on the way out escapes into the task group.
    Every JSON-RPC message is a hop of ``trace`` (None: nothing is recorded).

    Raises:
        ServerError: the session could not be opened (before it was handed over).
    """
    label = f"mcp:{server.label}"
    stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
    tap = WireTap(trace, "host", label) if trace is not None else None
    statuses = HttpStatuses()
    connection: Connection | None = None
    try:
        async with AsyncExitStack() as stack:
            transport = await open_transport(server, timeout, stack, stderr, statuses)
            client = Client(
                traced(transport, tap),
                mode=mode,
                cache=None,
                read_timeout_seconds=timeout,
                client_info=_CLIENT_INFO,
                message_handler=on_message,
            )
            await stack.enter_async_context(client)
            await _listen_for_tool_changes(client, stack, on_message)
            connection = Connection(server, client, tap, stderr)
            task_status.started(connection)
            await connection.stop.wait()
    except Exception as error:
        if connection is not None:
            connection.lost = connection.lost or f"the connection failed: {one_line(error)}"
            return
        problem = not_opened(
            server, error, timeout=timeout, stderr=stderr, tap=tap, statuses=statuses
        )
        stderr.close()
        raise problem from None
    finally:
        if connection is not None:
            connection.done.set()


async def _listen_for_tool_changes(
    client: Client, stack: AsyncExitStack, on_message: MessageHandlerFnT
) -> None:
    """On a 2026-07-28 session with a server whose tool list can change, subscribe to its
    changes (``subscriptions/listen``), for as long as ``stack`` is open: at that version a
    server tells only its subscribers (an ``initialize`` session is told unasked, on its own
    channel). Each change reaches ``on_message`` as the same `ToolListChangedNotification`
    an older session gets. Subscribed before the session is handed over, so no change made
    after it is missed; a server that refuses the subscription is used without it.
    """
    tools = client.server_capabilities.tools
    changes = tools is not None and tools.list_changed is True
    if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not changes:
        return
    group = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(group.cancel_scope.cancel)  # runs first: the listening ends with the session
    await group.start(_listening, client, on_message)


_LISTEN_ENDED = (
    MCPError,
    SubscriptionLost,
    ListenNotSupportedError,
    TimeoutError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
)
"""How a listen stream ends without the session ending: refused, dropped, never acknowledged."""


async def _listening(
    client: Client,
    on_message: MessageHandlerFnT,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Hold one ``subscriptions/listen`` stream of tool-list changes, passing each on; the
    stream's end (the server closed it, or dropped it) ends the listening, quietly: the
    session goes on, its tools as last listed until it is reconnected."""
    try:
        async with client.listen(tools_list_changed=True) as subscription:
            task_status.started()
            async for event in subscription:
                if isinstance(event, ToolsListChanged):
                    await on_message(mcp_types.ToolListChangedNotification())
    except _LISTEN_ENDED:
        pass
    finally:  # not acknowledged: started all the same, the session is used without it
        with contextlib.suppress(RuntimeError):
            task_status.started()


def not_opened(
    server: ServerAddress,
    error: Exception,
    *,
    timeout: float,
    stderr: IO[str],
    tap: WireTap | None,
    statuses: HttpStatuses,
) -> ServerError:
    """Why the session did not open, from all the transport saw."""
    tail = stderr_tail(stderr)
    code, reason = startup_problem(
        error,
        statuses=statuses,
        stderr=tail,
        unreadable=tuple(tap.unreadable) if tap is not None else (),
        timeout=timeout,
        process=isinstance(server, StdioServer),
        credentials=sends_credentials(server),
    )
    return server_error(server.label, reason, tail, code)


async def open_transport(
    server: ServerAddress,
    timeout: float,
    stack: AsyncExitStack,
    stderr: IO[str],
    statuses: HttpStatuses,
) -> Any:
    """The SDK's transport to ``server`` (not yet entered): stdio, its stderr written to
    ``stderr``; or Streamable HTTP, its client held by ``stack``, its errors noted in
    ``statuses``."""
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
        timeout=httpx2.Timeout(timeout, read=300.0),
        event_hooks={"response": [statuses]},
    )
    await stack.enter_async_context(http)
    return streamable_http_client(server.url, http_client=http)


def stderr_tail(stderr: IO[str]) -> str:
    """The end of a server's stderr, read without moving the file offset the server writes at."""
    if stderr.closed:
        return ""
    fd = stderr.fileno()
    size = os.fstat(fd).st_size
    start = max(0, size - _STDERR_TAIL)
    return os.pread(fd, size - start, start).decode("utf-8", "replace")
