"""A trace as a tree of spans: run → turn → model and tool → mcp → hops (`span_tree`).

Each hop goes in the span it names. A JSON-RPC response that names none (protocol ``"mcp"``,
an ``id``, no ``method``: read on a task that had no span, as the SDK's reader is) goes in the
span of the latest earlier ``send`` hop of the same run with the same ``id`` and the reverse
``from``/``to`` (the pairing rule, docs/traces.md). Hops of no span, and spans whose parent is
not in the trace (or has not started yet), are at the root, in order; old traces, written
before spans, are all root. Hostile input makes a tree too, in one pass and without recursion.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from schemawire.types import Hop

__all__ = ["SpanNode", "SpanTree", "span_tree"]


@dataclass(slots=True, eq=False)
class SpanNode:
    """One span and what it holds.

    Attributes:
        id: the span's id.
        kind: ``run``, ``turn``, ``model``, ``tool``, ``mcp``, ``flow``, ``agent`` (or
            ``unknown``: hops name it but its start hop is not in the trace).
        name: what its start hop names (the model, the tool, the JSON-RPC method...).
        parent: the parent span's id (None: a root, also when the parent named is not in the
            trace or starts after it).
        attributes: the start hop's other members.
        start: its start hop's time (seconds since the epoch); an unknown span's first hop's.
        end: its end hop's time; None while it is open (its end hop is missing: a crash).
        status: ``ok``, ``error``, ``refused``, or ``open``.
        error: what its end hop says went wrong, if anything.
        hops: its own hops, in order (its start and end hops left out).
        children: its spans, in the order they started.
        entries: its hops and children together, in order (a child where it started).
    """

    id: str
    kind: str
    name: str
    parent: str | None
    attributes: dict[str, Any]
    start: float
    end: float | None = None
    status: str = "open"
    error: Any = None
    # Not in the repr: a repr of the whole subtree would recurse as deep as the spans nest.
    hops: list[Hop] = field(default_factory=list, repr=False)
    children: list[SpanNode] = field(default_factory=list, repr=False)
    entries: list[Hop | SpanNode] = field(default_factory=list, repr=False)

    @property
    def duration(self) -> float | None:
        """Seconds from its start to its end (None while it is open)."""
        return None if self.end is None else self.end - self.start

    def to_json(self) -> dict[str, Any]:
        """The span and everything in it as JSON: its hops as `Hop.to_json`, in order."""
        (shown,) = _entries_json([self])
        return shown

    def _json(self, entries: list[dict[str, Any]]) -> dict[str, Any]:
        """The span as JSON, with its entries' JSON given."""
        return {
            "span": self.id,
            "kind": self.kind,
            "name": self.name,
            "parent": self.parent,
            "attributes": self.attributes,
            "start": self.start,
            "end": self.end,
            "duration": self.duration,
            "status": self.status,
            "error": self.error,
            "entries": entries,
        }


def _entries_json(entries: list[Hop | SpanNode]) -> list[dict[str, Any]]:
    """``entries`` as JSON, without recursion: a hostile or very long trace may nest spans
    deeper than Python's recursion limit. Each span is shown after all of its children."""
    shown: dict[int, dict[str, Any]] = {}  # id() of a span shown -> its JSON, until its parent's
    stack: list[tuple[SpanNode, bool]] = [(e, False) for e in entries if isinstance(e, SpanNode)]
    while stack:
        node, children_shown = stack.pop()
        if not children_shown:
            stack.append((node, True))
            stack.extend((child, False) for child in node.children)
            continue
        shown[id(node)] = node._json([_entry_json(entry, shown) for entry in node.entries])
    return [_entry_json(entry, shown) for entry in entries]


def _entry_json(entry: Hop | SpanNode, shown: dict[int, dict[str, Any]]) -> dict[str, Any]:
    return shown.pop(id(entry)) if isinstance(entry, SpanNode) else entry.to_json()


