"""Serving MCP over Streamable HTTP, safely by default.

Loopback only unless asked; ``Host`` and ``Origin`` checked against DNS rebinding (the SDK's
transport security: a foreign Host gets 421, a foreign Origin 403); an optional bearer token
compared in constant time.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings

from schemawire.errors import UsageError

__all__ = ["HttpOptions", "Listening", "http_app", "running"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOOPBACK_NAMES = ("localhost",)
_STARTUP_SECONDS = 10.0


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
    """

    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    allow_remote: bool = False
    token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()

    def check(self) -> None:
        """Refuse to bind a non-loopback address unless ``allow_remote`` is set.

        Raises:
            UsageError: the address is not loopback and remote access was not asked for.
        """
        if not self.allow_remote and not is_loopback(self.host):
            raise UsageError(f"{self.host} is not a loopback address: pass --allow-remote to "
                             "serve other machines (and set --token)")  # fmt: skip


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
    origins = ["http://127.0.0.1", "http://127.0.0.1:*", "http://localhost",
               "http://localhost:*", "http://[::1]:*"]  # fmt: skip
    if not is_loopback(options.host):
        hosts += [options.host, f"{options.host}:*"]
    hosts += list(options.allowed_hosts)
    origins += list(options.allowed_origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=hosts, allowed_origins=origins)  # fmt: skip


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
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer")]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def http_app(server: Server[Any], options: HttpOptions) -> App:
    """The server as an ASGI app: Streamable HTTP at ``options.path``, stateful, answering with
    server-sent events (so progress and list-changed notifications reach the client)."""
    app: App = server.streamable_http_app(
        streamable_http_path=options.path,
        transport_security=_security(options),
        host=options.host,
    )
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
    config = uvicorn.Config(app, host=options.host, port=options.port, log_level="warning",
                            lifespan="on", timeout_graceful_shutdown=2)  # fmt: skip
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
