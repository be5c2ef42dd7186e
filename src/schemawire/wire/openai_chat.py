"""OpenAI Chat Completions (``POST /v1/chat/completions``): request bodies, responses, streams.

The conversation becomes ``messages``: the system prompt, user messages, assistant messages
with ``tool_calls`` (arguments as the JSON *string* the model sent), and one ``tool`` message
per result. Tool calls come back with their arguments untouched, still a string: the argument
gate parses and repairs them, not the wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from schemawire.types import ToolCall
from schemawire.wire._render import (
    Cursor,
    EntryCache,
    arguments_text,
    canonical_name,
    refuse_error_body,
    result_text,
    wire_name,
    with_options,
)
from schemawire.wire.conversation import (
    AssistantTurn,
    Entry,
    Request,
    ToolOutputs,
    ToolRef,
    UserText,
    WireFormat,
)

__all__ = ["WIRE", "ChatCompletions", "accumulate"]

API = "openai.chat"


class ChatCompletions:
    """The Chat Completions API as a `WireFormat`."""

    name: str = API
    target: str = API

    def body(self, request: Request) -> dict[str, Any]:
        """The request body: ``model``, ``messages``, ``tools`` (when there are any),
        ``response_format`` (the output schema's payload, when given), then the options.

        Raises:
            UsageError: an option names a member the request sets.
        """
        body: dict[str, Any] = {"model": request.model, "messages": _messages(request)}
        if request.tools:
            body["tools"] = [tool.payload for tool in request.tools]
        if request.output_schema is not None:
            body["response_format"] = request.output_schema
        return with_options(body, request.options)

    def turn(self, body: Any, tools: Sequence[ToolRef]) -> AssistantTurn:
        """The first choice's message: text, tool calls (names canonical), finish reason, usage.

        Raises:
            InputError: the body is not a chat completion.
        """
        return _read_turn(Cursor(body, f"<{API} response>"), tools)


WIRE: WireFormat = ChatCompletions()


def _messages(request: Request) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if request.system is not None:
        messages.append({"role": "system", "content": request.system})
    messages.extend(_RENDERED.render_all(request.conversation, request.tools, _entry))
    return messages


_RENDERED = EntryCache()


def _entry(entry: Entry, before: Entry | None, tools: Sequence[ToolRef]) -> list[dict[str, Any]]:
    if isinstance(entry, UserText):
        return [{"role": "user", "content": entry.text}]
    if isinstance(entry, AssistantTurn):
        return [_assistant_message(entry, tools)]
    return _tool_messages(entry)


def _assistant_message(turn: AssistantTurn, tools: Sequence[ToolRef]) -> dict[str, Any]:
    """The assistant's message rebuilt from the turn, under the names the model knows.
    ``content`` is required unless there are tool calls, so an empty turn sends ``""``."""
    message: dict[str, Any] = {"role": "assistant"}
    if turn.text is not None or not turn.tool_calls:
        message["content"] = turn.text or ""
    if turn.tool_calls:
        message["tool_calls"] = [_tool_call(call, tools) for call in turn.tool_calls]
    return message


def _tool_call(call: ToolCall, tools: Sequence[ToolRef]) -> dict[str, Any]:
    function = {"name": wire_name(call.name, tools), "arguments": arguments_text(call.arguments)}
    return {"id": call.call_id, "type": "function", "function": function}


def _tool_messages(outputs: ToolOutputs) -> list[dict[str, Any]]:
    return [
        {"role": "tool", "tool_call_id": result.call_id, "content": result_text(result)}
        for result in outputs.results
    ]


def _read_turn(root: Cursor, tools: Sequence[ToolRef]) -> AssistantTurn:
    refuse_error_body(root, "choices")
    if not root.at("choices").array():
        raise root.at("choices").error("at least one choice")
    choice = root.at("choices").at(0)
    message = choice.at("message")
    return AssistantTurn(
        text=message.at("content").optional_string(),
        tool_calls=tuple(_read_call(call, tools) for call in message.at("tool_calls").items()),
        stop=choice.at("finish_reason").optional_string(),
        raw=message.object(),
        usage=root.at("usage").optional_object() or {},
    )


def _read_call(call: Cursor, tools: Sequence[ToolRef]) -> ToolCall:
    if call.at("type").optional_string() not in (None, "function"):
        raise call.at("type").error('"function" (schemawire sends only function tools)')
    function = call.at("function")
    return ToolCall(
        call_id=call.at("id").string(),
        name=canonical_name(function.at("name").string(), tools),
        arguments=function.at("arguments").string(),
        provider=API,
    )


# --- streaming ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _CallParts:
    """One streamed tool call: its id and name arrive once, its arguments in fragments."""

    call_id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list[str])

    def to_json(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": "".join(self.arguments)}
        return {"id": self.call_id, "type": "function", "function": function}


@dataclass(slots=True)
class _Stream:
    """What the chunks said so far about the first choice."""

    text: list[str] = field(default_factory=list[str])
    calls: dict[int, _CallParts] = field(default_factory=dict[int, _CallParts])
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None

    def add(self, chunk: Cursor) -> None:
        chunk.object()
        refuse_error_body(chunk, "choices")
        for choice in chunk.at("choices").items():
            if choice.at("index").present and choice.at("index").integer() != 0:
                continue  # only the first choice makes the turn, as in `turn`
            self._add_delta(choice.at("delta"))
            self.finish_reason = choice.at("finish_reason").optional_string() or self.finish_reason
        self.usage = chunk.at("usage").optional_object() or self.usage

    def _add_delta(self, delta: Cursor) -> None:
        content = delta.at("content").optional_string()
        if content:
            self.text.append(content)
        for fragment in delta.at("tool_calls").items():
            self._add_call_fragment(fragment)

    def _add_call_fragment(self, fragment: Cursor) -> None:
        parts = self.calls.setdefault(fragment.at("index").integer(), _CallParts())
        parts.call_id = fragment.at("id").optional_string() or parts.call_id
        function = fragment.at("function")
        parts.name = function.at("name").optional_string() or parts.name
        arguments = function.at("arguments").optional_string()
        if arguments:
            parts.arguments.append(arguments)

    def to_json(self) -> dict[str, Any]:
        """The chat completion the chunks add up to, as the non-streamed API would send it."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self.text) if self.text else None,
        }
        if self.calls:
            message["tool_calls"] = [self.calls[i].to_json() for i in sorted(self.calls)]
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        return {"object": "chat.completion", "choices": [choice], "usage": self.usage}


def accumulate(events: Iterable[Any], tools: Sequence[ToolRef] = ()) -> AssistantTurn:
    """The turn that streamed ``chat.completion.chunk`` events add up to.

    Each tool call's id and name come in its first fragment and its arguments in pieces,
    all under the call's ``index``; they are joined in order. Usage comes in the last chunk
    when the request asked for it (``stream_options.include_usage``).

    Raises:
        InputError: an event is not a chunk, or the chunks leave a call without id or name.
    """
    stream = _Stream()
    for index, event in enumerate(events):
        stream.add(Cursor(event, f"<{API} stream>", f"/{index}"))
    return _read_turn(Cursor(stream.to_json(), f"<{API} stream, assembled>"), tools)
