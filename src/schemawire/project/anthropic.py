"""Anthropic Messages API tools: ``{"name", "description", "input_schema", "strict"?}``.

Non-strict tools take any JSON Schema, but the API refuses (observed, not documented) a root
``anyOf``/``oneOf``/``allOf`` and property keys outside ``^[a-zA-Z0-9_.-]{1,64}$``: roots are
merged into one object and keys renamed, reversibly. ``strict`` applies Anthropic's subset:
every object closed, no numeric, length or array-size constraints (they are restated in the
description), ``oneOf`` as ``anyOf``, no recursion, simple patterns only. Its per-request
budgets (strict tools, optional and union parameters) are checked over a whole catalogue.

Choices where the sources disagree (reference §11): names are held to 64 characters (the docs;
the API is seen taking 128); a ``$ref`` with siblings is inlined in strict mode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from schemawire.project._draft import NO_DOCUMENTS, Draft
from schemawire.project._names import NameRule
from schemawire.project._policy import RESTATABLE
from schemawire.project._transforms import METADATA, Policy
from schemawire.project.checkers.anthropic import STRICT_FORMATS, STRICT_KEYWORDS
from schemawire.schema.dialect import DRAFT_07, DRAFT_2020_12
from schemawire.types import Projection, ToolSpec

__all__ = ["NAME", "PROPERTY_KEY", "STRICT_FORMATS", "project_anthropic"]

NAME = NameRule("[a-zA-Z0-9_-]", None, 64)
PROPERTY_KEY = NameRule("[a-zA-Z0-9_.-]", None, 64)
# Backreferences, lookaround, word boundaries and large counted repetitions are refused.
_COMPLEX_PATTERN = re.compile(r"\\[1-9bB]|\(\?[=!<]|\{\d{3,}|\{\d*,\d{3,}\}")

NON_STRICT = Policy(
    keep=(DRAFT_2020_12.keywords | DRAFT_07.keywords) - METADATA,
    property_keys=PROPERTY_KEY,
    object_root=True,
)
STRICT = Policy(
    keep=STRICT_KEYWORDS,  # what the strict checker accepts, and nothing else
    restate=RESTATABLE - STRICT_KEYWORDS,
    strict=True,
    one_of_to_any_of=True,
    inline_refs="siblings",
    recursion=False,
    property_keys=PROPERTY_KEY,
    formats=STRICT_FORMATS,
    enum_values="primitives",
    max_min_items=1,
    pattern_ok=lambda pattern: _COMPLEX_PATTERN.search(pattern) is None,
    object_root=True,
)


def project_anthropic(
    spec: ToolSpec,
    *,
    strict: bool = False,
    documents: Mapping[str, Any] | None = None,
    origins: bool = False,
) -> Projection:
    """``spec`` as an Anthropic tool."""
    draft = Draft("anthropic", spec, documents or NO_DOCUMENTS, track_origins=origins)
    input_schema = draft.parameters(STRICT if strict else NON_STRICT, at="/input_schema")
    tool = draft.envelope(input_schema, NAME)
    tool["input_schema"] = input_schema
    if strict:
        tool["strict"] = True
    draft.output_dropped()
    return draft.finish(tool, tool["name"], draft.argument_map)
