"""Helpers the tests import: the example repositories, a clean tool schema to spoil, and the
types of the fixtures that build things."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
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


def same_json(left: Any, right: Any) -> bool:
    """JSON equality that keeps ``true`` apart from ``1``, ``1`` from ``1.0`` and ``-0.0`` from
    ``0.0``."""
    if isinstance(left, float) and isinstance(right, float):
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_json(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(same_json, left, right))
    return bool(left == right)


def json_strings(value: Any) -> Iterator[str]:
    """Every string a JSON value holds, its keys left out, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


OpenStore = Callable[[], Store]
"""The `open_stores` fixture: opens another store on the same database (another worker's)."""


def printed_under_hash_seed(script: str, seed: str) -> str:
    """What ``python -c script`` prints, run from the repository's root with
    ``PYTHONHASHSEED=seed``: another seed orders every set of strings differently, so output
    that must not depend on that order can be compared across two seeds."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PYTHONHASHSEED": seed},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout
