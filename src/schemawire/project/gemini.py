"""Google Gemini function declarations: ``parametersJsonSchema`` by default, ``parameters`` on
request (``openapi=True``, the OpenAPI subset the Live API needs).

``parametersJsonSchema`` takes the JSON Schema subset Gemini documents for response schemas;
the rest is dropped (numeric and length constraints restated in the description), ``const``
becomes a one-value ``enum``, ``allOf`` is merged, a ``$ref`` with siblings is inlined. The output
schema goes to ``responseJsonSchema``. ``parameters`` also writes type names in upper case,
``nullable`` for ``[T, "null"]``, string-only ``enum``, inlines every reference, leaves out
``additionalProperties`` (the Developer API refuses it) and renames property keys to
``[A-Za-z_][A-Za-z0-9_]*``.

Choices where the sources disagree (reference §11): names are held to 64 characters and must
start with a letter or ``_``; ``parametersJsonSchema`` is held to the documented response-schema
subset; recursion is cut (Gemini unrolls it "to a limited degree", and only where not required).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schemawire.project._draft import NO_DOCUMENTS, Draft
from schemawire.project._names import NameRule
from schemawire.project._policy import RESTATABLE
from schemawire.project._transforms import Policy
from schemawire.project.checkers.gemini import JSON_SCHEMA_KEYWORDS, OPENAPI_FIELDS
from schemawire.types import Projection, ToolSpec

__all__ = ["NAME", "PROPERTY_KEY", "project_gemini"]

NAME = NameRule("[A-Za-z0-9_.-]", "[A-Za-z_]", 64)
PROPERTY_KEY = NameRule("[A-Za-z0-9_]", "[A-Za-z_]", 64)

# What the checker accepts, less the three keywords the projection has always dropped.
_JSON_SCHEMA_KEPT = JSON_SCHEMA_KEYWORDS - {"$id", "$anchor", "propertyOrdering"}

JSON_SCHEMA = Policy(
    keep=_JSON_SCHEMA_KEPT,
    restate=RESTATABLE - _JSON_SCHEMA_KEPT,
    const_to_enum=True,
    merge_all_of=True,
    inline_refs="siblings",
    recursion=False,
    enum_values="strings_and_numbers",
    object_root=True,
)

# The fields the checker accepts, less those the projection writes itself (nullable), inlines
# ($ref, $defs) or leaves out.
_OPENAPI_KEPT = OPENAPI_FIELDS - {
    "nullable",
    "$ref",
    "$defs",
    "additionalProperties",
    "title",
    "default",
    "example",
    "propertyOrdering",
}
OPENAPI = Policy(
    keep=_OPENAPI_KEPT,
    restate=RESTATABLE - _OPENAPI_KEPT,
    one_of_to_any_of=True,
    merge_all_of=True,
    const_to_enum=True,
    type_lists="nullable",
    inline_refs="all",
    recursion=False,
    property_keys=PROPERTY_KEY,
    enum_values="strings",
    upper_case_types=True,
    object_root=True,
    boolean_schemas=False,
)


def project_gemini(
    spec: ToolSpec,
    *,
    openapi: bool = False,
    documents: Mapping[str, Any] | None = None,
    origins: bool = False,
) -> Projection:
    """``spec`` as a Gemini ``FunctionDeclaration`` (REST field names)."""
    draft = Draft("gemini", spec, documents or NO_DOCUMENTS, track_origins=origins)
    policy, field = (OPENAPI, "parameters") if openapi else (JSON_SCHEMA, "parametersJsonSchema")
    parameters = draft.parameters(
        policy, at=f"/{field}", root_type="OBJECT" if openapi else "object"
    )
    declaration = draft.envelope(parameters, NAME)
    declaration[field] = parameters
    if spec.output_schema is not None:
        response = "response" if openapi else "responseJsonSchema"
        output, _ = draft.schema(spec.output_schema, policy, document="output", at=f"/{response}")
        declaration[response] = output
    return draft.finish(declaration, declaration["name"], draft.argument_map)
