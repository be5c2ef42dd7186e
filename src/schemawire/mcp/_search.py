"""The gateway's two tools in ``--shortlist`` mode: ``search_tools`` and ``call_tool``.

This is the form FastMCP's search transforms give a client (``search_tools(query)`` finds tools,
``call_tool(name, arguments)`` calls one of them), so a client that knows it needs nothing
else. The answer to a search is the shortlist as JSON (``gates/shortlist.schema.json``) and the
found tools' definitions as ``tools/list`` would give them.

Neither description lists the catalogue: a client with 300 tools behind the gateway sees two.
"""

from __future__ import annotations

from typing import Any

from schemawire.gates import ArgumentGate, shortlist_schema
from schemawire.types import ToolSpec

__all__ = ["CALL_TOOL", "MAX_TOP", "SEARCH_OUTPUT", "SEARCH_TOOLS", "argument_gates", "listed"]

MAX_TOP = 50  # the most tools one search may return

SEARCH_TOOLS = ToolSpec(
    "search_tools",
    {
        "type": "object",
        "description": (
            "Find the tools for a task among all the tools this server has. Say what the tool "
            "should do, in a few words (e.g. 'read a file', 'create an entity'). The answer "
            "lists the best matches with their input schemas, and says how many matched in all; "
            "call one with call_tool."
        ),
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "What the tool should do.",
            },
            "top": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TOP,
                "description": "How many tools to return (default: the server's).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
)


def _shortlist_schema() -> dict[str, Any]:
    """The shipped shortlist schema, to stand inside another (without its own ``$id``)."""
    schema = shortlist_schema()
    return {key: value for key, value in schema.items() if key not in {"$schema", "$id"}}


SEARCH_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "shortlist": _shortlist_schema(),
        "tools": {
            "type": "array",
            "description": "The found tools, as tools/list gives them, in the shortlist's order.",
            "items": {"type": "object", "required": ["name", "inputSchema"]},
        },
    },
    "required": ["shortlist", "tools"],
    "additionalProperties": False,
}
"""What ``search_tools`` answers, as its listed ``outputSchema``."""

CALL_TOOL = ToolSpec(
    "call_tool",
    {
        "type": "object",
        "description": (
            "Call a tool found with search_tools, by its name, with arguments that match its "
            "input schema. The arguments are checked against that schema before the call."
        ),
        "properties": {
            "name": {
                "type": "string",
                "minLength": 1,
                "description": "The tool's name, as search_tools gave it.",
            },
            "arguments": {
                "type": "object",
                "description": "The tool's arguments.",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    },
)


def listed() -> list[dict[str, Any]]:
    """The two tools as ``tools/list`` gives them."""
    search, call = (
        {
            "name": spec.name,
            "description": spec.description,
            "inputSchema": {k: v for k, v in spec.input_schema.items() if k != "description"},
        }
        for spec in (SEARCH_TOOLS, CALL_TOOL)
    )
    return [{**search, "outputSchema": SEARCH_OUTPUT}, call]


def argument_gates() -> dict[str, ArgumentGate]:
    """The argument gate of each of the two tools."""
    return {spec.name: ArgumentGate(spec) for spec in (SEARCH_TOOLS, CALL_TOOL)}
