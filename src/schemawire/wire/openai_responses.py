"""OpenAI Responses (``POST /v1/responses``): request bodies, responses, streams.

The conversation becomes ``input`` items. An assistant turn that came from this API is replayed
from its own output items (``raw`` keeps the whole response), so reasoning items and item ids go
back exactly as the API sent them; a turn from elsewhere is rebuilt as a message and
``function_call`` items. Results are ``function_call_output`` items matched by ``call_id``.
"""

from __future__ import annotations

import copy
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
    stream_error,
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

__all__ = ["WIRE", "Responses", "accumulate"]

API = "openai.responses"


class Responses:
    """The Responses API as a `WireFormat`."""

    name: str = API
    target: str = API

    def body(self, request: Request) -> dict[str, Any]:
        """The request body: ``model``, ``input``, ``instructions`` (the system prompt),
        ``tools``, ``text.format`` (the output schema's payload), then the options (a ``text``
        option is merged, so ``text.verbosity`` can sit beside the format).

        Raises:
            UsageError: an option names a member the request sets.
        """
        body: dict[str, Any] = {"model": request.model, "input": _input_items(request)}
        if request.system is not None:
            body["instructions"] = request.system
        if request.tools:
            body["tools"] = [tool.payload for tool in request.tools]
        if request.output_schema is not None:
            body["text"] = {"format": request.output_schema}
        return with_options(body, request.options, frozenset({"text"}))

    def turn(self, body: Any, tools: Sequence[ToolRef]) -> AssistantTurn:
        """The response's output: the text of its messages, its function calls (names
        canonical), its status (or why it is incomplete) and usage; ``raw`` is the response.

        Raises:
            InputError: the body is not a response.
        """
        return _read_turn(Cursor(body, f"<{API} response>"), tools)


WIRE: WireFormat = Responses()


def _input_items(request: Request) -> list[dict[str, Any]]:
    return _RENDERED.render_all(request.conversation, request.tools, _entry)


_RENDERED = EntryCache()


def _entry(entry: Entry, before: Entry | None, tools: Sequence[ToolRef]) -> list[dict[str, Any]]:
    if isinstance(entry, UserText):
        return [{"role": "user", "content": entry.text}]
    if isinstance(entry, AssistantTurn):
        return _assistant_items(entry, tools)
    return _output_items(entry)


def _assistant_items(turn: AssistantTurn, tools: Sequence[ToolRef]) -> list[dict[str, Any]]:
    """The turn's own output items when it came from this API (reasoning items and ids must go
    back as they were); otherwise a message and ``function_call`` items rebuilt from it."""
    raw = turn.raw
    if isinstance(raw, dict) and raw.get("object") == "response":
        return list(raw.get("output") or [])
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append({"role": "assistant", "content": turn.text})
    items.extend(_function_call(call, tools) for call in turn.tool_calls)
    return items


def _function_call(call: ToolCall, tools: Sequence[ToolRef]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call.call_id,
        "name": wire_name(call.name, tools),
        "arguments": arguments_text(call.arguments),
    }


def _output_items(outputs: ToolOutputs) -> list[dict[str, Any]]:
    return [
        {"type": "function_call_output", "call_id": result.call_id, "output": result_text(result)}
        for result in outputs.results
    ]


def _read_turn(root: Cursor, tools: Sequence[ToolRef]) -> AssistantTurn:
    refuse_error_body(root, "output")
    texts: list[str] = []
    calls: list[ToolCall] = []
    root.at("output").array()
    for item in root.at("output").items():
        kind = item.at("type").string()
        if kind == "message":
            texts.extend(_message_text(item))
        elif kind == "function_call":
            calls.append(_read_call(item, tools))
    return AssistantTurn(
        text="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        stop=root.at("incomplete_details").at("reason").optional_string()
        or root.at("status").optional_string(),
        raw=root.object(),
        usage=root.at("usage").optional_object() or {},
    )


def _message_text(item: Cursor) -> list[str]:
    """The ``output_text`` parts of a message item (a refusal part is not the answer)."""
    return [
        part.at("text").string()
        for part in item.at("content").items()
        if part.at("type").string() == "output_text"
    ]


def _read_call(item: Cursor, tools: Sequence[ToolRef]) -> ToolCall:
    return ToolCall(
        call_id=item.at("call_id").string(),
        name=canonical_name(item.at("name").string(), tools),
        arguments=item.at("arguments").string(),
        provider=API,
    )


# --- streaming ---------------------------------------------------------------------------------

_RESPONSE_EVENTS = frozenset(
    {
        "response.created",
        "response.in_progress",
        "response.completed",
        "response.incomplete",
        "response.failed",
    }
)
_ITEM_EVENTS = frozenset({"response.output_item.added", "response.output_item.done"})
_PART_EVENTS = frozenset({"response.content_part.added", "response.content_part.done"})


