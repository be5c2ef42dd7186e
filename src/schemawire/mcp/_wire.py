"""The MCP wire, traced: every JSON-RPC message in both directions becomes a hop.

The SDK's sessions have no hook that sees every message (``message_handler`` gets only
notifications), so the trace sits one layer lower, on the pair of streams a transport yields:
what crosses them is exactly what the transport writes and reads.

Each request the host sends opens an ``mcp`` span (named by its method, under the span open in
the task that sends it: a tool call's); its response arrives on the SDK's reader task, which
has no span of its own, so the tap pairs it by id: the response hop names the request's span,
and the span ends with it. A request that gets no response ends its span as an error: cancelled
(``notifications/cancelled``), not written, or still awaited when the connection ends. Other
messages read (notifications, the server's own requests)
belong to no span.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse
from pydantic import ValidationError

from schemawire._json import quoted
from schemawire.errors import one_line
from schemawire.gates.redact import default_redactor
from schemawire.mcp._offload import off_loop
from schemawire.trace import Trace
from schemawire.trace.spans import CURRENT, Current

__all__ = ["WireTap", "message_json", "traced"]


PROTOCOL = "mcp"
_UNREADABLE_KEPT = 8  # lines that are not JSON-RPC kept for an error to quote (the last is quoted)
_SEEN = 4000  # characters of an unreadable line redacted: a secret begun in the 500 quoted ends
_PENDING = 1024  # requests awaiting their response, whose spans are remembered (oldest dropped)
# How the span of a request that gets no response ends (its end hop's error).
_NO_RESPONSE = {
    "code": "no_response",
    "message": "the connection ended before the server answered this request",
}
_UNSENT = {"code": "not_sent", "message": "the request could not be written to the server"}
_FORGOTTEN = {
    "code": "no_response",
    "message": f"more than {_PENDING} requests awaited a response: this one, the oldest, is no "
    "longer awaited",
}
_REPLACED = {
    "code": "no_response",
    "message": "a later request took this one's id before it was answered",
}


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
        self._pending: dict[Any, str] = {}  # request id -> its span, until its response

    async def sent(self, message: SessionMessage) -> None:
        span: str | Current | None = CURRENT
        inner = message.message
        if self.trace.keeps_anything and isinstance(inner, JSONRPCRequest):
            span = self._opened(inner)
        await self._record(self.local, self.remote, "send", message, span)
        if self._pending and isinstance(inner, JSONRPCNotification):
            self._cancelled(inner)

    def _cancelled(self, notification: JSONRPCNotification) -> None:
        """A request the host gave up on (``notifications/cancelled``): its span ends, as an
        error, since no response will end it."""
        if notification.method != "notifications/cancelled":
            return
        request_id = (notification.params or {}).get("requestId")
        span = self._pending.pop(request_id, None) if isinstance(request_id, str | int) else None
        if span is not None:
            cancelled = {"code": "cancelled", "message": "the host cancelled the request"}
            self.trace.close_span(span, "mcp", "error", cancelled, label=self.local)

    async def received(self, message: SessionMessage | Exception) -> None:
        if isinstance(message, Exception):
            self.unreadable.append(_unreadable(message))
        span = self._answered(message)
        await self._record(self.remote, self.local, "receive", message, span)
        if span is not None:
            failed = isinstance(message, SessionMessage) and isinstance(
                message.message, JSONRPCError
            )
            self.trace.close_span(span, "mcp", "error" if failed else "ok", label=self.local)

    async def received_in(self, message: SessionMessage, span: str | Current | None) -> None:
        """A message read, recorded in ``span`` (`CURRENT`: the one open here): a request a
        server answers in a span of its own."""
        await self._record(self.remote, self.local, "receive", message, span)

    async def sent_in(self, message: SessionMessage, span: str | None) -> None:
        """A message about to be written, recorded in ``span``: the answer to a request
        `received_in` it."""
        await self._record(self.local, self.remote, "send", message, span)

    def _opened(self, request: JSONRPCRequest) -> str | None:
        """The span of a request about to be sent, opened in the sender's span."""
        span = self.trace.open_span("mcp", request.method, label=self.local)
        if span is not None:
            if len(self._pending) >= _PENDING:  # a request never answered: give up the oldest
                oldest = next(iter(self._pending))
                self._unanswered(oldest, _FORGOTTEN)
            self._unanswered(request.id, _REPLACED)  # an id the SDK mints again
            self._pending[request.id] = span
            _carry_trace_context(request, self.trace.traceparent(span))
        return span

    def unsent(self, message: SessionMessage) -> None:
        """A request whose write failed: its span ends, as an error, since no response will."""
        inner = message.message
        if self._pending and isinstance(inner, JSONRPCRequest):
            self._unanswered(inner.id, _UNSENT)

    def ended(self) -> None:
        """The connection is over: the span of every request still awaiting its response ends,
        as an error (a server that died mid-call, a request abandoned without a cancel)."""
        for request_id in list(self._pending):
            self._unanswered(request_id, _NO_RESPONSE)

    def _unanswered(self, request_id: Any, error: dict[str, str]) -> None:
        span = self._pending.pop(request_id, None)
        if span is not None:
            self.trace.close_span(span, "mcp", "error", error, label=self.local)

    def _answered(self, message: SessionMessage | Exception) -> str | None:
        """The span of the request ``message`` answers (None: it answers none we sent)."""
        if not self._pending or not isinstance(message, SessionMessage):
            return None
        inner = message.message
        if not isinstance(inner, JSONRPCResponse | JSONRPCError):
            return None
        return self._pending.pop(inner.id, None)

    async def _record(
        self,
        source: str,
        target: str,
        direction: str,
        message: Any,
        span: str | Current | None = None,
    ) -> None:
        """Record one message: off the event loop when it is large (redacting and writing a
        large hop takes long enough to stall every other client), and without building its JSON
        when the trace keeps nothing. Shielded: the message has crossed the wire, and a
        cancelled recording would lose it for the stream it came from. ``span``: the span it
        belongs to (`CURRENT`: the sender's)."""
        trace = self.trace
        if not trace.keeps_anything:
            trace.record(source, target, PROTOCOL, direction, None)  # numbered, not built
            return
        if isinstance(span, Current):  # read here: a worker thread may not see the sender's
            span = trace.current_span
        with anyio.CancelScope(shield=True):
            record = functools.partial(_record, span=span)
            weight = _heavy_part(message)
            await off_loop(record, trace, source, target, direction, message, weight=weight)


