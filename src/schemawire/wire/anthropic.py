"""Anthropic Messages (``POST /v1/messages``): request bodies, responses, streams.

The conversation becomes alternating ``messages``. An assistant turn that came from this API is
replayed from its own content blocks (``raw`` keeps the message), so thinking blocks and their
signatures go back unchanged; a turn from elsewhere is rebuilt as ``text`` and ``tool_use``
blocks. One turn's results go back as ONE user message of ``tool_result`` blocks, as the API
requires. Tool inputs are JSON objects both ways.

Structured Outputs: schemawire projects no Anthropic output-format target, so the request's
``output_schema`` is taken to be the JSON Schema itself (already fit for Anthropic, such as the
``input_schema`` of an ``anthropic`` projection with ``strict=True``) and sent as
``output_config.format = {"type": "json_schema", "schema": ...}``.

Tool search, client-side: a tool the host's ``search_tools`` found goes in ``tools`` with
``defer_loading: true`` (`ToolRef.deferred`), and the search's ``tool_result`` carries a
``tool_reference`` block for it beside the shortlist JSON, which loads it where the reference
is: the tools the prompt starts with, and its cache, stay as they were.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from schemawire._json import loads
from schemawire.types import ToolCall, ToolResult
from schemawire.wire._api import ApiWire, EventReader, WireFormat
from schemawire.wire._render import (
    Cursor,
    arguments_object,
    canonical_name,
    compact,
    error_event_message,
    refuse_error_body,
    result_text,
    stream_error,
    wire_name,
    with_options,
)
from schemawire.wire.conversation import (
    AssistantTurn,
    Entry,
    FoundTools,
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

__all__ = ["DEFAULT_MAX_TOKENS", "WIRE", "MessagesStreamReader", "accumulate"]

API = "anthropic"
DEFAULT_MAX_TOKENS = 1024
"""``max_tokens`` when the options do not say: the API requires it."""


def _body(request: Request, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The request body: ``model``, ``max_tokens`` (the option, or `DEFAULT_MAX_TOKENS`),
    ``system``, ``messages``, ``tools``, ``output_config.format`` (from the output schema),
    then the other options (an ``output_config`` option is merged, for ``effort``).

    Raises:
        UsageError: an option names a member the request sets.
    """
    options = dict(request.options)
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": options.pop("max_tokens", DEFAULT_MAX_TOKENS),
    }
    if request.system is not None:
        body["system"] = request.system
    body["messages"] = messages
    if request.tools:
        body["tools"] = [_tool(tool) for tool in request.tools]
    if request.output_schema is not None:
        schema_format = {"type": "json_schema", "schema": request.output_schema}
        body["output_config"] = {"format": schema_format}
    return with_options(body, options, frozenset({"output_config"}))


def _tool(tool: ToolRef) -> dict[str, Any]:
    """The tool as ``tools`` lists it: a deferred one with ``defer_loading``, so that it stays
    out of the prompt (and its cache) until a ``tool_reference`` block loads it."""
    return {**tool.payload, "defer_loading": True} if tool.deferred else tool.payload


def _entry(entry: Entry, before: Entry | None, tools: Sequence[ToolRef]) -> list[dict[str, Any]]:
    if isinstance(entry, UserText):
        return [{"role": "user", "content": entry.text}]
    if isinstance(entry, AssistantTurn):
        content = _assistant_content(entry, tools)
        # the API refuses an empty assistant message
        return [{"role": "assistant", "content": content}] if content else []
    return [{"role": "user", "content": _tool_results(entry, tools)}]


def _assistant_content(turn: AssistantTurn, tools: Sequence[ToolRef]) -> list[dict[str, Any]]:
    """The turn's own content blocks when it came from this API, without the members the API
    answers with null (requests refuse some of them); otherwise blocks rebuilt from it."""
    raw = turn.raw
    if isinstance(raw, dict) and raw.get("type") == "message":
        return [_without_nulls(block) for block in raw.get("content") or []]
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    blocks.extend(_tool_use(call, tools) for call in turn.tool_calls)
    return blocks


