"""What each API's tests give the shared wire tests (`tests/wire/test_wire_formats.py`): the
scripted conversation's recorded responses, what they read as, where their schemas are, and
bodies that are not responses at all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemawire.types import ToolCall
from schemawire.wire import Request, ToolRef, wire_format
from tests.wire import scenario


@dataclass(frozen=True)
class WireCase:
    """One API's side of the scripted conversation.

    Attributes:
        api: the API's name.
        tools: the scenario's tools as its requests show them.
        schemas: the published document its bodies are checked against (`provider_schemas`).
        request_schema: the document's name for a request body.
        response_schema: the document's name for a response body.
        calls_response: the recorded response with the three parallel calls.
        final_response: the recorded response with the final answer.
        call_ids: the three calls' ids, as the turn reads them.
        arguments: the three calls' arguments, as the turn reads them (text or objects).
        calls_text: the text that comes with the calls, if any.
        calls_stop: why the calls' turn stopped; ``final_stop`` for the answer's.
        usage: the token counts of the calls' response.
        structured_options: the options of the structured-output request.
        malformed: bodies that are not responses, each with where the error must point.
    """

    api: str
    tools: tuple[ToolRef, ...]
    schemas: str
    request_schema: str
    response_schema: str
    calls_response: dict[str, Any]
    final_response: dict[str, Any]
    call_ids: list[str]
    arguments: list[Any]
    calls_text: str | None
    calls_stop: str
    final_stop: str
    usage: dict[str, Any]
    structured_options: dict[str, Any]
    malformed: list[tuple[Any, str]] = field(default_factory=list[tuple[Any, str]])

    def expected_calls(self) -> list[ToolCall]:
        """The three calls as the turn must read them: canonical names, arguments as sent."""
        return [
            ToolCall(call_id, name, arguments, self.api)
            for call_id, name, arguments in zip(
                self.call_ids, scenario.CANONICAL_NAMES, self.arguments, strict=True
            )
        ]

    def conversation_body(self) -> dict[str, Any]:
        """The request after the calls: the question, the calls' turn, and their results."""
        wire = wire_format(self.api)
        turn = wire.turn(self.calls_response, self.tools)
        conversation = (scenario.QUESTION, turn, scenario.outputs(self.call_ids))
        return wire.body(
            Request(scenario.MODEL[self.api], conversation, self.tools, scenario.SYSTEM)
        )

    def structured_body(self) -> dict[str, Any]:
        """A request for an answer that follows the scenario's output schema."""
        request = Request(
            scenario.MODEL[self.api],
            (scenario.QUESTION,),
            output_schema=scenario.output_schema(self.api),
            options=self.structured_options,
        )
        return wire_format(self.api).body(request)
