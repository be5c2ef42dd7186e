"""Every hop traced as JSON: `Trace` records them (in memory and as JSON Lines), in spans
(`Trace.span`: run → turn → model and tool → mcp); `read_trace` reads a trace file back (each
model request as the whole body it was sent: `whole_body`), `span_tree` builds its tree;
`record_verdicts` adds the gates' verdicts as hops and `record_shortlist` a shortlist decision;
one id per run (`new_run_id`), and by default one file per run (`trace_path`); its W3C trace
id (`trace_id_of`), and a remote parent's (`parse_traceparent`); the format's
JSON Schema is `hop_schema()`. docs/traces.md has the format."""

from __future__ import annotations

from schemawire.trace.bodies import whole_body
from schemawire.trace.recorder import (
    TRACES,
    Deferring,
    Trace,
    new_run_id,
    read_trace,
    record_shortlist,
    record_verdicts,
    trace_path,
)
from schemawire.trace.schema import hop_schema
from schemawire.trace.spans import CURRENT, KINDS, STATUSES, Span, parse_traceparent, trace_id_of
from schemawire.trace.tree import SpanNode, SpanTree, span_tree

__all__ = [
    "CURRENT",
    "KINDS",
    "STATUSES",
    "TRACES",
    "Deferring",
    "Span",
    "SpanNode",
    "SpanTree",
    "Trace",
    "hop_schema",
    "new_run_id",
    "parse_traceparent",
    "read_trace",
    "record_shortlist",
    "record_verdicts",
    "span_tree",
    "trace_id_of",
    "trace_path",
    "whole_body",
]