def _without_nulls(block: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in block.items() if value is not None}


def _tool_use(call: ToolCall, tools: Sequence[ToolRef]) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call.call_id,
        "name": wire_name(call.name, tools),
        "input": arguments_object(call.arguments, f"<arguments of {call.call_id}>"),
    }


def _tool_results(outputs: ToolOutputs, tools: Sequence[ToolRef]) -> list[dict[str, Any]]:
    return [_tool_result(result, tools) for result in outputs.results]


def _tool_result(result: ToolResult, tools: Sequence[ToolRef]) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": _result_content(result, tools),
    }
    if result.is_error:
        block["is_error"] = True
    return block


def _result_content(result: ToolResult, tools: Sequence[ToolRef]) -> str | list[dict[str, Any]]:
    """The result's text; for a tool search (`FoundTools`), the shortlist JSON as a text block
    and a client-side ``tool_reference`` block for each tool it found that the request lists
    deferred (the API loads each from ``tools``; one the model already has needs no loading)."""
    text = result_text(result)
    if not isinstance(result, FoundTools):
        return text
    listed = {tool.name: tool.projected_name for tool in tools if tool.deferred}
    references = [
        {"type": "tool_reference", "tool_name": listed[name]}
        for name in result.found
        if name in listed
    ]
    return [{"type": "text", "text": text}, *references] if references else text


def _read_turn(root: Cursor, tools: Sequence[ToolRef]) -> AssistantTurn:
    """The message's text blocks (joined), its ``tool_use`` blocks as calls (names
    canonical, input objects as sent), its stop reason and usage; ``raw`` is the message.

    Raises:
        InputError: the body is not a message.
    """
    refuse_error_body(root, "content")
    texts: list[str] = []
    calls: list[ToolCall] = []
    root.at("content").array()
    for block in root.at("content").items():
        kind = block.at("type").string()
        if kind == "text":
            texts.append(block.at("text").string())
        elif kind == "tool_use":
            calls.append(_read_call(block, tools))
    return AssistantTurn(
        text="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        stop=root.at("stop_reason").optional_string(),
        raw=root.object(),
        usage=root.at("usage").optional_object() or {},
    )


def _read_call(block: Cursor, tools: Sequence[ToolRef]) -> ToolCall:
    return ToolCall(
        call_id=block.at("id").string(),
        name=canonical_name(block.at("name").string(), tools),
        arguments=block.at("input").object(),
        provider=API,
    )


# --- streaming ---------------------------------------------------------------------------------


# delta type -> (the member of the block it streams, the member of the delta that holds it)
_PIECES = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "input_json_delta": ("input", "partial_json"),
}


