"""A copy of ``examples/support-desk`` for the Tools page's tests: its tools, one more with a
nested schema (``ship_order``: an object, an array of objects, an enum, optional fields, a
nullable note), and implementations that write down each call they get, so a test can prove
that a refused call never ran the function.

Each copy names its implementations' module uniquely: the functions are imported into the
test's process (as `schemawire serve` imports them into its own), and a module imported once
stays imported.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).parents[2] / "examples" / "support-desk"

SHIP_ORDER: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/schemas/tools/ship_order.json",
    "x-version": "2.1.0",
    "title": "Ship an order",
    "description": "Ship the items of an order to an address. Writes to the warehouse system.",
    "type": "object",
    "properties": {
        "order_id": {"$ref": "../common/order.json#/$defs/order_id"},
        "speed": {
            "type": "string",
            "enum": ["standard", "express", "overnight"],
            "default": "standard",
            "description": "How fast the parcel travels.",
        },
        "address": {
            "type": "object",
            "description": "Where the parcel goes.",
            "properties": {
                "street": {"type": "string", "minLength": 1},
                "city": {"type": "string", "minLength": 1},
                "postcode": {
                    "type": "string",
                    "pattern": "^[0-9]{5}$",
                    "description": "Five digits.",
                },
            },
            "required": ["street", "city"],
            "additionalProperties": False,
        },
        "items": {
            "type": "array",
            "minItems": 1,
            "maxItems": 10,
            "description": "What goes in the parcel.",
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "minLength": 1},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
                },
                "required": ["sku", "quantity"],
                "additionalProperties": False,
            },
        },
        "gift": {"type": "boolean", "description": "Wrap it and leave the price off."},
        "note": {
            "anyOf": [{"type": "string", "maxLength": 200}, {"type": "null"}],
            "description": "A note for the courier.",
        },
    },
    "required": ["order_id", "address", "items"],
    "additionalProperties": False,
}

IMPLEMENTATIONS = '''"""The support desk's tools, each call written down before it runs."""

import json
import os
from pathlib import Path

CALLS = Path(__file__).with_name("calls.jsonl")
PROCESSES = Path(__file__).with_name("processes.txt")


def _called(tool, arguments):
    with CALLS.open("a", encoding="utf-8") as file:
        file.write(json.dumps({"tool": tool, "arguments": arguments}) + "\\n")
    with PROCESSES.open("a", encoding="utf-8") as file:
        file.write(f"{os.getpid()}\\n")


def get_weather(city, unit="celsius"):
    if city == "EXIT":  # the process serving the call ends (a server that crashes mid-call)
        os._exit(3)
    _called("get_weather", {"city": city, "unit": unit})
    return {"city": city, "temp_c": 11.5, "condition": "cloudy"}


def create_refund(order_id, amount, reason):
    _called("create_refund", {"order_id": order_id, "amount": amount, "reason": reason})
    status = "lost" if reason == "other" else "pending"  # "lost": the output schema refuses it
    return {"refund_id": "R-2001", "order_id": order_id, "amount": amount, "status": status,
            "metadata": {"reason": reason}}


def ship_order(order_id, address, items, speed="standard", gift=False, note=None):
    _called("ship_order", {"order_id": order_id, "address": address, "items": items})
    # The warehouse echoes its API token: the result gate redacts it before anyone reads it.
    return {"shipment": "S-77", "parcels": len(items), "speed": speed,
            "debug": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"}
'''


def tools_repo(folder: Path) -> Path:
    """A copy of the support desk under ``folder`` with ``ship_order`` and recording
    implementations; returns its root."""
    root = folder / "support-desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("adapters", "__pycache__"))
    (root / "schemas" / "tools" / "ship_order.json").write_text(
        json.dumps(SHIP_ORDER, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    module = f"desk_{uuid.uuid4().hex[:10]}"
    (root / "implementations.py").unlink()
    (root / f"{module}.py").write_text(IMPLEMENTATIONS, encoding="utf-8")
    settings = (root / "schemawire.toml").read_text(encoding="utf-8")
    head = settings.split("[serve.tools]")[0]
    tools = "".join(
        f'{tool} = "{module}:{tool}"\n' for tool in ("get_weather", "create_refund", "ship_order")
    )
    (root / "schemawire.toml").write_text(f"{head}[serve.tools]\n{tools}", encoding="utf-8")
    return root


def calls_made(root: Path) -> list[dict[str, Any]]:
    """Each call the implementations got, in order."""
    path = root / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def processes(root: Path) -> list[int]:
    """The process that ran each call, in order (a server started again has a new one)."""
    path = root / "processes.txt"
    if not path.exists():
        return []
    return [int(line) for line in path.read_text(encoding="utf-8").split()]
