"""Our spans as OpenTelemetry spans: a span's start and end hops, and the hops between them
(gate verdicts, model requests, MCP messages), become one finished `ReadableSpan`.

Span ids are ours; the trace id is derived from the run id (`trace_id_of`), so a live export
and an offline one of the same trace produce the same spans. Attribute names are those of the
GenAI and MCP semantic conventions in the pinned ``opentelemetry-semantic-conventions`` package
(`SCHEMA_URL`), or ``schemawire.*``. Content (messages, arguments, results) is added only when
``content`` is on, and is always the hop as the trace kept it: already redacted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from schemawire._version import __version__
from schemawire.trace.spans import parse_traceparent, trace_id_of
from schemawire.types import Hop

__all__ = ["SCHEMA_URL", "SpanBuilder", "trace_id_of"]

SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.44.0"
"""The semantic conventions' version the attributes follow: the newest schema of the pinned
``opentelemetry-semantic-conventions`` 0.66b2 package."""

_NS: Final = 1_000_000_000


@dataclass
class _Open:
    """A span whose start hop was read and whose end hop was not yet."""

    kind: str
    name: str
    trace_id: int
    span_id: int
    parent: SpanContext | None
    start: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)


class SpanBuilder:
    """Turns the hops of a trace, fed in order (`feed`), into finished OpenTelemetry spans."""

    def __init__(self, resource: Resource, *, content: bool = False) -> None:
        self.resource = resource
        self.content = content
        self.scope = InstrumentationScope("schemawire", __version__, SCHEMA_URL)
        self._open: dict[str, _Open] = {}
        self._trace_of: dict[str, int] = {}  # span id -> trace id, while it may have children

    def feed(self, hop: Hop) -> ReadableSpan | None:
        """Read one hop; the span it ends, if it is a span's end hop."""
        if hop.protocol == "span" and isinstance(hop.payload, dict) and hop.span is not None:
            if hop.direction == "start":
                self._start(hop)
                return None
            if hop.direction == "end":
                return self._end(hop)
        span = self._open.get(hop.span or "")
        if span is not None:
            _note(span, hop, self.content)
        return None

    def unfinished(self, end: float) -> list[ReadableSpan]:
        """Every span still open (its process died inside it), ended at ``end`` and marked
        ``schemawire.span.open``."""
        spans = []
        for key in list(self._open):
            span = self._open.pop(key)
            span.attributes["schemawire.span.open"] = True
            spans.append(self._finished(span, int(end * _NS), Status(StatusCode.UNSET)))
        return spans

    def _start(self, hop: Hop) -> None:
        payload: dict[str, Any] = hop.payload
        span_id = int(hop.span or "0", 16)
        parent_key = payload.get("parent")
        trace_id = self._trace_of.get(parent_key or "") or trace_id_of(hop.run_id)
        parent = None
        if parent_key:
            parent = SpanContext(trace_id, int(parent_key, 16), False, TraceFlags(1))
        remote = _remote_parent(payload.get("traceparent"))
        if remote is not None and parent is None:
            parent, trace_id = remote, remote.trace_id
        kind = str(payload.get("kind", ""))
        span = _Open(kind, str(payload.get("name", kind)), trace_id, span_id, parent, _ns(hop))
        span.attributes.update(_start_attributes(kind, span.name, hop))
        self._open[hop.span or ""] = span
        self._trace_of[hop.span or ""] = trace_id

    def _end(self, hop: Hop) -> ReadableSpan | None:
        span = self._open.pop(hop.span or "", None)
        self._trace_of.pop(hop.span or "", None)
        if span is None:  # its start is in a part of the file not read
            return None
        status = str(hop.payload.get("status", "ok"))
        error = hop.payload.get("error")
        span.attributes["schemawire.span.status"] = status
        if status == "ok":
            return self._finished(span, _ns(hop), Status(StatusCode.UNSET))
        code = _error_code(error) or span.attributes.get("schemawire.rejection.code") or status
        span.attributes["error.type"] = str(code)
        message = error.get("message") if isinstance(error, dict) else None
        return self._finished(span, _ns(hop), Status(StatusCode.ERROR, message or str(code)))

    def _finished(self, span: _Open, end: int, status: Status) -> ReadableSpan:
        context = SpanContext(span.trace_id, span.span_id, False, TraceFlags(1))
        return ReadableSpan(
            name=_span_name(span),
            context=context,
            parent=span.parent,
            resource=self.resource,
            attributes=span.attributes,
            events=span.events,
            kind=_span_kind(span),
            status=status,
            start_time=span.start,
            end_time=max(end, span.start),
            instrumentation_scope=self.scope,
        )


