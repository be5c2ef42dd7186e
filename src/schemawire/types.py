"""The core value types: small, frozen, and plain JSON at the edges.

Wire JSON stays as dicts and lists; these types carry what schemawire itself decides about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolSpec", "Violation"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One way an instance breaks its schema.

    Attributes:
        pointer: RFC 6901 pointer to the offending value in the instance (for a missing required
            property or an unexpected one, the pointer names that property).
        keyword: the JSON Schema keyword that failed, such as ``"exclusiveMinimum"``.
        message: one sentence a person or a model can act on.
        expected: what the keyword asked for (its value in the schema, or a summary of it).
        got: the value found at ``pointer`` (None when the value is missing).
    """

    pointer: str
    keyword: str
    message: str
    expected: Any = None
    got: Any = None

    def to_json(self) -> dict[str, Any]:
        """The violation as a JSON object with all five fields."""
        return {
            "pointer": self.pointer,
            "keyword": self.keyword,
            "message": self.message,
            "expected": self.expected,
            "got": self.got,
        }


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the repository defines it: the single source of truth for every projection.

    Attributes:
        name: the tool's name, the file stem of its input schema.
        description: what the tool does, for the model (the schema's ``description``).
        input_schema: the canonical input schema, exactly as in the file.
        output_schema: the canonical output schema (``<name>.output.json``), if any.
        annotations: ``x-`` metadata of the input schema, without the ``x-`` prefix.
        schema_id: the input schema's ``$id``.
        version: the input schema's ``x-version``.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = field(default_factory=dict[str, Any])
    schema_id: str | None = None
    version: str | None = None
