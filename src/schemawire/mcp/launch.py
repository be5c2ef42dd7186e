"""Launching a gated server, what `schemawire serve` runs: the repository's tools (`LocalTools`),
a gating proxy (`UpstreamTools`) or a gateway over several upstreams (`Gateway`), served over
stdio or Streamable HTTP until told to stop.

`schemawire.mcp.server` is the server itself (the SDK's `Server` with both gates on every
call); this module picks its tools and runs it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from schemawire._version import __version__
from schemawire.errors import UsageError
from schemawire.gates import Embedder
from schemawire.mcp._addresses import HttpServer, StdioServer
from schemawire.mcp._forward import Forwarder
from schemawire.mcp._http import HttpOptions, SessionBounds, http_app, running
from schemawire.mcp._memory import give_back_large_blocks
from schemawire.mcp._pipes import pipes_available, stdio_pipes
from schemawire.mcp._sent import SentLines, stdin_lines
from schemawire.mcp.client import McpClient
from schemawire.mcp.gateway import Upstream, open_gateway
from schemawire.mcp.proxy import UpstreamTools
from schemawire.mcp.server import LocalTools, Sessions, build_server
from schemawire.schema.config import GatewayUpstream
from schemawire.schema.implementations import load_implementations
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from schemawire.types import Hop

__all__ = [
    "DEFAULT_TOP",
    "HttpOptions",
    "ServeOptions",
    "SessionBounds",
    "Upstream",
    "gated_server",
    "serve",
]

_UPSTREAM_TIMEOUT = 30.0  # seconds a proxied call may take, unless told
DEFAULT_TOP = 5
"""How many tools a gateway's search returns, when neither ``--top`` nor ``[gateway]
shortlist`` says."""


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """What `serve` serves, and how.

    Attributes:
        upstream: the server to stand in front of (a proxy); None serves the repository's tools.
        upstreams: the servers to serve as one (a gateway), each under its name; when there
            are none, and no ``upstream``, the repository's ``[gateway]`` table's.
        shortlist: as a gateway, list only ``search_tools`` and ``call_tool``, a search
            returning this many tools; None: ``[gateway] shortlist`` (when there is one, else
            every tool is listed), or `DEFAULT_TOP` when ``shortlisted``.
        shortlisted: list only the two tools even without a size (``--shortlist`` alone).
        embedder: a shortlisting gateway's searches rank by meaning too (any ``texts ->
            vectors`` callable, `semantic_embedder()` for ``--semantic``), fused with BM25.
        http: listen on Streamable HTTP; None serves stdio.
        timeout: seconds a call may take: a call to the upstream (default 30), or one of the
            repository's tools (default ``[serve] timeout``, 60).
        trace: a JSON Lines file to append every hop to.
        name: the server's name (default: ``[serve] name``, else the repository's directory).
        on_hop: told each hop too (an OpenTelemetry export: ``serve --otlp``).
    """

    upstream: StdioServer | HttpServer | None = None
    upstreams: tuple[Upstream, ...] = ()
    shortlist: int | None = None
    shortlisted: bool = False
    embedder: Embedder | None = None
    http: HttpOptions | None = None
    timeout: float | None = None
    trace: Path | None = None
    name: str | None = None
    on_ready: Callable[[int | None], None] = field(default=lambda port: None)
    on_hop: Callable[[Hop], None] | None = None

    def open_trace(self) -> Trace:
        """The server's trace: every hop written to ``trace`` (when given), none kept in
        memory, so a server that runs for days does not grow with the calls it serves."""
        return Trace(path=self.trace, keep=False, on_hop=self.on_hop)


@asynccontextmanager
async def gated_server(
    repository: Repository, options: ServeOptions, trace: Trace, lines: SentLines | None = None
) -> AsyncIterator[Server[Any]]:
    """The SDK server that serves ``repository`` (or the upstream), for as long as the block
    runs: a proxy's upstream connection lives that long too. ``lines``: stdin, when serving
    stdio (see `build_server`).

    Raises:
        UsageError: the repository implements no tool and there is no upstream.
        ServerError: the upstream cannot be started or reached.
    """
    name = options.name or repository.config.serve.name or repository.root.name
    upstreams = options.upstreams or _configured_upstreams(repository, options)
    if upstreams:
        async with _gateway_server(
            repository, options, upstreams, trace, name=name, lines=lines
        ) as server:
            yield server
        return
    if options.shortlist is not None or options.shortlisted or options.embedder is not None:
        raise UsageError("--shortlist is for a gateway: name the upstream (--upstream NAME -- ...)")
    if options.upstream is None:
        implementations = load_implementations(repository)
        if not implementations:
            raise UsageError(
                f"nothing to serve: {repository.root} names no tool under "
                "[serve.tools] (or pass --upstream)"
            )
        timeout = options.timeout or repository.config.serve.timeout
        tools = LocalTools(repository, implementations, timeout=timeout)
        yield build_server(tools, name=name, version=__version__, trace=trace, lines=lines)
        return
    sessions = Sessions()  # told when the upstream's tool list changes
    async with McpClient(
        options.upstream,
        repository=repository,
        trace=trace,
        timeout=options.timeout or _UPSTREAM_TIMEOUT,
        on_tools_changed=sessions.tools_changed,
    ) as client:
        yield build_server(
            UpstreamTools(client),
            name=f"{name} (gating proxy)",
            version=__version__,
            trace=trace,
            sessions=sessions,
            lines=lines,
        )


@asynccontextmanager
async def _gateway_server(
    repository: Repository,
    options: ServeOptions,
    upstreams: tuple[Upstream, ...],
    trace: Trace,
    *,
    name: str,
    lines: SentLines | None,
) -> AsyncIterator[Server[Any]]:
    sessions = Sessions()  # told when any upstream's tool list changes
    shortlist = options.shortlist or repository.config.gateway.shortlist
    if shortlist is None and options.shortlisted:
        shortlist = DEFAULT_TOP
    async with open_gateway(
        upstreams,
        repository=repository,
        trace=trace,
        timeout=options.timeout or _UPSTREAM_TIMEOUT,
        sessions=sessions,
        shortlist=shortlist,
        embedder=options.embedder,
    ) as gateway:
        yield build_server(
            gateway,
            name=f"{name} (gateway)",
            version=__version__,
            trace=trace,
            sessions=sessions,
            lines=lines,
        )


def _configured_upstreams(repository: Repository, options: ServeOptions) -> tuple[Upstream, ...]:
    """The ``[gateway]`` table's upstreams, unless the command line names an upstream."""
    if options.upstream is not None:
        return ()
    return tuple(_upstream(repository.root, entry) for entry in repository.config.gateway.upstreams)