def _ns(hop: Hop) -> int:
    return int(hop.time * _NS)


def _remote_parent(traceparent: Any) -> SpanContext | None:
    """The W3C ``traceparent`` a served span's start hop carries, as a remote parent."""
    ids = parse_traceparent(traceparent)
    return SpanContext(ids[0], ids[1], True, TraceFlags(1)) if ids else None


def _provider(protocol: str) -> str:
    """``gen_ai.provider.name`` of a model hop's protocol (``openai.chat`` → ``openai``)."""
    family = protocol.split(".", maxsplit=1)[0]
    return {"gemini": "gcp.gemini", "script": "schemawire.script"}.get(family, family)


def _start_attributes(kind: str, name: str, hop: Hop) -> dict[str, Any]:
    payload: dict[str, Any] = hop.payload
    attributes: dict[str, Any] = {"schemawire.span.kind": kind, "schemawire.run.id": hop.run_id}
    if kind in ("run", "agent"):
        attributes["gen_ai.operation.name"] = "invoke_agent"
        attributes["gen_ai.agent.name"] = name
        if isinstance(payload.get("model"), str):
            attributes["gen_ai.request.model"] = payload["model"]
        if isinstance(payload.get("api"), str):
            attributes["gen_ai.provider.name"] = _provider(payload["api"])
    elif kind == "flow":
        attributes["gen_ai.operation.name"] = "invoke_workflow"
        attributes["gen_ai.workflow.name"] = name
    elif kind == "turn" and isinstance(payload.get("number"), int):
        attributes["schemawire.turn.number"] = payload["number"]
    elif kind == "model":
        attributes["gen_ai.operation.name"] = "chat"
        attributes["gen_ai.request.model"] = name
    elif kind == "tool":
        attributes["gen_ai.operation.name"] = "execute_tool"
        attributes["gen_ai.tool.name"] = name
        attributes["gen_ai.tool.type"] = "function"
        if isinstance(payload.get("call"), str):
            attributes["gen_ai.tool.call.id"] = payload["call"]
    elif kind == "mcp":
        attributes["mcp.method.name"] = name
        attributes["schemawire.mcp.served"] = bool(payload.get("served"))
        if name == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
    return attributes


def _note(span: _Open, hop: Hop, content: bool) -> None:
    """What a hop inside ``span`` adds to it: a gate's verdict (on a ``gate`` hop or on the
    message it judged), and what the message itself says."""
    if isinstance(hop.verdict, dict) and "gate" in hop.verdict:
        _gate(span, hop)
    if not isinstance(hop.payload, dict):
        return
    if hop.protocol == "mcp":
        _mcp(span, hop.payload, content)
    elif span.kind == "model":
        _model(span, hop, content)
    elif span.kind == "tool" and hop.protocol == "python" and content:
        if hop.direction == "send" and "arguments" in hop.payload:
            span.attributes["gen_ai.tool.call.arguments"] = _json(hop.payload["arguments"])
        elif hop.direction == "receive" and "content" in hop.payload:
            span.attributes["gen_ai.tool.call.result"] = _json(hop.payload["content"])


def _gate(span: _Open, hop: Hop) -> None:
    """A gate's verdict: ``schemawire.gate.<gate>.outcome`` on the span and an event with the
    rejection's code and pointers and the changes' pointers (repairs, redactions)."""
    verdict: dict[str, Any] = hop.verdict or {}
    gate = str(verdict.get("gate", "gate"))
    outcome = str(verdict.get("outcome", "accepted" if verdict.get("accepted") else "rejected"))
    span.attributes[f"schemawire.gate.{gate}.outcome"] = outcome
    attributes: dict[str, Any] = {"schemawire.gate": gate, "schemawire.gate.outcome": outcome}
    rejection = verdict.get("rejection")
    if isinstance(rejection, dict):
        code = str(rejection.get("code", "rejected"))
        span.attributes["schemawire.rejection.code"] = code
        attributes["schemawire.rejection.code"] = code
        violations = [v for v in rejection.get("violations") or [] if isinstance(v, dict)]
        attributes["schemawire.violation.pointers"] = [str(v.get("pointer")) for v in violations]
        attributes["schemawire.violation.keywords"] = [str(v.get("keyword")) for v in violations]
    changes = [c for c in verdict.get("changes") or [] if isinstance(c, dict)]
    if changes:
        attributes["schemawire.change.pointers"] = [str(c.get("pointer")) for c in changes]
        attributes["schemawire.change.kinds"] = [
            str(c.get("kind") or c.get("code") or c.get("op") or "") for c in changes
        ]
    span.events.append(Event(f"schemawire.gate.{gate}", attributes, _ns(hop)))


