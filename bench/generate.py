"""Generate a schema repository for benchmarks: N realistic tool schemas, 3 fixtures each.

Each tool schema is self-contained (its ``$ref``s point into its own ``$defs``), so that
check-jsonschema can check the same files without a network.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

from schemawire._json import dumps

ID_BASE = "https://bench.example.com/"


def tool_schema(index: int, rng: random.Random) -> dict[str, Any]:
    name = f"tool_{index:04d}"
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{ID_BASE}schemas/tools/{name}.json",
        "x-version": f"1.{index % 7}.0",
        "description": f"Benchmark tool {index}: looks up an order and files a request.",
        "type": "object",
        "properties": {
            "order_id": {
                "type": "string",
                "pattern": "^A-[0-9]{4,}$",
                "description": "Order number, such as A-1042.",
            },
            "amount": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 10_000,
                "description": "Amount in the order's currency.",
            },
            "reason": {
                "type": "string",
                "enum": ["late", "damaged", "duplicate", "other"],
                "description": "Why the request is filed.",
            },
            "email": {"type": "string", "format": "email", "description": "Customer e-mail."},
            "priority": {
                "type": "integer",
                "minimum": 1,
                "maximum": 5,
                "description": "1 (low) to 5 (urgent).",
            },
            "notify": {"type": "boolean", "description": "Whether to notify the customer."},
            "items": {
                "type": "array",
                "items": {"$ref": "#/$defs/item"},
                "maxItems": 50,
                "description": "Order lines the request is about.",
            },
            f"field_{rng.randrange(1000)}": {
                "type": "string",
                "maxLength": 200,
                "description": "A tool-specific note.",
            },
        },
        "required": ["order_id", "amount", "reason"],
        "additionalProperties": False,
        "$defs": {
            "item": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "minLength": 3, "description": "Stock unit."},
                    "quantity": {"type": "integer", "minimum": 1, "description": "How many."},
                },
                "required": ["sku", "quantity"],
                "additionalProperties": False,
            }
        },
    }


def fixtures(rng: random.Random) -> dict[str, Any]:
    valid = {
        "order_id": f"A-{rng.randrange(1000, 99999)}",
        "amount": round(rng.uniform(1, 500), 2),
        "reason": rng.choice(["late", "damaged"]),
        "notify": True,
        "items": [{"sku": "SKU-1", "quantity": 2}],
    }
    minimal = {"order_id": "A-1042", "amount": 99.0, "reason": "other"}
    invalid = {"order_id": "1042", "amount": -5, "reason": "because", "note": "vip"}
    return {"valid/full.json": valid, "valid/minimal.json": minimal, "invalid/wrong.json": invalid}


def generate(root: Path, count: int, seed: int = 2026) -> Path:
    """Write a repository of ``count`` tools under ``root`` (replacing what was there)."""
    rng = random.Random(seed)
    shutil.rmtree(root, ignore_errors=True)
    (root / "schemas/tools").mkdir(parents=True)
    (root / "schemawire.toml").write_text(f'[repository]\nid-base = "{ID_BASE}"\n')
    for index in range(count):
        name = f"tool_{index:04d}"
        _write(root / f"schemas/tools/{name}.json", tool_schema(index, rng))
        for relative, instance in fixtures(rng).items():
            _write(root / f"fixtures/tools/{name}/{relative}", instance)
    return root


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(value) + "\n", encoding="utf-8")