def _heavy_part(message: SessionMessage | Exception) -> Any:
    """What of ``message`` can be large: a request's or notification's params, a response's
    result; plain JSON inside the SDK's models, weighed as such (through the models, the walk
    asks every object what it holds, and took most of a small call's recording)."""
    if isinstance(message, SessionMessage):
        inner = message.message
        if isinstance(inner, JSONRPCResponse):
            return inner.result
        if isinstance(inner, JSONRPCRequest | JSONRPCNotification):
            return inner.params
    return message  # an error, or a line that is not JSON-RPC: rare, weighed whole


def _record(
    trace: Trace,
    source: str,
    target: str,
    direction: str,
    message: SessionMessage | Exception,
    *,
    span: str | None,
) -> None:
    trace.record(source, target, PROTOCOL, direction, message_json(message), span=span)


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
        try:
            await self._inner.send(item)
        except BaseException:
            self._tap.unsent(item)
            raise

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
        try:
            async with transport as (read, write):
                yield tap_streams(read, write, tap)
        finally:
            if tap is not None:  # no response comes after this: no span stays open
                tap.ended()

    return opened()


def _carry_trace_context(request: JSONRPCRequest, traceparent: str) -> None:
    """W3C trace context in the request's ``params._meta`` (the MCP semantic conventions), so
    the server's span of it is a child of ours."""
    params = dict(request.params or {})
    meta = params.get("_meta")
    params["_meta"] = {**(meta if isinstance(meta, dict) else {}), "traceparent": traceparent}
    request.params = params