def _mcp(span: _Open, message: dict[str, Any], content: bool) -> None:
    """An MCP request or response in an mcp span (a tool call's name, arguments, result)."""
    if "method" in message and "id" in message:
        span.attributes["jsonrpc.request.id"] = str(message["id"])
    params = message.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        version = (
            meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
        )
        if isinstance(version, str):
            span.attributes["mcp.protocol.version"] = version
        if message.get("method") == "tools/call" and isinstance(params.get("name"), str):
            span.attributes["gen_ai.tool.name"] = params["name"]
            if content and "arguments" in params:
                span.attributes["gen_ai.tool.call.arguments"] = _json(params["arguments"])
    error = message.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        span.attributes["rpc.response.status_code"] = str(error["code"])
    if content and "result" in message and span.attributes.get("mcp.method.name") == "tools/call":
        span.attributes["gen_ai.tool.call.result"] = _json(message["result"])


def _model(span: _Open, hop: Hop, content: bool) -> None:
    """A model request (its provider, its messages on opt-in) or response (id, model, usage,
    finish reasons, its output on opt-in)."""
    body: dict[str, Any] = hop.payload
    span.attributes["gen_ai.provider.name"] = _provider(hop.protocol)
    if hop.direction == "send":
        if content:
            messages = body.get("messages", body.get("input", body.get("contents")))
            span.attributes["gen_ai.input.messages"] = _json(messages)
        return
    if isinstance(body.get("id"), str):
        span.attributes["gen_ai.response.id"] = body["id"]
    if isinstance(body.get("model"), str):
        span.attributes["gen_ai.response.model"] = body["model"]
    usage = body.get("usage") or body.get("usageMetadata")
    if isinstance(usage, dict):
        for key, name in _USAGE.items():
            if isinstance(usage.get(key), int):
                span.attributes[name] = usage[key]
    reasons = [c.get("finish_reason") for c in body.get("choices") or [] if isinstance(c, dict)]
    reasons += [body[k] for k in ("stop_reason", "status") if isinstance(body.get(k), str)]
    reasons = [r for r in reasons if isinstance(r, str)]
    if reasons:
        span.attributes["gen_ai.response.finish_reasons"] = reasons
    if content:
        output = body.get(
            "choices", body.get("content", body.get("output", body.get("candidates")))
        )
        span.attributes["gen_ai.output.messages"] = _json(output)


_USAGE: Final = {
    "prompt_tokens": "gen_ai.usage.input_tokens",
    "completion_tokens": "gen_ai.usage.output_tokens",
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "promptTokenCount": "gen_ai.usage.input_tokens",
    "candidatesTokenCount": "gen_ai.usage.output_tokens",
}


def _error_code(error: Any) -> str | None:
    if not isinstance(error, dict):
        return None
    code = error.get("code", error.get("type"))
    return str(code) if code is not None else None


def _span_name(span: _Open) -> str:
    """The semantic conventions' span name: ``invoke_agent NAME``, ``chat MODEL``,
    ``execute_tool NAME``, ``tools/call NAME``."""
    attributes = span.attributes
    if span.kind in ("run", "agent"):
        return f"invoke_agent {span.name}"
    if span.kind == "flow":
        return f"invoke_workflow {span.name}"
    if span.kind == "model":
        return f"chat {span.name}"
    if span.kind == "tool":
        return f"execute_tool {span.name}"
    if span.kind == "mcp" and isinstance(attributes.get("gen_ai.tool.name"), str):
        return f"{span.name} {attributes['gen_ai.tool.name']}"
    return span.name


def _span_kind(span: _Open) -> SpanKind:
    if span.kind == "mcp":
        return SpanKind.SERVER if span.attributes.get("schemawire.mcp.served") else SpanKind.CLIENT
    return SpanKind.CLIENT if span.kind == "model" else SpanKind.INTERNAL


def _json(value: Any) -> str:
    """Content as the attribute's JSON string (structure OTLP attributes cannot hold)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
