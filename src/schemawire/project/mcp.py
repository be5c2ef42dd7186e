"""MCP: a ``tools/list`` entry, for protocol versions 2025-06-18, 2025-11-25 and 2026-07-28.

MCP carries JSON Schema as it is, so the input schema keeps every keyword; only references to
other files are inlined (an MCP client must not fetch them) and schemawire's own ``x-`` keywords
and ``$id`` stay out of the schemas. The tool's ``title`` comes from the schema's root ``title``;
annotations from ``x-read-only``, ``x-destructive``, ``x-idempotent`` and ``x-open-world``; the
output schema from ``<name>.output.json``. Before 2026-07-28 an output schema must be an object:
any other is wrapped as ``{"result": ...}``, the convention of the official SDKs.

Which canonical schemas a tool is goes in its ``_meta``, under `SCHEMA_META`:
``{"dev.schemawire/schema": {"$id": ..., "x-version": ..., "output": {"$id": ..., "x-version":
...}}}``, so that a client (ours, without the repository) names them when it refuses a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schemawire._json import quoted
from schemawire.errors import UsageError
from schemawire.project._draft import NO_DOCUMENTS, Draft
from schemawire.project._names import NameRule
from schemawire.project._transforms import METADATA, Policy
from schemawire.schema.dialect import DRAFT_07, DRAFT_2020_12
from schemawire.types import Projection, ToolSpec

__all__ = ["ANNOTATIONS", "NAME", "SCHEMA_META", "VERSIONS", "project_mcp"]

VERSIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
NAME = NameRule("[A-Za-z0-9_.-]", None, 128)
# x- keyword of the canonical schema -> MCP tool annotation
ANNOTATIONS = {
    "x-read-only": "readOnlyHint",
    "x-destructive": "destructiveHint",
    "x-idempotent": "idempotentHint",
    "x-open-world": "openWorldHint",
}
_OBJECT_OUTPUT_ONLY = ("2025-06-18", "2025-11-25")
SCHEMA_META = "dev.schemawire/schema"
"""The ``_meta`` key of a listed tool that names its canonical schemas (``$id``, ``x-version``)."""

_EVERY_KEYWORD = (DRAFT_2020_12.keywords | DRAFT_07.keywords) - METADATA
# $schema (the dialect) is allowed in tool schemas from 2025-11-25 (SEP-1613).
POLICY = Policy(keep=_EVERY_KEYWORD | {"$schema"})
POLICY_2025_06_18 = Policy(keep=_EVERY_KEYWORD)


def project_mcp(
    spec: ToolSpec,
    *,
    version: str = "2026-07-28",
    documents: Mapping[str, Any] | None = None,
    origins: bool = False,
) -> Projection:
    """``spec`` as an MCP ``Tool`` of protocol ``version``.

    Raises:
        UsageError: ``version`` is not one of `VERSIONS`.
    """
    if version not in VERSIONS:
        raise UsageError(f"MCP version must be one of {', '.join(VERSIONS)}, not {quoted(version)}")
    draft = Draft(f"mcp@{version}", spec, documents or NO_DOCUMENTS, track_origins=origins)
    policy = POLICY_2025_06_18 if version == "2025-06-18" else POLICY
    schema, arguments = draft.schema(spec.input_schema, policy, document="input", at="/inputSchema")
    input_schema: dict[str, Any] = schema if isinstance(schema, dict) else {}
    if "type" not in input_schema:
        input_schema = {"type": "object", **input_schema}
    tool: dict[str, Any] = {"name": draft.name(NAME)}
    lifted = draft.lift(input_schema, ["title", "description"])
    tool.update(
        {key: lifted[key] for key in ("title", "description") if isinstance(lifted.get(key), str)}
    )
    tool["inputSchema"] = input_schema
    if spec.output_schema is not None:
        tool["outputSchema"] = _output_schema(draft, spec.output_schema, version, policy)
    annotations = {ANNOTATIONS[k]: v for k, v in spec.input_schema.items() if k in ANNOTATIONS}
    if annotations:
        tool["annotations"] = annotations
    identity = _identity(spec)
    if identity:
        tool["_meta"] = {SCHEMA_META: identity}
    return draft.finish(tool, tool["name"], arguments)


def _identity(spec: ToolSpec) -> dict[str, Any]:
    """The ``$id`` and ``x-version`` of the tool's input schema, and of its output schema."""
    identity = _identity_of(spec.input_schema)
    output = _identity_of(spec.output_schema)
    if output:
        identity["output"] = output
    return identity


def _identity_of(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    return {key: schema[key] for key in ("$id", "x-version") if isinstance(schema.get(key), str)}


def _output_schema(draft: Draft, schema: Any, version: str, policy: Policy) -> Any:
    output, _ = draft.schema(schema, policy, document="output", at="/outputSchema")
    if version not in _OBJECT_OUTPUT_ONLY or _is_object(output):
        return output
    draft.lose(
        "OUTPUT_SCHEMA_WRAPPED",
        "",
        None,
        f'MCP {version} takes object output schemas only: the result is sent as {{"result": ...}}',
        document="output",
    )
    draft.origins = {
        k.replace("/outputSchema", "/outputSchema/properties/result", 1)
        if k.startswith("/outputSchema")
        else k: v
        for k, v in draft.origins.items()
    }
    return {"type": "object", "properties": {"result": output}, "required": ["result"]}


def _is_object(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "object"
