"""A real OTLP/HTTP traces receiver for the tests, on ``opentelemetry-proto``: it takes
``ExportTraceServiceRequest`` as protobuf or as the JSON mapping, answers an
``ExportTraceServiceResponse`` in the same encoding, and rejects (counting them in
``partial_success``) spans a backend would refuse: ids of the wrong length or all zero, a
missing name, an end before the start, and any span whose name is in ``refuse``."""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


@dataclass
class Received:
    """One span as received, with the resource and scope it came under."""

    span: Span
    service: str
    scope: str
    schema_url: str

    @property
    def attributes(self) -> dict[str, Any]:
        return {a.key: _value(a.value) for a in self.span.attributes}

    @property
    def span_id(self) -> str:
        return self.span.span_id.hex()

    @property
    def parent_id(self) -> str:
        return self.span.parent_span_id.hex()

    @property
    def trace_id(self) -> str:
        return self.span.trace_id.hex()


@dataclass
class Receiver:
    """What the receiver got: spans accepted, spans rejected, requests by content type; the
    names of the spans it is to reject besides the invalid ones (``refuse``)."""

    spans: list[Received] = field(default_factory=list)
    rejected: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""
    refuse: set[str] = field(default_factory=set)


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which) if which else None


def _ids_as_base64(value: Any) -> Any:
    """The OTLP JSON mapping writes trace and span ids in hex, where protobuf's JSON mapping
    expects base64: the ids converted, so `json_format` reads them."""
    if isinstance(value, list):
        return [_ids_as_base64(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {
        key: base64.b64encode(bytes.fromhex(v)).decode()
        if key in _IDS and isinstance(v, str)
        else _ids_as_base64(v)
        for key, v in value.items()
    }


_IDS = frozenset({"traceId", "spanId", "parentSpanId"})


def _valid(span: Span) -> bool:
    ids_ok = len(span.trace_id) == 16 and len(span.span_id) == 8
    ids_ok = ids_ok and any(span.trace_id) and any(span.span_id)
    parent_ok = len(span.parent_span_id) in (0, 8)
    return (
        ids_ok
        and parent_ok
        and bool(span.name)
        and span.end_time_unix_nano >= span.start_time_unix_nano
    )


def _handler(state: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            kind = self.headers.get("Content-Type", "").split(";")[0]
            if self.path != "/v1/traces" or kind not in (
                "application/x-protobuf",
                "application/json",
            ):
                self.send_response(415 if self.path == "/v1/traces" else 404)
                self.end_headers()
                return
            request = ExportTraceServiceRequest()
            try:
                if kind == "application/json":
                    json_format.ParseDict(_ids_as_base64(json.loads(body)), request)
                else:
                    request.ParseFromString(body)
            except Exception:
                self.send_response(400)
                self.end_headers()
                return
            rejected = self._take(request, kind)
            response = ExportTraceServiceResponse()
            if rejected:
                response.partial_success.rejected_spans = rejected
                response.partial_success.error_message = f"{rejected} spans rejected"
            out = (
                json_format.MessageToJson(response).encode()
                if kind == "application/json"
                else response.SerializeToString()
            )
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def _take(self, request: ExportTraceServiceRequest, kind: str) -> int:
            rejected = 0
            with state.lock:
                state.requests[kind] = state.requests.get(kind, 0) + 1
                for resource_spans in request.resource_spans:
                    resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            if not _valid(span) or span.name in state.refuse:
                                rejected += 1
                                continue
                            state.spans.append(
                                Received(
                                    span,
                                    str(resource.get("service.name")),
                                    scope_spans.scope.name,
                                    scope_spans.schema_url,
                                )
                            )
                state.rejected += rejected
            return rejected

    return Handler


class Running:
    """``with Running() as receiver``: a receiver on 127.0.0.1 (a free port), stopped on exit."""

    def __enter__(self) -> Receiver:
        self.state = Receiver()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self.state.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self.state

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
