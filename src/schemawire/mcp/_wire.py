"""The MCP wire, traced: every JSON-RPC message in both directions becomes a hop.

The SDK's sessions have no hook that sees every message (``message_handler`` gets only
notifications), so the trace sits one layer lower, on the pair of streams a transport yields:
what crosses them is exactly what the transport writes and reads.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from schemawire._json import quoted
from schemawire.errors import one_line
from schemawire.gates.redact import default_redactor
from schemawire.mcp._offload import off_loop
from schemawire.trace import Trace

__all__ = ["WireTap", "message_json", "traced"]


PROTOCOL = "mcp"
_UNREADABLE_KEPT = 8  # lines that are not JSON-RPC kept for an error to quote (the last is quoted)
_SEEN = 4000  # characters of an unreadable line redacted: a secret begun in the 500 quoted ends


def message_json(message: SessionMessage | Exception) -> dict[str, Any]:
    """A message as the JSON that crossed the wire (camelCase, nothing added); what a
    transport could not read becomes ``{"unreadable": "..."}``."""
    if isinstance(message, Exception):
        return {"unreadable": _unreadable(message)}
    dumped: dict[str, Any] = message.message.model_dump(
        by_alias=True, mode="json", exclude_unset=True
    )
    return dumped


def _unreadable(error: Exception) -> str:
    """What a transport could not read, in one line: the line itself (as JSON) when it is
    known, its secrets redacted before quoting hides them (``\\"password\\": ...``)."""
    if isinstance(error, ValidationError) and error.errors():
        found = error.errors()[0].get("input")
        if isinstance(found, str | bytes):
            text = found.decode("utf-8", "replace") if isinstance(found, bytes) else found
            return quoted(default_redactor().text(text[:_SEEN])[0][:500])
    return one_line(error)


class WireTap:
    """Where the hops of one connection go, and who is at each end."""

    def __init__(self, trace: Trace, local: str, remote: str) -> None:
        self.trace = trace
        self.local = local
        self.remote = remote
        # The last few lines the peer wrote that are not JSON-RPC, for errors: a peer that
        # writes them for days leaves no more than these.
        self.unreadable: deque[str] = deque(maxlen=_UNREADABLE_KEPT)

    async def sent(self, message: SessionMessage) -> None:
        await self._record(self.local, self.remote, "send", message)

    async def received(self, message: SessionMessage | Exception) -> None:
        if isinstance(message, Exception):
            self.unreadable.append(_unreadable(message))
        await self._record(self.remote, self.local, "receive", message)

    async def _record(self, source: str, target: str, direction: str, message: Any) -> None:
        """Record one message: off the event loop when it is large (redacting and writing a
        large hop takes long enough to stall every other client), and without building its JSON
        when the trace keeps nothing. Shielded: the message has crossed the wire, and a
        cancelled recording would lose it for the stream it came from."""
        trace = self.trace
        if not trace.keeps_anything:
            trace.record(source, target, PROTOCOL, direction, None)  # numbered, not built
            return
        with anyio.CancelScope(shield=True):
            await off_loop(_record, trace, source, target, direction, message, weight=message)


def _record(
    trace: Trace, source: str, target: str, direction: str, message: SessionMessage | Exception
) -> None:
    trace.record(source, target, PROTOCOL, direction, message_json(message))


class _ClosedOnExit(ABC):
    """A stream that ``async with`` closes on the way out."""

    @abstractmethod
    async def aclose(self) -> None:
        """Close the stream."""

    async def __aenter__(self) -> Self:
        return self

    # The protocol's own signature, which McpClient.__aexit__ writes the same.
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _TappedRead(_ClosedOnExit):
    def __init__(self, inner: ReadStream[Any], tap: WireTap) -> None:
        self._inner = inner
        self._tap = tap

    async def receive(self) -> Any:
        message = await self._inner.receive()
        await self._tap.received(message)
        return message

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        message = await self._inner.__anext__()
        await self._tap.received(message)
        return message


class _TappedWrite(_ClosedOnExit):
    def __init__(self, inner: WriteStream[Any], tap: WireTap) -> None:
        self._inner = inner
        self._tap = tap

    async def send(self, item: Any, /) -> None:
        await self._tap.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


def tap_streams(
    read: ReadStream[Any], write: WriteStream[Any], tap: WireTap | None
) -> tuple[Any, Any]:
    """The stream pair with every message recorded by ``tap`` (unchanged when None)."""
    if tap is None:
        return read, write
    return _TappedRead(read, tap), _TappedWrite(write, tap)


def traced(
    transport: AbstractAsyncContextManager[tuple[Any, Any]], tap: WireTap | None
) -> AbstractAsyncContextManager[tuple[Any, Any]]:
    """A client transport whose streams are tapped."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[tuple[Any, Any]]:
        async with transport as (read, write):
            yield tap_streams(read, write, tap)

    return opened()
