"""Bounds on the Streamable HTTP sessions a server keeps open.

The SDK's session manager keeps up to 10,000 sessions, each until it has been idle for 30
minutes, and answers 503 to every new client once that many are open: one client that opens
sessions and walks away locks everyone out for half an hour. Here the SDK idles sessions out
sooner (`SessionBounds.idle`), and an ASGI layer in front of it bounds how many sessions one
client address may hold (`SessionBounds.per_client`) and how many the server holds in all
(`SessionBounds.total`).

A new session past either bound is not refused: the layer ends the longest-idle session of that
client (past ``per_client``) or of anyone (past ``total``), as a client ending its own would, with
a ``DELETE`` of its ``Mcp-Session-Id``; the client of the ended session gets 404 on its next
request, the MCP spec's signal to start a new session. Sessions busy with a request (an open
server-sent event stream included) are never ended: when every candidate is busy, the new session
is refused with 503 and ``Retry-After``. A request that does not open a session (a foreign
``Host``, a bad body) ends nothing.

Clients are told apart by address. Every client on loopback has the same one (127.0.0.1), so on
loopback ``per_client`` and ``total`` both bound the same sessions. Each IPv6 address is a client
of its own: a host that holds a /64 has as many addresses as it likes, so over IPv6
``per_client`` bounds little and ``total`` is the bound that holds.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SessionBounds", "bounded_sessions"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_SESSION_HEADER = b"mcp-session-id"
_RETRY_AFTER = b"5"  # seconds: by then a busy session may have gone idle


@dataclass(frozen=True, slots=True)
class SessionBounds:
    """How many Streamable HTTP sessions a server keeps, and for how long.

    Attributes:
        idle: seconds a session may go without a request (none in flight, no event stream
            open) before the server ends it.
        per_client: sessions one client address may hold; past it, that client's longest-idle
            session is ended.
        total: sessions the server holds; past it, the longest-idle session of anyone is
            ended.
    """

    idle: float = 300.0
    per_client: int = 100
    total: int = 1000


@dataclass(slots=True)
class _Session:
    client: str
    last_active: float
    in_flight: int = 0
    host_headers: list[tuple[bytes, bytes]] = field(default_factory=list[tuple[bytes, bytes]])


class _BoundedSessions:
    """The ASGI layer that keeps the sessions within `SessionBounds` (see the module)."""

    def __init__(self, app: App, bounds: SessionBounds, path: str) -> None:
        self.app = app
        self.bounds = bounds
        self.path = path
        self._sessions: dict[str, _Session] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is None:
            await self._open(scope, receive, send)
            return
        session = self._sessions.get(session_id.decode("latin-1"))
        if session is None:
            await self.app(scope, receive, send)  # the SDK answers 404
            return
        await self._within(session_id.decode("latin-1"), session, scope, receive, send)

    async def _within(
        self, session_id: str, session: _Session, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """Serve a request of a known session, counting it as in flight while it lasts."""
        session.in_flight += 1
        status = 0

        async def watch(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            session.in_flight -= 1
            session.last_active = time.monotonic()
            ended = status == 404 or (scope["method"] == "DELETE" and 200 <= status < 300)
            if ended:
                self._sessions.pop(session_id, None)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a request that may open a session; make room for the session it opens.

        The session is tracked from the moment the SDK names it (its answer's first message),
        busy until the answer is done: a request on the new id that comes in meanwhile (a GET
        stream, a call) is counted as in flight, so nothing ends or forgets the session under it.
        """
        client = _client(scope)
        self._forget_idle()
        if self._full_and_busy(client):
            await _too_many(send)
            return
        opened: tuple[str, _Session] | None = None

        async def watch(message: MutableMapping[str, Any]) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and message["status"] < 400:
                found = dict(message.get("headers", ())).get(_SESSION_HEADER)
                if found is not None:
                    session = _Session(client, time.monotonic(), 1, _host_headers(scope))
                    opened = (found.decode("latin-1"), session)
                    self._sessions[opened[0]] = session
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if opened is not None:
                opened[1].in_flight -= 1
                opened[1].last_active = time.monotonic()
        if opened is not None and self._sessions.get(opened[0]) is opened[1]:  # not ended since
            await self._make_room(client, opened[0])

    def _full_and_busy(self, client: str) -> bool:
        """Whether a new session of ``client`` would pass a bound with no idle session to end."""
        mine = self._of(client)
        if len(mine) >= self.bounds.per_client and _longest_idle(mine) is None:
            return True
        everyone = list(self._sessions.items())
        return len(everyone) >= self.bounds.total and _longest_idle(everyone) is None

    async def _make_room(self, client: str, opened: str) -> None:
        """End longest-idle sessions (never ``opened``) until both bounds hold again."""
        while True:
            mine = [(i, s) for i, s in self._of(client) if i != opened]
            if len(mine) >= self.bounds.per_client:
                victim = _longest_idle(mine)
            elif len(self._sessions) > self.bounds.total:
                victim = _longest_idle([(i, s) for i, s in self._sessions.items() if i != opened])
            else:
                return
            if victim is None:
                return  # every other session is busy: over by the one just opened, for now
            await self._end(victim)

    def _of(self, client: str) -> list[tuple[str, _Session]]:
        return [(i, s) for i, s in self._sessions.items() if s.client == client]

    def _forget_idle(self) -> None:
        """Forget the sessions the SDK has ended for idling (it says nothing when it does)."""
        cutoff = time.monotonic() - self.bounds.idle
        for session_id, session in list(self._sessions.items()):
            if session.in_flight == 0 and session.last_active <= cutoff:
                del self._sessions[session_id]

    async def _end(self, session_id: str) -> None:
        """End a session as its client would: a ``DELETE`` with its id, to the SDK."""
        session = self._sessions.pop(session_id)
        headers = [*session.host_headers, (_SESSION_HEADER, session_id.encode("latin-1"))]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": self.path,
            "raw_path": self.path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": None,
            "server": None,
        }

        async def receive() -> MutableMapping[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: MutableMapping[str, Any]) -> None:
            pass  # nobody is waiting for the answer

        await self.app(scope, receive, discard)


def bounded_sessions(app: App, bounds: SessionBounds, path: str) -> App:
    """``app`` (the SDK's Streamable HTTP app, serving ``path``) with its sessions kept within
    ``bounds``; the SDK must idle sessions out after ``bounds.idle`` itself."""
    return _BoundedSessions(app, bounds, path)


def _longest_idle(sessions: list[tuple[str, _Session]]) -> str | None:
    idle = [(s.last_active, i) for i, s in sessions if s.in_flight == 0]
    return min(idle)[1] if idle else None


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            found: bytes = value
            return found
    return None


def _host_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """The headers the SDK's DNS-rebinding check reads, from a request it accepted."""
    return [(k, v) for k, v in scope["headers"] if k in (b"host", b"origin")]


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def _too_many(send: Send) -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": '
        b'"Too many open sessions, all busy: retry later, or end sessions you no longer use"}}'
    )
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [(b"content-type", b"application/json"), (b"retry-after", _RETRY_AFTER)],
        }
    )
    await send({"type": "http.response.body", "body": body})
