"""The gates: every value that crosses a hop is checked against its full canonical schema.

- `ArgumentGate`: a tool call's arguments, before the tool runs.
- `ResultGate`: a tool's result, before the model reads it (validated, redacted, cut to size).
- `HandoffGate`: what one agent hands the next, before it starts; routes are JSON Schemas.
- `ToolIndex`: a large catalogue shortlisted for a query before the model sees it (field-weighted
  BM25); its `Shortlist` of `ShortlistedTool` is JSON with a shipped schema. An `Embedder`
  (``texts -> vectors``; `semantic_embedder()` with ``schemawire[semantic]``) adds a dense
  ranking fused with BM25.
- `McpResult`: a ``CallToolResult`` as an MCP server sent it, for the result gate; an error
  result marked with `REJECTION_META` (`rejection_meta`) carries a rejection, passed on whole.

Both return a `Verdict` and never raise on their input.
"""

from __future__ import annotations

from schemawire.gates._rejection import REJECTION_META, rejection_meta
from schemawire.gates._semantic import Embedder, semantic_embedder
from schemawire.gates._values import ValueLimits
from schemawire.gates.arguments import ArgumentGate, ArgumentOptions
from schemawire.gates.handoff import HandoffDecision, HandoffGate, Route
from schemawire.gates.redact import Redactor, default_redactor
from schemawire.gates.results import McpResult, ResultGate, ResultOptions
from schemawire.gates.shortlist import (
    Shortlist,
    ShortlistedTool,
    ToolIndex,
    catalogue_fingerprint,
    shortlist_schema,
)
from schemawire.gates.verdict import CODES, Change, Verdict

__all__ = [
    "CODES",
    "REJECTION_META",
    "ArgumentGate",
    "ArgumentOptions",
    "Change",
    "Embedder",
    "HandoffDecision",
    "HandoffGate",
    "McpResult",
    "Redactor",
    "ResultGate",
    "ResultOptions",
    "Route",
    "Shortlist",
    "ShortlistedTool",
    "ToolIndex",
    "ValueLimits",
    "Verdict",
    "catalogue_fingerprint",
    "default_redactor",
    "rejection_meta",
    "semantic_embedder",
    "shortlist_schema",
]
