"""The Tools page's one session with its MCP server: opened on first use, kept for the launch,
closed when the page's server stops.

Starting a stdio server and shaking hands with it takes a second or two; doing it for every
call (and for every tool the page shows) would make each call that slow and put the handshake
in every call's trace. So the launch keeps one `McpClient`:

- **Opened on first use**, in a task of the page's lifespan (`ServerSession.lifespan`), which
  holds the client's task group for as long as the page runs; the request that opened it waits
  for the handshake, whose hops go to that request's trace (the call that started the server
  shows it did).
- **One user at a time.** A lock around each use: each call records to its own trace (its own
  run, its own file), so two calls must not share the client at once. Between uses, the client
  records nowhere.
- **Reconnected once** when the server went away since the last use (a crash, a restart): the
  next use reconnects, and only if that fails is it an error.
- **Closed** when the page's server stops: the lifespan tells the holding task, which leaves the
  client's ``async with`` (a stdio server is stopped), bounded by `CLOSE_SECONDS`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import anyio.to_thread

from schemawire.trace import Trace
from schemawire.ui._config import UiConfig

if TYPE_CHECKING:
    from schemawire.mcp import McpClient
    from schemawire.schema.repository import Repository

__all__ = ["CLOSE_SECONDS", "ServerSession", "mcp_address", "server_label"]

CLOSE_SECONDS = 5.0  # a server that has not stopped by then is left to the process's exit


def mcp_address(config: UiConfig) -> Any:
    """The MCP server the page was given (``--mcp-url`` or ``-- CMD``), or None."""
    from schemawire.mcp import HttpServer, StdioServer

    if config.mcp_url:
        return HttpServer(config.mcp_url)
    if config.mcp_command:
        return StdioServer.from_argv(config.mcp_command)
    return None


def server_label(config: UiConfig) -> str | None:
    """The server's name as the page shows it, redacted as hops are (a command line can hold a
    key, a URL a password); None without a server."""
    from schemawire.gates.redact import default_redactor

    address = mcp_address(config)
    return default_redactor().text(address.label)[0] if address is not None else None


class ServerSession:
    """The launch's one client of its MCP server (see the module's docstring)."""

    def __init__(self, config: UiConfig) -> None:
        self.config = config
        self.address = mcp_address(config)
        self._nowhere = Trace(keep=False)  # between uses: hops are recorded nowhere
        self._lock = anyio.Lock()
        self._group: anyio.abc.TaskGroup | None = None
        self._client: McpClient | None = None
        self._stop = anyio.Event()
        self._stopped = anyio.Event()

    @asynccontextmanager
    async def lifespan(self, group: anyio.abc.TaskGroup) -> AsyncIterator[None]:
        """While the page's server runs: ``group`` (the lifespan's) holds the client; on the
        way out, the client is closed."""
        self._group = group
        try:
            yield
        finally:
            self._group = None
            await self._close()

    @asynccontextmanager
    async def using(self, trace: Trace) -> AsyncIterator[McpClient]:
        """The client, alone, recording to ``trace`` while the block runs; its gates are the
        repository's canonical schemas as they are now (read again each use, so an edited
        schema gates the next call), the server's own for the tools the repository lacks.

        Args:
            trace: where this use's hops go (the handshake too, when this use opens the session).

        Raises:
            ServerError: the server cannot be started or reached (after one reconnect).
            UsageError: there is no server, or the page's server is not running its lifespan.
        """
        async with self._lock:
            repository = await anyio.to_thread.run_sync(self._repository)
            client = await self._ready(trace, repository)
            try:
                yield client
            finally:
                client.record_to(self._nowhere)

    def _repository(self) -> Repository | None:
        from schemawire.schema.repository import Repository

        return Repository.load(self.config.repo) if self.config.repo is not None else None

    async def _ready(self, trace: Trace, repository: Repository | None) -> McpClient:
        if self._client is None:
            self._client = await self._open(trace, repository)
            return self._client
        client = self._client
        client.record_to(trace)
        if not client.connected:  # the server went away since the last use: once more
            await client.reconnect()
        if _schemas_changed(client.repository, repository):
            client.repository = repository
            await client.list_tools(refresh=True)  # the gates come from the list
        return client

    async def _open(self, trace: Trace, repository: Repository | None) -> McpClient:
        from schemawire.errors import UsageError
        from schemawire.mcp import McpClient

        if self.address is None:
            raise UsageError("the page was started without an MCP server")
        if self._group is None:
            raise UsageError(
                "the page's server runs without its lifespan: nothing can hold a session"
            )
        client = McpClient(
            self.address, repository=repository, trace=trace, timeout=self.config.call_timeout
        )
        self._stopped = anyio.Event()  # this holder's: one that failed to open set its own
        await self._group.start(self._hold, client, self._stopped)
        return client

    async def _hold(
        self,
        client: McpClient,
        stopped: anyio.Event,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Keep ``client`` open until the page stops (its ``async with`` must enter and leave
        in one task: this one)."""
        try:
            async with client:
                task_status.started()
                await self._stop.wait()
        finally:
            stopped.set()

    async def _close(self) -> None:
        self._stop.set()
        if self._client is not None:
            with anyio.move_on_after(CLOSE_SECONDS, shield=True):
                await self._stopped.wait()
            self._client = None


def _schemas_changed(held: Repository | None, given: Repository | None) -> bool:
    """Whether ``given`` gates differently from the repository the client holds."""
    if held is None or given is None:
        return held is not given
    return bool(held.documents != given.documents)
