"""Helpers the tests import: the example repositories, a clean tool schema to spoil, and the
types of the fixtures that build things."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from schemawire.store import Store

EXAMPLES = Path(__file__).parents[1] / "examples"

WriteRepo = Callable[[dict[str, Any]], Path]
"""The `write_repo` fixture: writes ``{relative path: content}`` under a fresh root."""


def tool_schema(name: str, **overrides: Any) -> dict[str, Any]:
    """A clean tool input schema (passes every rule) that a test can spoil with overrides."""
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://example.com/schemas/tools/{name}.json",
        "x-version": "1.0.0",
        "description": f"The {name} tool.",
        "type": "object",
        "properties": {"city": {"type": "string", "description": "A city name."}},
        "required": ["city"],
        "additionalProperties": False,
    }
    schema.update(overrides)
    return {key: value for key, value in schema.items() if value is not None}


OpenStore = Callable[[], Store]
"""The `open_stores` fixture: opens another store on the same database (another worker's)."""
