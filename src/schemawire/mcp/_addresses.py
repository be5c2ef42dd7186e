"""Where an MCP server is: a process to start (`StdioServer`) or a URL to reach (`HttpServer`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from schemawire.errors import UsageError

__all__ = ["HttpServer", "ServerAddress", "StdioServer", "sends_credentials"]


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


def sends_credentials(server: ServerAddress) -> bool:
    """Whether requests to ``server`` carry credentials (a token or an Authorization header)."""
    if isinstance(server, StdioServer):
        return False
    return bool(server.token) or any(name.lower() == "authorization" for name in server.headers)
