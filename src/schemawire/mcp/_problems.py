"""Why an MCP server cannot be used: `ServerError`, with a stable code and one line to act on.

Opening a connection fails in ways a person can act on: the command does not run, the server
exits during start-up (its last line on stderr says why), nothing listens at the URL, the server
wants a token (HTTP 401). The SDK reports each of them as exception groups nested around
"Connection closed". `startup_problem` reads that tree, together with what the transport saw
(HTTP error statuses, the server's stderr, lines that are not JSON-RPC), and says which it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import httpx2
import mcp_types
from mcp.shared.exceptions import MCPError

from schemawire.errors import ServerError, one_line
from schemawire.gates.redact import default_redactor

__all__ = [
    "SERVER_PROBLEMS",
    "HttpStatuses",
    "ServerProblem",
    "last_line",
    "server_error",
    "startup_problem",
    "unknown_tool_error",
]

ServerProblem = Literal[
    "not_started",
    "exited",
    "unreachable",
    "unauthorized",
    "forbidden",
    "not_found",
    "http_error",
    "timeout",
    "handshake_failed",
    "unavailable",
]

SERVER_PROBLEMS: dict[str, str] = {
    "not_started": "the server's command could not be run",
    "exited": "the server exited (or closed its output) before the handshake finished",
    "unreachable": "nothing answers at the server's address",
    "unauthorized": "HTTP 401: the server wants credentials",
    "forbidden": "HTTP 403: the server refused the credentials, or the request's Origin",
    "not_found": "HTTP 404: there is no MCP endpoint at the URL",
    "http_error": "the server answered with another HTTP error status",
    "timeout": "the server did not answer in time",
    "handshake_failed": "the server answered, but the handshake failed",
    "unavailable": "the server went away, or did not answer, after the handshake",
}
"""Each `ServerError.code`, and what it means. Compare codes, never the message."""

_HINTS: dict[str, str] = {
    "not_started": "check the command and its arguments",
    "exited": "fix what it says, or run its command alone to see all it writes",
    "unreachable": "check that the server is running and that the URL is right",
    "unauthorized": "give the server's bearer token (HttpServer(token=...)) or the header it "
    "asks for",
    "forbidden": "check the token, and that the server allows this client's Origin",
    "not_found": "check the URL's path (schemawire serve --http listens at /mcp)",
}
_LINE = 500  # characters of a line quoted from a server


def server_error(
    server: str,
    reason: str,
    stderr: str = "",
    code: ServerProblem = "unavailable",
    hint: str | None = None,
) -> ServerError:
    """The `ServerError` for ``server``, its label, reason and stderr redacted (see why in
    `ServerError`), with the hint of its ``code`` unless one is given."""
    redact = default_redactor().text
    server, reason, stderr = redact(server)[0], redact(reason)[0], redact(stderr)[0]
    hint = _HINTS.get(code, "") if hint is None else hint
    return ServerError(server, reason, stderr, code, hint)


@dataclass(frozen=True, slots=True)
class HttpStatus:
    """An HTTP error answer a server gave: its status, and what it asks for (its
    ``WWW-Authenticate``)."""

    status: int
    reason: str
    authenticate: str | None


class HttpStatuses:
    """Records the HTTP error answers of one connection (an httpx2 response hook): the SDK
    turns them into "Connection closed" and forgets the status."""

    def __init__(self) -> None:
        self.seen: list[HttpStatus] = []

    async def __call__(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            authenticate = response.headers.get("www-authenticate")
            self.seen.append(HttpStatus(response.status_code, response.reason_phrase, authenticate))


def startup_problem(
    error: BaseException,
    *,
    statuses: HttpStatuses | None = None,
    stderr: str = "",
    unreadable: tuple[str, ...] = (),
    timeout: float | None = None,
    process: bool = False,
    credentials: bool = False,
) -> tuple[ServerProblem, str]:
    """What kept a connection from opening, as a code and one line: from the exception (a tree
    of groups, read leaf by leaf), the HTTP error statuses seen (``statuses``, for HTTP), the
    end of the server's ``stderr`` and the lines it wrote that are not JSON-RPC (``process``:
    a server the client started); ``credentials``: a token or an ``Authorization`` was sent."""
    leaves = list(_leaves(error))
    if statuses is not None and statuses.seen:
        # The last: in "auto" mode a first refusal may be the discovery probe's, answered again.
        return _http_problem(statuses.seen[-1], credentials)
    found = _transport_problem(leaves)
    if found is not None:
        return found
    codes = {leaf.error.code for leaf in leaves if isinstance(leaf, MCPError)}
    if mcp_types.REQUEST_TIMEOUT in codes:
        within = f" within {timeout:g} s" if timeout is not None else " in time"
        return "timeout", f"the handshake did not finish{within}"
    if mcp_types.CONNECTION_CLOSED in codes and process:
        return "exited", _exit_line(stderr, unreadable)
    if mcp_types.CONNECTION_CLOSED in codes:
        return "handshake_failed", "the server closed the connection during the handshake"
    first = leaves[0] if leaves else error
    return "handshake_failed", one_line(first) + _unreadable_note(unreadable)


def _transport_problem(leaves: list[BaseException]) -> tuple[ServerProblem, str] | None:
    """A connection that failed below MCP: a socket that would not connect, a command that
    would not run."""
    for leaf in leaves:
        if isinstance(leaf, httpx2.TimeoutException):
            return "timeout", f"the connection timed out ({one_line(leaf)})"
        if isinstance(leaf, httpx2.TransportError):
            return "unreachable", f"cannot connect: {_transport_line(leaf)}"
        if isinstance(leaf, OSError):
            return "not_started", one_line(leaf)
    return None


def _http_problem(seen: HttpStatus, credentials: bool) -> tuple[ServerProblem, str]:
    status = f"HTTP {seen.status} {seen.reason}".rstrip()
    if seen.status == 401 and credentials:
        return "unauthorized", f"{status}: the server refused the credentials sent"
    if seen.status == 401:
        asks = f" (it asks for {seen.authenticate})" if seen.authenticate else ""
        return "unauthorized", f"{status}: the server needs credentials{asks}"
    if seen.status == 403:
        return "forbidden", f"{status}: the server refused this client"
    if seen.status == 404:
        return "not_found", f"{status}: no MCP endpoint at this URL"
    return "http_error", f"the server answered {status}"


def _exit_line(stderr: str, unreadable: tuple[str, ...]) -> str:
    line = "the server exited during start-up"
    said = last_line(stderr)
    line += f"; it said: {said}" if said else " and wrote nothing on stderr"
    return line + _unreadable_note(unreadable)


def _unreadable_note(unreadable: tuple[str, ...]) -> str:
    return f" (it wrote what is not JSON-RPC: {unreadable[-1][:200]})" if unreadable else ""


def _transport_line(error: BaseException) -> str:
    """A connection failure in words: what the socket said (the innermost cause with an
    errno), when it said anything."""
    cause: BaseException | None = error
    said = ""
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, OSError) and cause.strerror:
            said = cause.strerror.lower()
        cause = cause.__cause__ or cause.__context__
    return said or str(error) or type(error).__name__


def _leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions inside ``error``'s groups, depth first, in order."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def last_line(text: str) -> str:
    """The last line of ``text`` with anything on it, cut to a quotable length."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:_LINE] if lines else ""


def unknown_tool_error(name: str) -> MCPError:
    """The spec's answer to a call of a tool the server does not have: this JSON-RPC error,
    its data naming our code."""
    return MCPError(
        code=mcp_types.INVALID_PARAMS,
        message=f"Unknown tool: {name}",
        data={"code": "tool_unknown"},
    )
