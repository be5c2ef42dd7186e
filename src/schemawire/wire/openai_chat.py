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
from schemawire.wire._api import ApiWire, EventReader, WireFormat
from schemawire.wire._render import (
    Cursor,
    arguments_text,
    canonical_name,
    error_body_message,
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
)
from schemawire.wire.stream import (
    ArgumentsDelta,
    CallStarted,
    StreamDelta,
    TextDelta,
    read_all,
)

__all__ = ["WIRE", "ChatStreamReader", "accumulate"]

API = "openai.chat"


def _body(request: Request, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The request body: ``model``, ``messages`` (the system prompt first), ``tools`` (when
    there are any), ``response_format`` (the output schema's payload, when given), then the
    options.

    Raises:
        UsageError: an option names a member the request sets.
    """
    system = [] if request.system is None else [{"role": "system", "content": request.system}]
    body: dict[str, Any] = {"model": request.model, "messages": [*system, *messages]}
    if request.tools:
        body["tools"] = [tool.payload for tool in request.tools]
    if request.output_schema is not None:
        body["response_format"] = request.output_schema
    return with_options(body, request.options)


def _stream_body(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with ``stream: true`` and ``stream_options.include_usage`` (without it the
    stream carries no token counts)."""
    options = body.get("stream_options")
    given = options if isinstance(options, dict) else {}
    return {**body, "stream": True, "stream_options": {**given, "include_usage": True}}


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
    """The first choice's message: text, tool calls (names canonical), finish reason, usage.

    Raises:
        InputError: the body is not a chat completion.
    """
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
    """One tool call, its arguments the string the model sent. Missing, null or empty
    arguments (OpenRouter sends calls without any) are a call without arguments: ``"{}"``."""
    if call.at("type").optional_string() not in (None, "function"):
        raise call.at("type").error('"function" (schemawire sends only function tools)')
    function = call.at("function")
    return ToolCall(
        call_id=call.at("id").string(),
        name=canonical_name(function.at("name").string(), tools),
        arguments=function.at("arguments").optional_string() or "{}",
        provider=API,
    )


# --- streaming ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _CallParts:
    """One streamed tool call: its id and name arrive once, its arguments in fragments."""

    call_id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list[str])
    started: bool = False  # its CallStarted was reported

    def to_json(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": "".join(self.arguments)}
        return {"id": self.call_id, "type": "function", "function": function}


class ChatStreamReader(EventReader):
    """Reads streamed ``chat.completion.chunk`` events (see `schemawire.wire.stream`).

    Each tool call's id and name come in its first fragment and its arguments in pieces, all
    under the call's ``index``. Some servers send fragments without an ``index`` (Gemini's
    OpenAI-compatible endpoint): such a fragment continues the last call, unless it brings a
    new id, which starts the next one. Usage comes in the last chunk when the request asked
    for it (``stream_options.include_usage``). Only the first choice makes the turn.
    """

    def __init__(self, tools: Sequence[ToolRef] = ()) -> None:
        super().__init__(API, _read_turn, tools)
        self._envelope: dict[str, Any] = {}
        self._text: list[str] = []
        self._calls: dict[int, _CallParts] = {}
        self._last: int | None = None  # the index of the call the last fragment went to
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    @property
    def complete(self) -> bool:
        return self._finish_reason is not None

    def api_error(self, event: Any) -> str | None:
        return error_body_message(event, "choices")

    def _read_event(self, chunk: Cursor) -> list[StreamDelta]:
        refuse_error_body(chunk, "choices")
        for member in ("id", "created", "model", "system_fingerprint"):
            if member not in self._envelope and chunk.at(member).present:
                self._envelope[member] = chunk.at(member).value
        deltas: list[StreamDelta] = []
        for choice in chunk.at("choices").items():
            if choice.at("index").present and choice.at("index").integer() != 0:
                continue  # only the first choice makes the turn, as in `turn`
            deltas += self._read_delta(choice.at("delta"))
            self._finish_reason = (
                choice.at("finish_reason").optional_string() or self._finish_reason
            )
        self._usage = chunk.at("usage").optional_object() or self._usage
        return deltas

    def _read_delta(self, delta: Cursor) -> list[StreamDelta]:
        deltas: list[StreamDelta] = []
        content = delta.at("content").optional_string()
        if content:
            self._text.append(content)
            deltas.append(TextDelta(content))
        for fragment in delta.at("tool_calls").items():
            deltas += self._read_fragment(fragment)
        return deltas

    def _read_fragment(self, fragment: Cursor) -> list[StreamDelta]:
        index = self._index_of(fragment)
        parts = self._calls.setdefault(index, _CallParts())
        self._last = index
        parts.call_id = parts.call_id or fragment.at("id").optional_string()
        function = fragment.at("function")
        parts.name = parts.name or function.at("name").optional_string()
        arguments = function.at("arguments").optional_string()
        if arguments:
            parts.arguments.append(arguments)
        if parts.started:
            return [ArgumentsDelta(index, arguments)] if arguments else []
        if parts.name is None:
            return []  # reported once its name comes
        parts.started = True
        started: list[StreamDelta] = [CallStarted(index, parts.call_id, parts.name)]
        so_far = "".join(parts.arguments)
        return [*started, ArgumentsDelta(index, so_far)] if so_far else started

    def _index_of(self, fragment: Cursor) -> int:
        """The fragment's call: its ``index``; without one, the last call, or the next when
        it brings an id of its own."""
        if fragment.at("index").present:
            return fragment.at("index").integer()
        call_id = fragment.at("id").optional_string()
        last = self._calls.get(self._last) if self._last is not None else None
        if last is not None and (call_id is None or last.call_id in (None, call_id)):
            assert self._last is not None
            return self._last
        if call_id is None:
            raise fragment.at("index").error("an index, or an id that starts a tool call")
        return max(self._calls, default=-1) + 1

    def body(self) -> dict[str, Any]:
        """The chat completion the chunks add up to, as the non-streamed API would send it."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self._text) if self._text else None,
        }
        if self._calls:
            message["tool_calls"] = [self._calls[i].to_json() for i in sorted(self._calls)]
        choice = {"index": 0, "message": message, "finish_reason": self._finish_reason}
        envelope = {**self._envelope, "object": "chat.completion"}
        return {**envelope, "choices": [choice], "usage": self._usage}


def accumulate(events: Iterable[Any], tools: Sequence[ToolRef] = ()) -> AssistantTurn:
    """The turn that streamed ``chat.completion.chunk`` events add up to (`ChatStreamReader`).

    Raises:
        InputError: an event is not a chunk, or is the API's error, or the chunks leave a call
            without id or name.
    """
    return read_all(ChatStreamReader(tools), events)


WIRE: WireFormat = ApiWire(API, _entry, _body, _read_turn, ChatStreamReader, _stream_body)
"""Chat Completions as a `WireFormat`."""
