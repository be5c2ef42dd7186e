"""Serving MCP over Streamable HTTP, safely by default.

Loopback only unless asked; ``Host`` and ``Origin`` checked against DNS rebinding (the SDK's
transport security: a foreign Host gets 421, a foreign Origin 403); an optional bearer token
compared in constant time; a connection that is slow to send its request's headers or body is
closed (`HttpOptions.header_timeout`, `HttpOptions.body_timeout`): uvicorn has no such timeouts
of its own, so a client could hold a connection, and its memory, for as long as it liked.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import h11
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from uvicorn.protocols.http.h11_impl import H11Protocol

from schemawire.errors import UsageError
from schemawire.mcp._sessions import SessionBounds, bounded_sessions

__all__ = ["HttpOptions", "Listening", "SessionBounds", "http_app", "running"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOOPBACK_NAMES = ("localhost",)
_STARTUP_SECONDS = 10.0
# Sessions the SDK may hold beyond `SessionBounds.total`: room for sessions being opened while
# the longest-idle ones are ended (the SDK's own bound is only a backstop).
_OPENING_HEADROOM = 100


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How `schemawire serve --http` listens.

    Attributes:
        host: the address to bind; loopback (127.0.0.1) by default.
        port: the port; 0 picks a free one.
        path: the MCP endpoint's path.
        allow_remote: binding an address other than loopback must be asked for.
        token: when set, every request needs ``Authorization: Bearer <token>``.
        allowed_origins: browser origins allowed besides the loopback ones, such as
            ``https://app.example.com``.
        allowed_hosts: ``Host`` values allowed besides the bound address.
        header_timeout: seconds a request's headers may take to arrive, counted from the
            connection's opening or the previous response's end.
        body_timeout: seconds a request's body may take to arrive once its headers have.
        sessions: how many Streamable HTTP sessions are kept, and how long an idle one lives.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    allow_remote: bool = False
    token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    sessions: SessionBounds = field(default_factory=SessionBounds)

    def check(self) -> None:
        """Refuse to bind a non-loopback address unless ``allow_remote`` is set, and timeouts
        that are not positive.

        Raises:
            UsageError: the address is not loopback and remote access was not asked for, or a
                timeout or a session bound is not positive.
        """
        if not self.allow_remote and not is_loopback(self.host):
            raise UsageError(
                f"{self.host} is not a loopback address: pass --allow-remote to "
                "serve other machines (and set --token)"
            )
        seconds = (
            ("--header-timeout", self.header_timeout),
            ("--body-timeout", self.body_timeout),
            ("--session-idle", self.sessions.idle),
        )
        for flag, value in seconds:
            if not 0 < value < float("inf"):
                raise UsageError(f"{flag} {value:g}: give a positive number of seconds")
        counts = (
            ("--max-sessions", self.sessions.total),
            ("--client-sessions", self.sessions.per_client),
        )
        for flag, count in counts:
            if count < 1:
                raise UsageError(f"{flag} {count}: give a positive number of sessions")


def is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _security(options: HttpOptions) -> TransportSecuritySettings:
    """Allowed ``Host`` and ``Origin`` values: the loopback names (bare and with any port),
    the bound host, and what the options add."""
    hosts = ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"]
    origins = [
        "http://127.0.0.1",
        "http://127.0.0.1:*",
        "http://localhost",
        "http://localhost:*",
        "http://[::1]:*",
    ]
    if not is_loopback(options.host):
        hosts += [options.host, f"{options.host}:*"]
    hosts += list(options.allowed_hosts)
    origins += list(options.allowed_origins)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class _BearerToken:
    """Refuses HTTP requests without the bearer token (401); a pure ASGI wrapper, so server-sent
    event streams pass through unbuffered."""

    def __init__(self, app: App, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Send) -> None:
    body = b'{"error": "unauthorized", "hint": "send Authorization: Bearer <token>"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(server: Server[Any], options: HttpOptions) -> App:
    """The server as an ASGI app: Streamable HTTP at ``options.path``, stateful, answering with
    server-sent events (so progress and list-changed notifications reach the client), its
    sessions within ``options.sessions`` (`schemawire.mcp._sessions`)."""
    sdk_app: App = server.streamable_http_app(
        streamable_http_path=options.path,
        transport_security=_security(options),
        host=options.host,
        session_idle_timeout=options.sessions.idle,
        max_sessions=options.sessions.total + _OPENING_HEADROOM,
    )
    app = bounded_sessions(sdk_app, options.sessions, options.path)
    return _BearerToken(app, options.token) if options.token else app


@dataclass(frozen=True, slots=True)
class Listening:
    """A running HTTP server: its port, and an event set once it has stopped (on SIGINT or
    SIGTERM, which uvicorn handles)."""

    port: int
    stopped: anyio.Event


@asynccontextmanager
async def running(app: App, options: HttpOptions) -> AsyncIterator[Listening]:
    """Serve ``app`` with uvicorn while the block runs.

    Raises:
        UsageError: the address is refused (see `HttpOptions.check`).
        OSError: uvicorn could not start (the port is taken, for one).
    """
    options.check()
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        http=_with_read_deadlines(options.header_timeout, options.body_timeout),
    )
    server = uvicorn.Server(config)
    stopped = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve()
        finally:
            stopped.set()

    async with anyio.create_task_group() as group:
        group.start_soon(serve)
        await _started(server, stopped)
        try:
            yield Listening(server.servers[0].sockets[0].getsockname()[1], stopped)
        finally:
            server.should_exit = True
            with anyio.move_on_after(_STARTUP_SECONDS):
                await stopped.wait()
            group.cancel_scope.cancel()


async def _started(server: uvicorn.Server, stopped: anyio.Event) -> None:
    """Wait (bounded) until uvicorn has bound its socket; uvicorn has no event to await."""
    with anyio.fail_after(_STARTUP_SECONDS):
        while not server.started:
            if stopped.is_set():
                raise OSError("the HTTP server did not start (is the port taken?)")
            await anyio.sleep(0.01)


def _with_read_deadlines(header_timeout: float, body_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose client is too slow to send a request.

    A request's headers must arrive within ``header_timeout`` of the connection opening (or of
    the previous response's end, on a kept-alive connection), its body within ``body_timeout``
    of its headers. Bytes trickling in do not extend either deadline. Closing the connection
    while a body is awaited tells the app the client went away (``http.disconnect``).
    """

    class ReadDeadlines(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _awaiting: object = None  # the h11 state the deadline is for: IDLE (headers) or SEND_BODY

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._follow_request()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow_request()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._awaiting = None  # the next request's headers get a deadline of their own
            self._follow_request()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_deadline()
            super().connection_lost(exc)

        def _follow_request(self) -> None:
            """Set the deadline for what the client is to send next, if anything."""
            state = self.conn.their_state
            if state is self._awaiting:
                return  # the deadline set when this wait began still stands
            self._cancel_deadline()
            self._awaiting = state
            seconds = {h11.IDLE: header_timeout, h11.SEND_BODY: body_timeout}.get(state)
            if seconds is not None and not self.transport.is_closing():
                self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _cancel_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()  # asyncio then calls connection_lost

    return ReadDeadlines
