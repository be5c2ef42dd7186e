"""Sending spans over OTLP/HTTP (protobuf), live as hops are recorded or from a trace file, and
counting the spans the collector says it rejected (OTLP partial success)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import requests
from google.protobuf.message import DecodeError
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from schemawire.otel._spans import SpanBuilder
from schemawire.trace import Trace, read_trace
from schemawire.trace.bodies import Wholes
from schemawire.types import Hop

__all__ = [
    "Exported",
    "OtlpExport",
    "capture_content",
    "export_file",
    "export_live",
    "traces_endpoint",
]

_CONTENT: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_OPT_IN: Final = frozenset({"span_only", "span_and_event", "true", "1"})


def capture_content() -> bool:
    """Whether ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in to content on
    spans (``SPAN_ONLY``, ``SPAN_AND_EVENT``, or ``true``); off by default."""
    return os.environ.get(_CONTENT, "").strip().lower() in _OPT_IN


def traces_endpoint(url: str | None = None) -> str | None:
    """The OTLP/HTTP traces URL, as the OTel SDK resolves it: ``url`` (a base URL gets
    ``/v1/traces``), else ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as is, else
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``; None when none is set."""
    if url:
        return url if url.rstrip("/").endswith("/v1/traces") else url.rstrip("/") + "/v1/traces"
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if traces:
        return traces
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return base.rstrip("/") + "/v1/traces" if base else None


def _resource() -> Resource:
    """The resource: ``OTEL_SERVICE_NAME`` (default ``schemawire``) and
    ``OTEL_RESOURCE_ATTRIBUTES``."""
    return Resource.create({SERVICE_NAME: os.environ.get("OTEL_SERVICE_NAME") or "schemawire"})


@dataclass(frozen=True)
class Exported:
    """What one export sent and what the collector refused of it.

    Attributes:
        spans: spans sent.
        rejected: spans the collector answered it rejected (``partial_success.rejected_spans``
            of its ``ExportTraceServiceResponse``); 0 when it accepted them all.
        message: the collector's ``partial_success.error_message``, or ``""``.
    """

    spans: int
    rejected: int = 0
    message: str = ""


class _PartialSuccess:
    """Reads each answer of the collector for the spans it rejected: the SDK's exporter looks
    only at the HTTP status, and a collector that refuses some spans of a batch still answers
    200, with the count in ``partial_success``."""

    def __init__(self) -> None:
        self.rejected = 0
        self.message = ""
        self._lock = threading.Lock()

    def session(self) -> requests.Session:
        """A session for the exporter whose every response goes through `read`."""
        session = requests.Session()
        session.hooks["response"].append(self.read)
        return session

    def read(self, response: requests.Response, *args: object, **kwargs: object) -> None:
        """A response hook: count what a 200 protobuf answer says was rejected."""
        kind = response.headers.get("Content-Type", "").split(";")[0].strip()
        if response.status_code != 200 or kind != "application/x-protobuf":
            return
        answer = ExportTraceServiceResponse()
        try:
            answer.ParseFromString(response.content)
        except DecodeError:
            return
        with self._lock:
            self.rejected += answer.partial_success.rejected_spans
            self.message = answer.partial_success.error_message or self.message


class OtlpExport:
    """Hops in, OpenTelemetry spans out through a span processor (by default the SDK's
    `BatchSpanProcessor` in front of the OTLP/HTTP protobuf exporter). Safe to feed from
    several threads. Call `close` (or use ``with``) to flush what is left.

    Example:
        ``Trace(on_hop=OtlpExport("http://127.0.0.1:4318").hop)``
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        content: bool | None = None,
        processor: SpanProcessor | None = None,
        timeout: float = 10.0,
    ) -> None:
        """
        Args:
            endpoint: the collector (see `traces_endpoint`); ignored when ``processor`` is given.
            content: put messages, arguments and results on spans (default: `capture_content`).
            processor: where finished spans go instead of OTLP/HTTP.
            timeout: seconds each export may take.

        Raises:
            ValueError: no endpoint given and none set in the environment.
        """
        self._partial = _PartialSuccess()
        if processor is None:
            url = traces_endpoint(endpoint)
            if url is None:
                raise ValueError(
                    "no OTLP endpoint: pass --otlp URL or set OTEL_EXPORTER_OTLP_ENDPOINT"
                )
            self.endpoint: str | None = url
            exporter = OTLPSpanExporter(
                endpoint=url, timeout=timeout, session=self._partial.session()
            )
            processor = BatchSpanProcessor(exporter)
        else:
            self.endpoint = endpoint
        self.processor = processor
        self.builder = SpanBuilder(
            _resource(), content=capture_content() if content is None else content
        )
        self.spans = 0
        self._wholes = Wholes()
        self._lock = threading.Lock()
        self._last = 0.0

    @property
    def rejected(self) -> int:
        """Spans the collector answered it rejected so far (OTLP partial success)."""
        return self._partial.rejected

    def exported(self) -> Exported:
        """What was sent so far, and what the collector rejected of it."""
        return Exported(self.spans, self._partial.rejected, self._partial.message)

    def hop(self, hop: Hop) -> None:
        """Read one hop (an ``on_hop`` listener); the span it ends goes to the processor."""
        with self._lock:
            self._last = hop.time
            # Only content needs a model request's whole body; without it a delta says enough.
            span = self.builder.feed(self._wholes.whole(hop) if self.builder.content else hop)
        if span is not None:
            self.spans += 1
            self.processor.on_end(span)

    def hops(self, hops: Iterable[Hop]) -> None:
        """Read hops in order."""
        for hop in hops:
            self.hop(hop)

    def close(self, *, open_spans: bool = True) -> bool:
        """Send spans still open (ended at the last hop) when ``open_spans``, flush and shut
        the processor down; whether the flush finished."""
        if open_spans:
            with self._lock:
                rest = self.builder.unfinished(self._last)
            for span in rest:
                self.spans += 1
                self.processor.on_end(span)
        flushed = self.processor.force_flush()
        self.processor.shutdown()
        return flushed

    def __enter__(self) -> OtlpExport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def export_file(
    path: str | Path, endpoint: str | None = None, *, content: bool | None = None
) -> Exported:
    """Export the spans of one trace file; how many were sent and how many the collector
    rejected.

    Raises:
        JSONError: a line of the file is not a hop.
        OSError: the file cannot be read.
        ValueError: no endpoint.
    """
    export = OtlpExport(endpoint, content=content)
    try:
        export.hops(read_trace(path, whole=False))
    finally:
        flushed = export.close()
    if not flushed:
        raise OSError(f"the spans were not all sent to {export.endpoint} in time")
    return export.exported()


def export_live(
    trace: Trace, endpoint: str | None = None, *, content: bool | None = None
) -> OtlpExport:
    """Export ``trace``'s spans as its hops are recorded (beside its own ``on_hop``); close
    the returned export at the end of the run to flush."""
    export = OtlpExport(endpoint, content=content)
    trace.listen(export.hop)
    return export
