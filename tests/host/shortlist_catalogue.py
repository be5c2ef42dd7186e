"""A small catalogue of everyday tools for the shortlist tests: sixteen Python tools over seven
domains, each recording its calls, and the shipped shortlist schema as a validator."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import jsonschema_rs

from schemawire.host import PythonTool
from schemawire.types import ToolSpec

__all__ = ["SHORTLIST_SCHEMA", "desk_tools"]

SHORTLIST_SCHEMA = jsonschema_rs.Draft202012Validator(
    json.loads(
        resources.files("schemawire.gates").joinpath("shortlist.schema.json").read_text("utf-8")
    )
)

_TEXT = {"type": "string", "minLength": 1}
_ORDER = {"type": "string", "pattern": "^[A-Z]-[0-9]{4}$", "description": "Such as A-1042."}
_AMOUNT = {"type": "number", "exclusiveMinimum": 0}
_CURRENCY = {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code."}

# name -> (description, properties, required)
_TOOLS: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    "weather_current": ("The weather in a city now.", {"city": _TEXT}, ["city"]),
    "weather_forecast": (
        "The weather forecast for a city, day by day.",
        {"city": _TEXT, "days": {"type": "integer", "minimum": 1, "maximum": 14}},
        ["city", "days"],
    ),
    "currency_convert": (
        "Convert an amount of money from one currency to another at today's rate.",
        {"amount": _AMOUNT, "source": _CURRENCY, "target": _CURRENCY},
        ["amount", "source", "target"],
    ),
    "calendar_create_event": (
        "Create an event in the user's calendar.",
        {"title": _TEXT, "start": {"type": "string", "format": "date-time"}},
        ["title", "start"],
    ),
    "calendar_list_events": (
        "List the events of one day in the user's calendar.",
        {"day": {"type": "string", "format": "date"}},
        ["day"],
    ),
    "email_send": (
        "Send an email.",
        {"to": _TEXT, "subject": _TEXT, "body": {"type": "string"}},
        ["to", "subject", "body"],
    ),
    "email_search": ("Search the user's mailbox.", {"query": _TEXT}, ["query"]),
    "files_list": ("List the files in a directory.", {"directory": _TEXT}, ["directory"]),
    "files_read": ("Read a text file.", {"path": _TEXT}, ["path"]),
    "issue_create": (
        "Open an issue in a code repository.",
        {"repository": _TEXT, "title": _TEXT},
        ["repository", "title"],
    ),
    "issue_close": (
        "Close an issue of a code repository.",
        {"repository": _TEXT, "number": {"type": "integer", "minimum": 1}},
        ["repository", "number"],
    ),
    "order_lookup": ("Look up a customer's order.", {"order_id": _ORDER}, ["order_id"]),
    "order_refund": (
        "Refund part or all of a customer's order.",
        {"order_id": _ORDER, "amount": _AMOUNT},
        ["order_id", "amount"],
    ),
    "music_play": ("Play a song or an album.", {"track": _TEXT}, ["track"]),
    "maps_directions": (
        "Directions from one place to another.",
        {
            "origin": _TEXT,
            "destination": _TEXT,
            "mode": {"enum": ["driving", "walking", "transit", "cycling"]},
        },
        ["origin", "destination"],
    ),
    "translate_text": (
        "Translate a text into another language.",
        {"text": _TEXT, "language": _TEXT},
        ["text", "language"],
    ),
}


def desk_tools(ran: list[tuple[str, dict[str, Any]]]) -> list[PythonTool]:
    """The sixteen tools, in a fixed order; each call is appended to ``ran``."""
    return [
        PythonTool(_spec(name, *definition), _recorder(name, ran))
        for name, definition in _TOOLS.items()
    ]


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {
        "type": "object",
        "description": description,
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(name, schema)


def _recorder(name: str, ran: list[tuple[str, dict[str, Any]]]) -> Callable[..., dict[str, Any]]:
    def run(**arguments: Any) -> dict[str, Any]:
        ran.append((name, arguments))
        return {"ok": True}

    return run
