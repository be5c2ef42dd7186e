"""A conversation as the host keeps it, the same for every model API.

Each `schemawire.wire` module renders it into its API's request body and reads its API's
response back into an `AssistantTurn`. The host never touches a provider's shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from schemawire.types import ToolCall, ToolResult

if TYPE_CHECKING:
    from schemawire.wire.stream import StreamReader

__all__ = [
    "AssistantTurn",
    "Entry",
    "Request",
    "ToolOutputs",
    "ToolRef",
    "UserText",
    "WireFormat",
]


@dataclass(frozen=True, slots=True)
class UserText:
    """What the user said."""

    text: str


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """One answer of the model: text, tool calls, or both.

    Attributes:
        text: the assistant's text, if any (the final answer when there are no tool calls).
        tool_calls: the calls it asked for, in its order, arguments as the API sent them (a
            JSON string for OpenAI, an object for Anthropic and Gemini), names canonical.
        stop: why the model stopped, as the API says it (``"tool_calls"``, ``"end_turn"``...).
        raw: the API's own message, kept so that the next request can replay it exactly (some
            APIs require their own ids, signatures or reasoning items to be sent back).
        usage: token counts as the API reports them.
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    stop: str | None = None
    raw: Any = None
    usage: Mapping[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class ToolOutputs:
    """The results of one turn's tool calls, matched to them by call id, in the model's order.
    A refused call's result is the gate's error object, with ``is_error`` set."""

    results: tuple[ToolResult, ...]


Entry = UserText | AssistantTurn | ToolOutputs


@dataclass(frozen=True, slots=True)
class ToolRef:
    """A tool as one request shows it: its payload, and the name the model calls it by.

    Attributes:
        name: the canonical name.
        projected_name: the name on the wire (a target may have had to change it).
        payload: the projected tool, exactly as the API takes it.
    """

    name: str
    projected_name: str
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Request:
    """Everything one model request carries, before it is put in an API's shape.

    Attributes:
        model: the model's name at the provider.
        conversation: the entries so far.
        tools: the projected tools.
        system: the system prompt.
        output_schema: a projected Structured Outputs schema the final answer must follow
            (the target's ``response_format`` / ``text.format`` / ``responseJsonSchema``
            payload), or None.
        options: API options passed through as they are (``temperature``, ``max_tokens``...).
    """

    model: str
    conversation: Sequence[Entry]
    tools: Sequence[ToolRef] = ()
    system: str | None = None
    output_schema: dict[str, Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])


class WireFormat(Protocol):
    """One model API: how a request is written and a response read. Pure: no I/O."""

    name: str
    """The API's name, such as ``"openai.chat"``."""
    target: str
    """The projection target its tools use, such as ``"openai.chat"``."""

    def body(self, request: Request) -> dict[str, Any]:
        """The JSON body of the HTTP request. Its messages are shared with the bodies of earlier
        requests (each entry is rendered once): read it, copy it, never change it."""
        ...

    def turn(self, body: Any, tools: Sequence[ToolRef]) -> AssistantTurn:
        """The model's answer in a response body, with tool names mapped back to canonical.

        Raises:
            InputError: the body is not a response of this API.
        """
        ...

    def stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` (from `body`) asking for the response as a stream of server-sent events,
        the way this API is asked (its members shared with ``body``)."""
        ...

    def stream_reader(self, tools: Sequence[ToolRef] = ()) -> StreamReader:
        """A reader for one streamed response; with ``tools``, names are mapped back to
        canonical (without, they stay as on the wire)."""
        ...