def _upstream(root: Path, entry: GatewayUpstream) -> Upstream:
    if entry.command is not None:
        command, *args = entry.command
        cwd = root / entry.cwd if entry.cwd is not None else None
        server: StdioServer | HttpServer = StdioServer(
            command, tuple(args), entry.env or None, cwd, name=entry.name
        )
    else:
        assert entry.url is not None
        server = HttpServer(entry.url, dict(entry.headers))
    key = "command" if entry.command is not None else "url"
    origin = f"{key} of [gateway.upstreams.{entry.name}] in schemawire.toml"
    return Upstream(entry.name, server, entry.timeout, origin=origin)


def serve(directory: Path, options: ServeOptions) -> None:
    """Serve until stdin closes (stdio), or until SIGINT or SIGTERM (HTTP).

    Raises:
        InputError: the repository cannot be read.
        UsageError: nothing to serve, or an address that is refused.
        ServerError: a proxy's upstream cannot be started or reached.
    """
    repository = Repository.load(directory)
    if options.http is not None:
        options.http.check()
    give_back_large_blocks()  # a server runs for days: its memory must not creep up
    anyio.run(_serve, repository, options)


async def _serve(repository: Repository, options: ServeOptions) -> None:
    with options.open_trace() as trace:
        if options.http is None:
            await _serve_stdio(repository, options, trace)
            return
        async with (
            gated_server(repository, options, trace) as server,
            running(http_app(server, options.http), options.http) as listening,
        ):
            options.on_ready(listening.port)
            await listening.stopped.wait()


async def _serve_stdio(repository: Repository, options: ServeOptions, trace: Trace) -> None:
    """Serve until stdin closes; stdin is read for the SDK's transport (`stdin_lines`). A
    proxy forwards the client's messages at the transport level (`Forwarder`)."""
    if options.upstream is not None and not options.upstreams:
        await _forward_stdio(repository, options, options.upstream, trace)
        return
    async with (
        stdin_lines() as lines,
        gated_server(repository, options, trace, lines) as server,
        stdio_server(stdin=cast(Any, lines)) as (read, write),
    ):
        options.on_ready(None)
        await server.run(read, write, server.create_initialization_options())


async def _forward_stdio(
    repository: Repository, options: ServeOptions, upstream: StdioServer | HttpServer, trace: Trace
) -> None:
    """The gating proxy over stdio: the client's messages forwarded to ``upstream``, gated."""
    if options.shortlist is not None or options.shortlisted or options.embedder is not None:
        raise UsageError("--shortlist is for a gateway: name the upstream (--upstream NAME -- ...)")
    name = options.name or repository.config.serve.name or repository.root.name
    forwarder = Forwarder(
        upstream,
        repository=repository,
        trace=trace,
        name=f"{name} (gating proxy)",
        version=__version__,
        timeout=options.timeout or _UPSTREAM_TIMEOUT,
    )
    async with _stdio() as (lines, stdout):
        forwarder.lines = lines
        async with stdio_server(stdin=cast(Any, lines), stdout=stdout) as (read, write):
            options.on_ready(None)
            await forwarder.run(read, write)


@asynccontextmanager
async def _stdio() -> AsyncIterator[tuple[SentLines, Any]]:
    """Stdin as `SentLines`, and stdout: pipes read and written on the event loop where they
    can be (`schemawire.mcp._pipes`), else stdin read as the SDK does, stdout the SDK's
    (None)."""
    if not pipes_available():
        async with stdin_lines() as lines:
            yield lines, None
        return
    async with stdio_pipes() as (pipe_in, pipe_out):
        lines = SentLines(pipe_in)
        try:
            yield lines, pipe_out
        finally:
            lines.closed = True