@dataclass(slots=True)
class _Stream:
    """The response the events described so far: its envelope, its output items, and the
    pieces of the values still streaming (kept in lists and joined once, at the end, so a long
    argument in many fragments costs linear time)."""

    response: dict[str, Any] = field(default_factory=dict[str, Any])
    items: dict[int, dict[str, Any]] = field(default_factory=dict[int, dict[str, Any]])
    # (output index, None) -> a call's argument pieces; (output index, content index) -> text
    pieces: dict[tuple[int, int | None], list[str]] = field(
        default_factory=dict[tuple[int, int | None], list[str]]
    )

    def add(self, event: Cursor) -> None:
        kind = event.at("type").string()
        if kind in _RESPONSE_EVENTS:
            self.response = event.at("response").object()
        elif kind in _ITEM_EVENTS:
            index = event.at("output_index").integer()
            self.items[index] = copy.deepcopy(event.at("item").object())
            self._settle(index, None)
        elif kind in _PART_EVENTS:
            index = event.at("content_index").integer()
            self._parts(event)[index] = dict(event.at("part").object())
            self._settle(event.at("output_index").integer(), index)
        elif kind == "error":
            raise stream_error(event, event.at("message").optional_string())
        else:
            self._add_piece(kind, event)

    def _add_piece(self, kind: str, event: Cursor) -> None:
        """The deltas, and the ``.done`` values that replace them; other events (reasoning
        summaries, hosted tools' progress) are summed up by the ``output_item.done`` after."""
        key: tuple[int, int | None]
        if kind.startswith("response.function_call_arguments."):
            key, member = (self._index(event), None), "arguments"
        elif kind.startswith("response.output_text."):
            self._parts(event)  # the part must exist before its text
            key, member = (self._index(event), event.at("content_index").integer()), "text"
        else:
            return
        if kind.endswith(".delta"):
            self.pieces.setdefault(key, []).append(event.at("delta").string())
        elif kind.endswith(".done"):
            self.pieces.pop(key, None)
            self._holder(key)[member] = event.at(member).string()

    def _holder(self, key: tuple[int, int | None]) -> dict[str, Any]:
        """The item (for arguments) or content part (for text) that ``key``'s pieces go to."""
        index, content_index = key
        item = self.items[index]
        return item if content_index is None else item["content"][content_index]

    def _settle(self, index: int, content_index: int | None) -> None:
        """Forget the pieces a complete item (or content part) just replaced."""
        for key in [k for k in self.pieces if k[0] == index]:
            if content_index is None or key[1] == content_index:
                del self.pieces[key]

    def _index(self, event: Cursor) -> int:
        """The event's output index, which an ``output_item.added`` must have announced."""
        index = event.at("output_index")
        if index.integer() not in self.items:
            raise index.error("the index of an item an output_item.added event announced")
        return index.integer()

    def _parts(self, event: Cursor) -> list[dict[str, Any]]:
        """The content parts of the event's message item, long enough for its index."""
        parts: list[dict[str, Any]] = self.items[self._index(event)].setdefault("content", [])
        while len(parts) <= event.at("content_index").integer():
            parts.append({"type": "output_text", "text": "", "annotations": []})
        return parts

    def to_json(self) -> dict[str, Any]:
        """The response the events add up to, as the non-streamed API would send it."""
        for key, pieces in self.pieces.items():
            member = "arguments" if key[1] is None else "text"
            holder = self._holder(key)
            holder[member] = (holder.get(member) or "") + "".join(pieces)
        output = [self.items[i] for i in sorted(self.items)] or self.response.get("output") or []
        return {**self.response, "object": "response", "output": output}


def accumulate(events: Iterable[Any], tools: Sequence[ToolRef] = ()) -> AssistantTurn:
    """The turn that streamed Responses events add up to.

    Items are announced by ``response.output_item.added`` and finished by
    ``response.output_item.done``; in between, ``response.function_call_arguments.delta``
    fragments build a call's arguments and ``response.output_text.delta`` a message's text
    (a ``.done`` event's full value, when it comes, is authoritative). The envelope (status,
    usage) is the last ``response.*`` lifecycle event's.

    Raises:
        InputError: an event is malformed or names an item never announced, the stream
            carried an ``error`` event, or the items leave a call without id or name.
    """
    stream = _Stream()
    for index, event in enumerate(events):
        stream.add(Cursor(event, f"<{API} stream>", f"/{index}"))
    return _read_turn(Cursor(stream.to_json(), f"<{API} stream, assembled>"), tools)
