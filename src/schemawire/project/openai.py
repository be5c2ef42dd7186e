"""OpenAI: Chat Completions tools, Responses function tools, and Structured Outputs formats.

Targets ``openai.chat`` and ``openai.responses`` take a tool; ``strict`` applies the Structured
Outputs subset (every object closed, every property required, optional ones nullable, a short
list of keywords). ``openai.response_format`` (Chat) and ``openai.text_format`` (Responses) take
a handoff or state schema as a strict Structured Output.

Choices where the sources disagree (reference §11), on the side OpenAI cannot reject:
``minLength``/``maxLength``, ``default``, ``title``, ``examples`` and ``prefixItems`` are not sent
in strict mode; the tool description is cut at 1,024 characters (a limit that was enforced and
is reportedly lifted); the Responses tool name follows the Chat rule; a root ``anyOf``/``oneOf``
is merged into one object in both modes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from schemawire.project._draft import ENVELOPE_ANNOTATIONS, NO_DOCUMENTS, Draft
from schemawire.project._limits import TargetLimit
from schemawire.project._names import NameRule
from schemawire.project._policy import RESTATABLE
from schemawire.project._transforms import METADATA, Policy
from schemawire.project.checkers.openai import STRICT_FORMATS, STRICT_KEYWORDS
from schemawire.schema.dialect import DRAFT_07, DRAFT_2020_12
from schemawire.types import Projection, ToolSpec

__all__ = [
    "DESCRIPTION_LIMIT",
    "NAME",
    "STRICT_FORMATS",
    "STRICT_LIMITS",
    "project_chat",
    "project_response_format",
    "project_responses",
    "project_text_format",
]

NAME = NameRule("[a-zA-Z0-9_-]", None, 64)
DESCRIPTION_LIMIT = 1024
STRICT_LIMITS = (
    TargetLimit("properties", 5000, "OpenAI Structured Outputs: object properties in total"),
    TargetLimit("depth", 10, "OpenAI Structured Outputs: levels of nesting"),
    TargetLimit("chars", 120_000, "OpenAI Structured Outputs: characters of names and values"),
    TargetLimit("enum_values", 1000, "OpenAI Structured Outputs: enum values in total"),
    TargetLimit("long_enum_chars", 15_000, "OpenAI Structured Outputs: one enum over 250 values"),
)

# Structured Outputs compiles patterns to a grammar: lookaround and backreferences do not fit.
_LOOKAROUND = re.compile(r"\(\?<?[=!]|\\[1-9]")
_EVERY_KEYWORD = (DRAFT_2020_12.keywords | DRAFT_07.keywords) - METADATA

NON_STRICT = Policy(keep=_EVERY_KEYWORD, object_root=True)
STRICT = Policy(
    keep=STRICT_KEYWORDS,  # what the strict checker accepts, and nothing else
    restate=RESTATABLE - STRICT_KEYWORDS,
    strict=True,
    typed=True,
    one_of_to_any_of=True,
    merge_all_of=True,
    type_lists="null_only",
    inline_refs="siblings",
    formats=STRICT_FORMATS,
    enum_values="primitives",
    pattern_ok=lambda pattern: _LOOKAROUND.search(pattern) is None,
    object_root=True,
)


def project_chat(
    spec: ToolSpec,
    *,
    strict: bool = False,
    documents: Mapping[str, Any] | None = None,
    origins: bool = False,
) -> Projection:
    """``spec`` as a Chat Completions tool: ``{"type": "function", "function": {...}}``."""
    draft = Draft("openai.chat", spec, documents or NO_DOCUMENTS, track_origins=origins)
    function = _function(draft, strict, at="/function/parameters")
    return draft.finish(
        {"type": "function", "function": function}, function["name"], draft.argument_map
    )


def project_responses(
    spec: ToolSpec,
    *,
    strict: bool = True,
    documents: Mapping[str, Any] | None = None,
    origins: bool = False,
) -> Projection:
    """``spec`` as a Responses function tool (flat); ``strict`` is always sent, since Responses
    makes tools strict when it is left out."""
    draft = Draft("openai.responses", spec, documents or NO_DOCUMENTS, track_origins=origins)
    function = _function(draft, strict, at="/parameters")
    return draft.finish({"type": "function", **function}, function["name"], draft.argument_map)


def project_response_format(
    spec: ToolSpec, *, documents: Mapping[str, Any] | None = None, origins: bool = False
) -> Projection:
    """``spec``'s schema as a Chat ``response_format`` (strict Structured Outputs)."""
    draft = Draft("openai.response_format", spec, documents or NO_DOCUMENTS, track_origins=origins)
    body = _format(draft, at="/json_schema/schema")
    return draft.finish(
        {"type": "json_schema", "json_schema": body}, body["name"], draft.argument_map
    )


def project_text_format(
    spec: ToolSpec, *, documents: Mapping[str, Any] | None = None, origins: bool = False
) -> Projection:
    """``spec``'s schema as a Responses ``text.format`` (strict Structured Outputs, flat)."""
    draft = Draft("openai.text_format", spec, documents or NO_DOCUMENTS, track_origins=origins)
    body = _format(draft, at="/schema")
    return draft.finish({"type": "json_schema", **body}, body["name"], draft.argument_map)


def _function(draft: Draft, strict: bool, *, at: str) -> dict[str, Any]:
    policy, limits = (STRICT, STRICT_LIMITS) if strict else (NON_STRICT, ())
    parameters = draft.parameters(policy, at=at, limits=limits)
    draft.drop_root(parameters, ["title"])
    function = _envelope(draft, parameters)
    function["parameters"] = parameters
    function["strict"] = strict
    draft.output_dropped()
    return function


def _format(draft: Draft, *, at: str) -> dict[str, Any]:
    # The map turns a strict answer back into the canonical shape (nulls for absent members).
    schema = draft.parameters(STRICT, at=at, limits=STRICT_LIMITS)
    draft.drop_root(schema, [k for k in ENVELOPE_ANNOTATIONS if k != "description"])
    body = _envelope(draft, schema)
    body["schema"] = schema
    body["strict"] = True
    return body


def _envelope(draft: Draft, schema: dict[str, Any]) -> dict[str, Any]:
    """The name and description, the description cut to `DESCRIPTION_LIMIT` (an empty one is
    left out)."""
    envelope = draft.envelope(schema, NAME)
    description = _description(draft, envelope.pop("description", None))
    if description:
        envelope["description"] = description
    return envelope


def _description(draft: Draft, description: Any) -> str | None:
    if not isinstance(description, str):
        return None
    if len(description) <= DESCRIPTION_LIMIT:
        return description
    draft.lose(
        "DESCRIPTION_TRUNCATED",
        "",
        "description",
        f"cut to {DESCRIPTION_LIMIT} characters, a limit OpenAI has enforced",
    )
    return description[: DESCRIPTION_LIMIT - 1] + "…"
