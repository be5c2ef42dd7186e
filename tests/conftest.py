"""Shared test helpers: build schema repositories in a temporary directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schemawire._json import dumps

EXAMPLES = Path(__file__).parents[1] / "examples"

WriteRepo = Callable[[dict[str, Any]], Path]


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


@pytest.fixture
def write_repo(tmp_path: Path) -> WriteRepo:
    """Write ``{relative path: content}`` under a fresh root; dicts and lists become JSON."""

    def write(files: dict[str, Any]) -> Path:
        for relative, content in files.items():
            path = tmp_path / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            elif isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.write_text(dumps(content) + "\n", encoding="utf-8")
        return tmp_path

    return write
