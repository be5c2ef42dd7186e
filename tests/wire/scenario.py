"""The scripted conversation every API's tests play, with tools projected the real way.

The user asks three things at once; the model calls three tools in parallel; the host answers
with an MCP text result, a JSON value, and the argument gate's refusal of the third call; the
model gives its final answer. ``billing.refund`` is renamed by every target but Gemini (a dot is
not allowed), so the first three APIs also show a name mapped back.
"""

from __future__ import annotations

from typing import Any

from schemawire.project import project, project_catalogue
from schemawire.types import Rejection, ToolCall, ToolResult, ToolSpec, Violation
from schemawire.wire import AssistantTurn, Request, ToolOutputs, ToolRef, UserText

MODEL = {
    "openai.chat": "gpt-5.1",
    "openai.responses": "gpt-5.1",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
}
SYSTEM = "You are the support desk. Use the tools; answer in one or two sentences."
QUESTION = UserText("What's the weather in Paris, where is order A-1042, and refund 20 on it?")
FINAL_TEXT = (
    "Paris: 18°C and light rain. Order A-1042 has shipped. "
    "I could not refund 20: refunds above 10 need a human."
)


def _object(description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "description": description,
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


ORDER_ID = {"type": "string", "pattern": "^A-[0-9]{4,}$", "description": "Order number."}
SPECS = (
    ToolSpec(
        "get_weather",
        _object(
            "Current weather in a city.",
            {
                "city": {"type": "string", "description": "City name."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            ["city", "unit"],
        ),
    ),
    ToolSpec(
        "lookup_order",
        _object("Where an order is.", {"order_id": ORDER_ID}, ["order_id"]),
    ),
    ToolSpec(
        "billing.refund",
        _object(
            "Refund part of an order.",
            {"order_id": ORDER_ID, "amount": {"type": "number", "exclusiveMinimum": 0}},
            ["order_id", "amount"],
        ),
    ),
)
ANSWER = ToolSpec(
    "answer",
    _object("The final answer.", {"summary": {"type": "string"}}, ["summary"]),
)
ARGUMENTS = (
    {"city": "Paris", "unit": "celsius"},
    {"order_id": "A-1042"},
    {"order_id": "A-1042", "amount": 20},
)
CANONICAL_NAMES = ["get_weather", "lookup_order", "billing.refund"]


def tool_refs(target: str, **options: Any) -> tuple[ToolRef, ...]:
    """The three tools as one request to ``target`` shows them."""
    catalogue = project_catalogue(SPECS, target, **options)
    return tuple(ToolRef(p.name, p.projected_name, p.payload) for p in catalogue.projections)


def output_schema(api: str) -> dict[str, Any]:
    """The ``answer`` schema as each API's Structured Outputs take it."""
    if api == "openai.chat":
        return project(ANSWER, "openai.response_format").payload
    if api == "openai.responses":
        return project(ANSWER, "openai.text_format").payload
    if api == "anthropic":
        schema: dict[str, Any] = project(ANSWER, "anthropic", strict=True).payload["input_schema"]
        return schema
    gemini: dict[str, Any] = project(ANSWER, "gemini").payload["parametersJsonSchema"]
    return gemini


def refusal() -> dict[str, Any]:
    """The argument gate's error object for the refund (over the amount a tool may refund)."""
    violation = Violation("/amount", "maximum", "must be at most 10", 10, 20)
    hint = "Ask a human to refund more than 10, or refund at most 10."
    rejection = Rejection(
        gate="arguments",
        code="arguments_invalid",
        tool="billing.refund",
        schema_id="https://example.com/schemas/tools/billing.refund.json",
        version="1.0.0",
        violations=(violation,),
        hint=hint,
    )
    return rejection.to_json()


def outputs(call_ids: list[str]) -> ToolOutputs:
    """The host's answers to the three calls, in the model's order."""
    weather, order, refund = call_ids
    return ToolOutputs(
        (
            ToolResult(weather, [{"type": "text", "text": "18°C, light rain"}]),
            ToolResult(order, {"order_id": "A-1042", "status": "shipped"}),
            ToolResult(refund, refusal(), is_error=True),
        )
    )


def first_request(api: str, tools: tuple[ToolRef, ...]) -> Request:
    """The conversation's opening request."""
    return Request(MODEL[api], (QUESTION,), tools, SYSTEM)


def host_turn(*calls: ToolCall, text: str | None = None) -> AssistantTurn:
    """A turn the host made up (or got from another API): nothing raw to replay."""
    return AssistantTurn(text=text, tool_calls=calls)