class MessagesStreamReader(EventReader):
    """Reads streamed Messages events (see `schemawire.wire.stream`).

    ``message_start`` opens the message, ``content_block_start`` each block;
    ``content_block_delta`` events append text (``text_delta``), thinking and its signature,
    citations, and a tool input's JSON in fragments (``input_json_delta.partial_json``), which
    are parsed once the stream is over (no fragments: the input the block started with);
    ``message_delta`` brings the stop reason and the final output token count, and
    ``message_stop`` ends the message. ``ping`` and unknown events are skipped. The pieces of
    each block's streaming members are kept in lists and joined once, at the end, so many
    fragments cost linear time.
    """

    def __init__(self, tools: Sequence[ToolRef] = ()) -> None:
        super().__init__(API, _read_turn, tools)
        self._stopped = False
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._pieces: dict[tuple[int, str], list[str]] = {}
        self._calls: dict[int, int] = {}  # block index -> the call's place among the calls

    @property
    def complete(self) -> bool:
        return self._stopped

    def api_error(self, event: Any) -> str | None:
        return error_event_message(event)

    def _read_event(self, event: Cursor) -> list[StreamDelta]:
        kind = event.at("type").string()
        if kind == "message_start":
            self._message = copy.deepcopy(event.at("message").object())
        elif kind == "content_block_start":
            return self._start(event)
        elif kind == "content_block_delta":
            return self._delta(event)
        elif kind == "content_block_stop":
            return self._stop(event)
        elif kind == "message_delta":
            delta = event.at("delta").object()
            self._message.update(delta)
            usage = event.at("usage").optional_object() or {}
            self._message["usage"] = {**(self._message.get("usage") or {}), **usage}
            self._stopped = self._stopped or delta.get("stop_reason") is not None
        elif kind == "message_stop":
            self._stopped = True
        elif kind == "error":
            raise stream_error(event, self.api_error(event.value))
        return []

    def _start(self, event: Cursor) -> list[StreamDelta]:
        index = event.at("index").integer()
        block = self._blocks[index] = copy.deepcopy(event.at("content_block").object())
        if block.get("type") == "text":
            text = event.at("content_block").at("text").optional_string()
            return [TextDelta(text)] if text else []
        if block.get("type") != "tool_use":
            return []
        call = self._calls[index] = len(self._calls)
        started = event.at("content_block")
        name = started.at("name").string()
        return [CallStarted(call, started.at("id").optional_string(), name)]

    def _delta(self, event: Cursor) -> list[StreamDelta]:
        index = event.at("index")
        block = self._blocks.get(index.integer())
        if block is None:
            raise index.error("the index of a block a content_block_start event opened")
        delta = event.at("delta")
        kind = delta.at("type").string()
        if kind in _PIECES:
            member, holder = _PIECES[kind]
            piece = delta.at(holder).string()
            self._pieces.setdefault((index.integer(), member), []).append(piece)
            return self._reported(index.integer(), member, piece)
        if kind == "signature_delta":
            block["signature"] = delta.at("signature").string()
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.at("citation").object())
        return []

    def _reported(self, index: int, member: str, piece: str) -> list[StreamDelta]:
        if not piece:
            return []
        if member == "text":
            return [TextDelta(piece)]
        call = self._calls.get(index)
        return [ArgumentsDelta(call, piece)] if member == "input" and call is not None else []

    def _stop(self, event: Cursor) -> list[StreamDelta]:
        """A tool input that came without fragments is its starting input: reported whole."""
        index = event.at("index").integer()
        call = self._calls.get(index)
        if call is None or "".join(self._pieces.get((index, "input"), [])):
            return []
        return [ArgumentsDelta(call, compact(self._blocks[index].get("input") or {}))]

    def body(self) -> dict[str, Any]:
        """The message the events add up to, as the non-streamed API would send it. A tool's
        input is its JSON fragments joined and parsed (no fragments: the input it started
        with); text and thinking are joined onto what their block started with.

        Raises:
            JSONError: a tool input's fragments do not make JSON.
        """
        blocks = copy.deepcopy(self._blocks)
        source = f"<{API} stream, assembled>"
        for (index, member), pieces in self._pieces.items():
            text, block = "".join(pieces), blocks[index]
            if member != "input":
                block[member] = (block.get(member) or "") + text
            elif text:
                block["input"] = loads(text, source=f"{source}, input of block {index}")
        content = [blocks[i] for i in sorted(blocks)]
        return {**self._message, "type": "message", "content": content}


def accumulate(events: Iterable[Any], tools: Sequence[ToolRef] = ()) -> AssistantTurn:
    """The turn that streamed Messages events add up to (`MessagesStreamReader`).

    Raises:
        InputError: an event is malformed or names a block never opened, the stream carried an
            ``error`` event, or a tool input's fragments do not make JSON (`JSONError`).
    """
    return read_all(MessagesStreamReader(tools), events)


WIRE: WireFormat = ApiWire(API, _entry, _body, _read_turn, MessagesStreamReader)
"""Messages as a `WireFormat` (asked for a stream with ``stream: true``)."""
