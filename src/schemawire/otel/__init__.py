"""OpenTelemetry export of schemawire traces (extra ``otel``): docs/otel.md.

`OtlpExport` turns hops into spans (run, turn, model, tool and MCP spans with the GenAI and MCP
semantic conventions of `SCHEMA_URL`, gate verdicts as ``schemawire.*`` attributes and events)
and sends them over OTLP/HTTP; `export_live` attaches one to a `Trace`, `export_file` sends a
trace file's spans and says (`Exported`) how many the collector rejected.
"""

from __future__ import annotations

from schemawire.otel._export import (
    Exported,
    OtlpExport,
    capture_content,
    export_file,
    export_live,
    traces_endpoint,
)
from schemawire.otel._spans import SCHEMA_URL, SpanBuilder, trace_id_of

__all__ = [
    "SCHEMA_URL",
    "Exported",
    "OtlpExport",
    "SpanBuilder",
    "capture_content",
    "export_file",
    "export_live",
    "trace_id_of",
    "traces_endpoint",
]