@dataclass(slots=True)
class SpanTree:
    """A trace as a tree.

    Attributes:
        roots: the spans no span holds, in the order they started.
        hops: the hops of no span, in order.
        entries: both, in order.
        spans: every span by its id.
    """

    roots: list[SpanNode] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)
    entries: list[Hop | SpanNode] = field(default_factory=list)
    spans: dict[str, SpanNode] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The tree as JSON: ``{"entries": [hop or span, ...]}``."""
        return {"entries": _entries_json(self.entries)}


def span_tree(hops: Iterable[Hop]) -> SpanTree:
    """The tree of ``hops`` (a `Trace`'s, or `read_trace`'s), in one pass.

    Example:
        >>> from schemawire.trace import Trace
        >>> trace = Trace(run_id="demo", clock=lambda: 2.0)
        >>> with trace.span("run", "m"), trace.span("tool", "get_weather"):
        ...     _ = trace.record("host", "python:get_weather", "python", "send", {})
        >>> (run,) = span_tree(trace.hops).roots
        >>> [(s.kind, s.name, s.status, [h.protocol for h in s.hops]) for s in run.children]
        [('tool', 'get_weather', 'ok', ['python'])]
    """
    return _Builder().built(hops)


class _Builder:
    def __init__(self) -> None:
        self.tree = SpanTree()
        self._sent: dict[tuple[str, str, str, str, Any], str | None] = {}  # request -> span

    def built(self, hops: Iterable[Hop]) -> SpanTree:
        for hop in hops:
            if hop.protocol == "span" and hop.span is not None:
                self._span_hop(hop)
            else:
                self._hop(hop)
        return self.tree

    def _span_hop(self, hop: Hop) -> None:
        """A span's start or end. The first hop that names a span makes it: a start that comes
        after it (a second start, or one after the span's hops or its end) is one of the span's
        hops, as is an end after the first, so a span is one node and nothing is dropped."""
        payload = hop.payload if isinstance(hop.payload, dict) else {}
        assert hop.span is not None
        node = self.tree.spans.get(hop.span)
        if node is None and hop.direction == "start":
            self._started(hop.span, payload, hop.time)
            return
        if node is None:
            node = self._unknown(hop.span, hop.time)
        if hop.direction == "end" and node.end is None:
            node.end = hop.time
            node.status = str(payload.get("status", "ok"))
            node.error = payload.get("error")
            return
        node.hops.append(hop)
        node.entries.append(hop)

    def _started(self, span_id: str, payload: dict[str, Any], time: float) -> None:
        """A new span, in its parent when the parent has started (so parents come first, and
        no chain of parents can loop back), else at the root."""
        parent = payload.get("parent")
        attributes = {k: v for k, v in payload.items() if k not in ("kind", "name", "parent")}
        node = SpanNode(
            span_id,
            str(payload.get("kind", "unknown")),
            str(payload.get("name", "")),
            parent if isinstance(parent, str) else None,
            attributes,
            time,
        )
        holder = self.tree.spans.get(node.parent) if node.parent is not None else None
        self.tree.spans[span_id] = node  # after its holder is found: never its own parent
        if holder is None:
            node.parent = None  # a root: walking up from a span never loops
            self.tree.roots.append(node)
            self.tree.entries.append(node)
        else:
            holder.children.append(node)
            holder.entries.append(node)

    def _unknown(self, span_id: str, time: float) -> SpanNode:
        """A span hops name whose start hop is not in the trace: a root of kind ``unknown``."""
        self._started(span_id, {"kind": "unknown", "name": ""}, time)
        return self.tree.spans[span_id]

    def _hop(self, hop: Hop) -> None:
        span_id = hop.span if hop.span is not None else self._paired(hop)
        self._note_request(hop, span_id)
        if span_id is None:
            self.tree.hops.append(hop)
            self.tree.entries.append(hop)
            return
        node = self.tree.spans.get(span_id) or self._unknown(span_id, hop.time)
        node.hops.append(hop)
        node.entries.append(hop)

    def _note_request(self, hop: Hop, span_id: str | None) -> None:
        """Remember a JSON-RPC request sent, for the response that names no span."""
        if hop.direction != "send" or hop.protocol != "mcp" or not isinstance(hop.payload, dict):
            return
        if "id" in hop.payload and "method" in hop.payload:
            self._sent[_request_key(hop, hop.source, hop.target)] = span_id

    def _paired(self, hop: Hop) -> str | None:
        """The span of the request a response that names no span answers (the pairing rule)."""
        payload = hop.payload
        if hop.protocol != "mcp" or not isinstance(payload, dict):
            return None
        if "id" not in payload or "method" in payload:
            return None
        return self._sent.get(_request_key(hop, hop.target, hop.source))


def _request_key(hop: Hop, source: str, target: str) -> tuple[str, str, str, str, Any]:
    """A request's key by run, who sent it, to whom, and its id (1 and "1" are two ids)."""
    request_id = hop.payload["id"]
    return (hop.run_id, source, target, type(request_id).__name__, _hashable(request_id))


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | None) else repr(value)
