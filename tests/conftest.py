"""Shared test helpers: build schema repositories in a temporary directory."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schemawire._json import dumps

EXAMPLES = Path(__file__).parents[1] / "examples"

# A real PostgreSQL for the store and crash tests, started once per session when asked for.
pytest_plugins = ["tests.store.postgres_server"]

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


SNAPSHOTS = Path(__file__).parent / "data" / "snapshots"


@pytest.fixture
def snapshot(request: pytest.FixtureRequest) -> Callable[[str, Any], None]:
    """Compare JSON with ``tests/data/snapshots/<name>.json``; set SCHEMAWIRE_UPDATE_SNAPSHOTS=1
    to write the snapshots instead (then review the diff)."""

    def check(name: str, value: Any) -> None:
        path = SNAPSHOTS / f"{name}.json"
        text = dumps(value) + "\n"
        if os.environ.get("SCHEMAWIRE_UPDATE_SNAPSHOTS") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"no snapshot {path.name}: run with SCHEMAWIRE_UPDATE_SNAPSHOTS=1"
        assert text == path.read_text(encoding="utf-8"), f"{name} differs from its snapshot"

    return check
