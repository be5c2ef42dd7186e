"""Spans: the structure of a trace. A span is two hops of protocol ``"span"``, its start
(``{"kind", "name", "parent", ...attributes}``) and its end (``{"kind", "status", "error"?}``),
and every hop recorded between them, in its task, names it in ``span``.

Kinds, as the tree goes: ``run`` → ``turn`` → ``model`` and ``tool`` → ``mcp``; workflows add
``flow`` and ``agent`` above the runs of their agents. A span whose end hop is missing (the
process died inside it) is open. docs/traces.md has the format; `schemawire.trace.span_tree`
builds the tree back.
"""

from __future__ import annotations

import hashlib
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, Final, Literal, Protocol

from schemawire.errors import one_line

__all__ = ["CURRENT", "KINDS", "STATUSES", "Span", "parse_traceparent", "trace_id_of"]

KINDS: Final = ("run", "turn", "model", "tool", "mcp", "flow", "agent")
"""The kinds of span schemawire records (a reader must accept others)."""

STATUSES: Final = ("ok", "error", "refused")
"""How a span ends."""


class Current:
    """The type of `CURRENT`."""

    def __repr__(self) -> str:
        return "CURRENT"


CURRENT: Final = Current()
"""Stands for "the span open where the hop is recorded" (a hop's default)."""


def trace_id_of(run_id: str) -> int:
    """The W3C (and OpenTelemetry) trace id of run ``run_id``: 128 bits of its SHA-256, so the
    same run has the same trace id wherever it is exported from."""
    return int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:16], "big") or 1


def parse_traceparent(value: Any) -> tuple[int, int] | None:
    """The trace id and parent span id of a W3C ``traceparent`` (``00-<32 hex>-<16 hex>-<2
    hex>``); None when ``value`` is not one, or names the invalid all-zero ids."""
    if not isinstance(value, str) or len(value) != 55:
        return None
    version, trace, parent, flags = [*value.split("-"), "", "", ""][:4]
    if len(version) != 2 or len(trace) != 32 or len(parent) != 16 or len(flags) != 2:
        return None
    try:
        ids = int(trace, 16), int(parent, 16)
    except ValueError:
        return None
    return ids if all(ids) else None


def span_start(
    kind: str, name: str, parent: str | None, attributes: dict[str, Any]
) -> dict[str, Any]:
    """A span's start hop's payload."""
    return {"kind": kind, "name": name, "parent": parent, **attributes}


def span_end(kind: str, status: str, error: dict[str, Any] | None) -> dict[str, Any]:
    """A span's end hop's payload."""
    payload: dict[str, Any] = {"kind": kind, "status": status}
    if error is not None:
        payload["error"] = error
    return payload


def error_json(error: BaseException) -> dict[str, Any]:
    """What a span's end hop says about the exception that ended it: a schemawire error's own
    JSON, else its type and its message in one line."""
    to_json = getattr(error, "to_json", None)
    if callable(to_json):
        try:
            shown = to_json()
            if isinstance(shown, dict):
                return shown
        except Exception:
            pass
    return {"type": type(error).__name__, "message": one_line(error)}


class SpanRecorder(Protocol):
    """What a span records its hops with (a `schemawire.trace.Trace`)."""

    def open_span(
        self, kind: str, name: str, *, label: str, parent: str | Current | None, **attributes: Any
    ) -> str | None:
        """Record a span's start hop (in ``parent``, `CURRENT` for the span open here); its id."""

    def close_span(
        self,
        span_id: str | None,
        kind: str,
        status: str,
        error: dict[str, Any] | None,
        *,
        label: str,
    ) -> None:
        """Record a span's end hop."""


class Span:
    """One span of a trace (`schemawire.trace.Trace.span`): entered with ``with`` or
    ``async with``; the span is current inside the block, in this task only (tasks started
    inside copy it: parallel tool calls each open their own under it).

    Attributes:
        id: the span's id, once entered (None when the trace keeps nothing).
        status: how the span ends: ``"ok"`` unless the block raises (``"error"``); set it to
            ``"refused"`` (or ``"error"``) to say a call was refused (or failed) without raising.
        error: the JSON the end hop gives as the error (default: the exception's).
    """

    __slots__ = (
        "_current",
        "_token",
        "attributes",
        "error",
        "id",
        "kind",
        "label",
        "name",
        "parent",
        "status",
        "trace",
    )

    def __init__(
        self,
        trace: SpanRecorder,
        current: ContextVar[str | None],
        kind: str,
        name: str,
        *,
        label: str,
        attributes: dict[str, Any],
        parent: str | Current | None = CURRENT,
    ) -> None:
        self.trace = trace
        self._current = current
        self.kind = kind
        self.name = name
        self.label = label
        self.parent = parent
        self.attributes = attributes
        self.id: str | None = None
        self.status: Literal["ok", "error", "refused"] = "ok"
        self.error: dict[str, Any] | None = None
        self._token: Token[str | None] | None = None

    def __enter__(self) -> Span:
        trace = self.trace
        self.id = trace.open_span(
            self.kind, self.name, label=self.label, parent=self.parent, **self.attributes
        )
        if self.id is not None:
            self._token = self._current.set(self.id)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.id is None:
            return
        self._restore()
        status, error = self.status, self.error
        if exc is not None and status == "ok":
            status = "error"
        if exc is not None and error is None:
            error = error_json(exc)
        self.trace.close_span(self.id, self.kind, status, error, label=self.label)

    async def __aenter__(self) -> Span:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def _restore(self) -> None:
        """The span that was current before this one, current again."""
        token, self._token = self._token, None
        if token is None:
            return
        try:
            self._current.reset(token)
        except ValueError:  # exited in another context (a generator closed by a finaliser)
            if self._current.get() != self.id:  # that context has a span of its own: keep it
                return
            old = token.old_value
            self._current.set(None if old is Token.MISSING else old)


class _QuietSpan(Span):
    """The span of a trace that keeps nothing: one for every such trace, entered and left at
    no cost (what a caller sets on it is never read)."""

    def __enter__(self) -> Span:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class _Nothing:
    def open_span(
        self, kind: str, name: str, *, label: str, parent: str | Current | None, **attributes: Any
    ) -> str | None:
        return None

    def close_span(
        self,
        span_id: str | None,
        kind: str,
        status: str,
        error: dict[str, Any] | None,
        *,
        label: str,
    ) -> None:
        return None


QUIET_SPAN: Final[Span] = _QuietSpan(
    _Nothing(), ContextVar("schemawire_quiet_span", default=None), "", "", label="", attributes={}
)
"""The span `Trace.span` gives when the trace keeps nothing."""
