"""A 1,000-tool catalogue of everyday SaaS tools, generated: ten domains, four services each,
five resources per domain, five actions per resource (``github_create_issue``,
``stripe_refund_payment``, ``openweather_get_forecast``...), each with a description and a
typed JSON Schema (ids with patterns, enums, bounded integers, formats), as a real catalogue of
several MCP servers would have.

    from catalogue import catalogue_tools
    tools = catalogue_tools(calls)   # 1,000 PythonTool, each call appended to `calls`
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemawire.host import PythonTool
from schemawire.types import ToolSpec

__all__ = ["DOMAINS", "catalogue_specs", "catalogue_tools"]

_TEXT = {"type": "string", "minLength": 1}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": 100, "description": "At most this many."}
_DATE = {"type": "string", "format": "date"}
_MONEY = {"type": "number", "exclusiveMinimum": 0}
_CITY = {"type": "string", "minLength": 1, "description": "City name, such as Lisbon."}


def _domain(
    services: dict[str, str],
    resources: dict[str, tuple[str, dict[str, Any]]],
    actions: dict[str, str],
) -> dict[str, Any]:
    return {"services": services, "resources": resources, "actions": actions}


# domain -> services (name: shown as), resources (name: (what it is, its fields)), actions
DOMAINS: dict[str, dict[str, Any]] = {
    "code": _domain(
        {"github": "GitHub", "gitlab": "GitLab", "bitbucket": "Bitbucket", "gitea": "Gitea"},
        {
            "repository": ("a code repository", {"name": _TEXT, "private": {"type": "boolean"}}),
            "issue": ("an issue of a repository", {"title": _TEXT, "body": {"type": "string"}}),
            "pull_request": ("a pull request", {"title": _TEXT, "head": _TEXT, "base": _TEXT}),
            "branch": ("a branch of a repository", {"name": _TEXT, "from_ref": _TEXT}),
            "release": ("a tagged release", {"tag": _TEXT, "notes": {"type": "string"}}),
        },
        {"create": "Create", "get": "Get", "list": "List", "update": "Update", "delete": "Delete"},
    ),
    "tracking": _domain(
        {"jira": "Jira", "linear": "Linear", "asana": "Asana", "trello": "Trello"},
        {
            "ticket": ("a work ticket", {"summary": _TEXT, "priority": {"enum": ["low", "high"]}}),
            "project": ("a project", {"name": _TEXT, "lead": _TEXT}),
            "sprint": ("a sprint", {"name": _TEXT, "start": _DATE, "end": _DATE}),
            "comment": ("a comment on a ticket", {"ticket_id": _TEXT, "text": _TEXT}),
            "label": ("a label for tickets", {"name": _TEXT, "color": _TEXT}),
        },
        {
            "create": "Create",
            "get": "Get",
            "list": "List",
            "update": "Update",
            "archive": "Archive",
        },
    ),
    "messaging": _domain(
        {
            "slack": "Slack",
            "teams": "Microsoft Teams",
            "discord": "Discord",
            "telegram": "Telegram",
        },
        {
            "message": ("a chat message", {"channel": _TEXT, "text": _TEXT}),
            "channel": ("a channel", {"name": _TEXT, "topic": {"type": "string"}}),
            "thread": ("a thread of replies", {"message_id": _TEXT, "text": _TEXT}),
            "reaction": ("an emoji reaction", {"message_id": _TEXT, "emoji": _TEXT}),
            "member": ("a member of a workspace", {"email": _TEXT}),
        },
        {"send": "Send", "get": "Get", "list": "List", "edit": "Edit", "remove": "Remove"},
    ),
    "mail": _domain(
        {"gmail": "Gmail", "outlook": "Outlook", "fastmail": "Fastmail", "proton": "Proton Mail"},
        {
            "email": ("an email", {"to": _TEXT, "subject": _TEXT, "body": {"type": "string"}}),
            "draft": ("an email draft", {"to": _TEXT, "subject": _TEXT}),
            "folder": ("a mail folder", {"name": _TEXT}),
            "contact": ("an address book contact", {"name": _TEXT, "email": _TEXT}),
            "calendar_event": ("a calendar event", {"title": _TEXT, "day": _DATE}),
        },
        {"send": "Send", "get": "Get", "list": "List", "move": "Move", "delete": "Delete"},
    ),
    "files": _domain(
        {"drive": "Google Drive", "dropbox": "Dropbox", "box": "Box", "onedrive": "OneDrive"},
        {
            "file": ("a file", {"path": _TEXT}),
            "folder": ("a folder", {"path": _TEXT}),
            "share_link": ("a link that shares a file", {"path": _TEXT, "expires": _DATE}),
            "file_comment": ("a comment on a file", {"path": _TEXT, "text": _TEXT}),
            "revision": ("an earlier version of a file", {"path": _TEXT, "revision": _TEXT}),
        },
        {"upload": "Upload", "get": "Get", "list": "List", "rename": "Rename", "delete": "Delete"},
    ),
    "payments": _domain(
        {"stripe": "Stripe", "paypal": "PayPal", "shopify": "Shopify", "square": "Square"},
        {
            "payment": ("a card payment", {"amount": _MONEY, "currency": _TEXT}),
            "customer": ("a paying customer", {"email": _TEXT, "name": _TEXT}),
            "invoice": ("an invoice", {"customer_id": _TEXT, "amount": _MONEY, "due": _DATE}),
            "product": ("a product for sale", {"name": _TEXT, "price": _MONEY}),
            "subscription": ("a recurring plan", {"customer_id": _TEXT, "plan": _TEXT}),
        },
        {"create": "Create", "get": "Get", "list": "List", "refund": "Refund", "cancel": "Cancel"},
    ),
    "crm": _domain(
        {
            "salesforce": "Salesforce",
            "hubspot": "HubSpot",
            "zendesk": "Zendesk",
            "intercom": "Intercom",
        },
        {
            "lead": ("a sales lead", {"name": _TEXT, "company": _TEXT}),
            "deal": ("a deal in the pipeline", {"name": _TEXT, "value": _MONEY}),
            "support_case": ("a customer support case", {"subject": _TEXT, "requester": _TEXT}),
            "note": ("a note on a record", {"record_id": _TEXT, "text": _TEXT}),
            "account": ("a customer company", {"name": _TEXT, "domain": _TEXT}),
        },
        {"create": "Create", "get": "Get", "list": "List", "update": "Update", "merge": "Merge"},
    ),
    "travel": _domain(
        {"amadeus": "Amadeus", "booking": "Booking.com", "airbnb": "Airbnb", "uber": "Uber"},
        {
            "flight": ("a flight", {"origin": _TEXT, "destination": _TEXT, "day": _DATE}),
            "hotel_room": ("a hotel room", {"city": _CITY, "check_in": _DATE, "nights": _LIMIT}),
            "stay": ("a holiday rental", {"city": _CITY, "guests": _LIMIT}),
            "ride": ("a ride", {"pickup": _TEXT, "dropoff": _TEXT}),
            "itinerary": ("a trip itinerary", {"name": _TEXT}),
        },
        {
            "search": "Search for",
            "book": "Book",
            "get": "Get",
            "change": "Change",
            "cancel": "Cancel",
        },
    ),
    "food": _domain(
        {
            "opentable": "OpenTable",
            "yelp": "Yelp",
            "doordash": "DoorDash",
            "instacart": "Instacart",
        },
        {
            "table": (
                "a restaurant table",
                {"restaurant": _TEXT, "party_size": _LIMIT, "time": _TEXT},
            ),
            "restaurant": ("a restaurant", {"city": _CITY, "cuisine": _TEXT}),
            "delivery": ("a food delivery order", {"restaurant": _TEXT, "items": _TEXT}),
            "review": (
                "a review of a place",
                {"place": _TEXT, "stars": {"type": "integer", "minimum": 1, "maximum": 5}},
            ),
            "grocery_cart": ("a grocery cart", {"store": _TEXT, "items": _TEXT}),
        },
        {"find": "Find", "book": "Book", "get": "Get", "update": "Update", "cancel": "Cancel"},
    ),
    "weather": _domain(
        {
            "openweather": "OpenWeather",
            "weatherapi": "WeatherAPI",
            "accuweather": "AccuWeather",
            "tomorrowio": "Tomorrow.io",
        },
        {
            "forecast": (
                "the day-by-day weather forecast",
                {"city": _CITY, "days": {"type": "integer", "minimum": 1, "maximum": 14}},
            ),
            "current_conditions": (
                "the weather now",
                {"city": _CITY, "units": {"enum": ["metric", "imperial"]}},
            ),
            "severe_alert": ("severe weather alerts", {"region": _TEXT}),
            "air_quality": ("the air quality index", {"city": _CITY}),
            "weather_history": ("past weather", {"city": _CITY, "day": _DATE}),
        },
        {
            "get": "Get",
            "list": "List",
            "compare": "Compare",
            "subscribe": "Subscribe to",
            "export": "Export",
        },
    ),
}


def catalogue_specs() -> list[ToolSpec]:
    """The 1,000 tools, in a fixed order: domain by domain, service by service."""
    return [
        _spec(service, resource, action)
        for domain in DOMAINS.values()
        for service in domain["services"].items()
        for resource in domain["resources"].items()
        for action in domain["actions"].items()
    ]


def catalogue_tools(calls: list[tuple[str, dict[str, Any]]]) -> list[PythonTool]:
    """The 1,000 tools as Python tools; each call is appended to ``calls``."""
    return [PythonTool(spec, _answering(spec.name, calls)) for spec in catalogue_specs()]


def _spec(
    service: tuple[str, str],
    resource: tuple[str, tuple[str, dict[str, Any]]],
    action: tuple[str, str],
) -> ToolSpec:
    """One tool: ``service`` (name, as shown) does ``action`` (name, verb) on ``resource``
    (name, (what it is, its fields))."""
    (name, shown), (noun, (what, fields)), (act, verb) = service, resource, action
    properties, required = _arguments(act, fields, f"The {noun.replace('_', ' ')}'s id in {shown}.")
    schema = {
        "type": "object",
        "description": f"{verb} {what} in {shown}.",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(f"{name}_{act}_{noun}", schema)


def _arguments(
    action: str, fields: dict[str, Any], id_description: str
) -> tuple[dict[str, Any], list[str]]:
    """What an action takes: a listing the fields as filters; a lookup the id (or, for what
    is looked up by place, the fields); a change the id and the fields."""
    identifier = {
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]{3,64}$",
        "description": id_description,
    }
    if action in ("list", "search", "find"):
        return {**fields, "limit": _LIMIT}, []
    by_place = "city" in fields or "region" in fields
    if by_place or action in ("get", "delete", "remove", "cancel", "archive", "export"):
        return ({**fields}, list(fields)) if by_place else ({"id": identifier}, ["id"])
    return {"id": identifier, **fields}, list(fields)


def _answering(name: str, calls: list[tuple[str, dict[str, Any]]]) -> Callable[..., dict[str, Any]]:
    def answer(**arguments: Any) -> dict[str, Any]:
        calls.append((name, arguments))
        return {"tool": name, "status": "ok", "arguments": arguments}

    return answer
