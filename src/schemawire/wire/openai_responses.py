"""OpenAI Responses (``POST /v1/responses``): request bodies, responses, streams.

The conversation becomes ``input`` items. An assistant turn that came from this API is replayed
from its own output items (``raw`` keeps the whole response), so reasoning items and item ids go
back exactly as the API sent them; a turn from elsewhere is rebuilt as a message and
``function_call`` items. Results are ``function_call_output`` items matched by ``call_id``.

Tool search, client-executed (the host's ``search_form="native"``): the host's
``search_tools`` (`ToolRef.searches`) is sent as a ``{"type": "tool_search", "execution":
"client"}`` tool with its description and parameters; the model calls it with a
``tool_search_call`` item, read as a call of ``search_tools``. Every result of such a call
goes back as a ``tool_search_output`` item (never a ``function_call_output``, which the API
refuses for a search's call id): when it found tools (`FoundTools`), carrying the definitions
of those the request defers (`ToolRef.deferred`), which the API loads where the item is, so the
request's ``tools``, and the prompt cache over them, stay as they were; when it was refused,
no tools and status ``incomplete``. That item has no place for text, so the search's answer
(the shortlist JSON: scores, how complete it is, what to try when nothing matched; or the
refusal) follows the outputs as a developer message. A server-executed ``tool_search_call``
(the API's own search) is the API's.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from schemawire.types import ToolCall, ToolResult
from schemawire.wire._api import ApiWire, EventReader, WireFormat
from schemawire.wire._render import (
    Cursor,
    arguments_object,
    arguments_text,
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
    SEARCH_NAMES,
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

__all__ = ["WIRE", "ResponsesStreamReader", "accumulate"]

API = "openai.responses"


def _body(request: Request, items: list[dict[str, Any]]) -> dict[str, Any]:
    """The request body: ``model``, ``input``, ``instructions`` (the system prompt),
    ``tools``, ``text.format`` (the output schema's payload), then the options (a ``text``
    option is merged, so ``text.verbosity`` can sit beside the format).

    Raises:
        UsageError: an option names a member the request sets.
    """
    body: dict[str, Any] = {"model": request.model, "input": items}
    if request.system is not None:
        body["instructions"] = request.system
    tools = [_tool(tool) for tool in request.tools if not tool.deferred]
    if tools:
        body["tools"] = tools
    if request.output_schema is not None:
        body["text"] = {"format": request.output_schema}
    return with_options(body, request.options, frozenset({"text"}))


def _tool(tool: ToolRef) -> dict[str, Any]:
    """The tool as ``tools`` lists it: the host's search as a client-executed ``tool_search``
    (its name is the API's own: calls of it are ``tool_search_call`` items)."""
    if not tool.searches:
        return tool.payload
    search = {"type": "tool_search", "execution": "client"}
    return search | {k: tool.payload[k] for k in ("description", "parameters") if k in tool.payload}


def _entry(entry: Entry, before: Entry | None, tools: Sequence[ToolRef]) -> list[dict[str, Any]]:
    if isinstance(entry, UserText):
        return [{"role": "user", "content": entry.text}]
    if isinstance(entry, AssistantTurn):
        return _assistant_items(entry, tools)
    return _output_items(entry, before, tools)


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
    if _search(tools) == call.name:
        arguments = arguments_object(call.arguments, f"<arguments of {call.call_id}>")
        return {**_CLIENT_SEARCH_CALL, "call_id": call.call_id, "arguments": arguments}
    return {
        "type": "function_call",
        "call_id": call.call_id,
        "name": wire_name(call.name, tools),
        "arguments": arguments_text(call.arguments),
    }


_CLIENT_SEARCH_CALL = {"type": "tool_search_call", "execution": "client"}


def _search(tools: Sequence[ToolRef]) -> str | None:
    """The canonical name of the request's tool search, if it has one."""
    return next((tool.name for tool in tools if tool.searches), None)


def _output_items(
    outputs: ToolOutputs, before: Entry | None, tools: Sequence[ToolRef]
) -> list[dict[str, Any]]:
    """Each result as its item; a tool search's answer also as a developer message after them
    (`_search_note`)."""
    searches = _search_call_ids(before, tools)
    items = [_output_item(result, tools, searches) for result in outputs.results]
    items.extend(_search_note(result) for result in outputs.results if result.call_id in searches)
    return items


def _search_call_ids(before: Entry | None, tools: Sequence[ToolRef]) -> frozenset[str]:
    """The ids of the client-executed tool searches of the turn ``before`` the results: each
    is answered by a ``tool_search_output``, never a ``function_call_output`` (the API finds no
    function call of that id, and refuses the request)."""
    search = _search(tools)
    if search is None or not isinstance(before, AssistantTurn):
        return frozenset()
    return frozenset(call.call_id for call in before.tool_calls if call.name == search)


def _output_item(
    result: ToolResult, tools: Sequence[ToolRef], searches: frozenset[str]
) -> dict[str, Any]:
    """A result as its item: a tool search's as a ``tool_search_output`` (`_search_output`);
    any other, a ``function_call_output`` of its text."""
    if result.call_id in searches:
        return _search_output(result, tools)
    text = result_text(result)
    return {"type": "function_call_output", "call_id": result.call_id, "output": text}


def _search_output(result: ToolResult, tools: Sequence[ToolRef]) -> dict[str, Any]:
    """A tool search's ``tool_search_output``: when it found tools (`FoundTools`), those the
    request defers (one the model already has is not loaded twice), ``completed``; when it was
    refused, no tools, ``incomplete``."""
    if isinstance(result, FoundTools) and not result.is_error:
        deferred = {tool.name: tool.payload for tool in tools if tool.deferred}
        found = [deferred[name] for name in result.found if name in deferred]
        status = "completed"
    else:
        found, status = [], "incomplete"
    return {
        "type": "tool_search_output",
        "call_id": result.call_id,
        "execution": "client",
        "tools": found,
        "status": status,
    }


def _search_note(result: ToolResult) -> dict[str, Any]:
    """A tool search's answer as the model reads it: a ``tool_search_output`` has no place for
    text, so the shortlist JSON (scores, how complete it is, what to try when nothing matched)
    or the refusal goes in a developer message after the outputs."""
    said = "was refused" if result.is_error else "answered"
    text = f"Your {SEARCH_NAMES[API]} call {result.call_id} {said}: {result_text(result)}"
    return {"role": "developer", "content": text}


def _read_turn(root: Cursor, tools: Sequence[ToolRef]) -> AssistantTurn:
    """The response's output: the text of its messages, its function calls (names
    canonical), its status (or why it is incomplete) and usage; ``raw`` is the response.

    Raises:
        InputError: the body is not a response.
    """
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
        elif kind == "tool_search_call" and _client_search(item, tools):
            calls.append(_read_search_call(item, tools))
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
    """One function call, its arguments the string the model sent (missing, null or empty:
    a call without arguments, ``"{}"``, as in Chat Completions)."""
    return ToolCall(
        call_id=item.at("call_id").string(),
        name=canonical_name(item.at("name").string(), tools),
        arguments=item.at("arguments").optional_string() or "{}",
        provider=API,
    )


def _client_search(item: Cursor, tools: Sequence[ToolRef]) -> bool:
    """Whether a ``tool_search_call`` is the host's to answer: executed by the client, in a
    request that has the host's search tool."""
    return _search(tools) is not None and item.at("execution").optional_string() == "client"


def _read_search_call(item: Cursor, tools: Sequence[ToolRef]) -> ToolCall:
    """A client-executed ``tool_search_call``, as a call of the host's search tool; its
    arguments the object the model sent."""
    search = _search(tools)
    assert search is not None  # the caller checked
    return ToolCall(
        call_id=item.at("call_id").string(),
        name=search,
        arguments=item.at("arguments").optional_object() or {},
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
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
_ITEM_EVENTS = frozenset({"response.output_item.added", "response.output_item.done"})
_PART_EVENTS = frozenset({"response.content_part.added", "response.content_part.done"})


class ResponsesStreamReader(EventReader):
    """Reads streamed Responses events (see `schemawire.wire.stream`).

    Items are announced by ``response.output_item.added`` and finished by
    ``response.output_item.done``; in between, ``response.function_call_arguments.delta``
    fragments build a call's arguments and ``response.output_text.delta`` a message's text
    (a ``.done`` event's full value, when it comes, is authoritative). The envelope (status,
    usage) is the last ``response.*`` lifecycle event's. Values still streaming are kept in
    pieces and joined once, at the end, so a long argument in many fragments costs linear time.
    """

    def __init__(self, tools: Sequence[ToolRef] = ()) -> None:
        super().__init__(API, _read_turn, tools)
        self._final = False
        self._response: dict[str, Any] = {}
        self._items: dict[int, dict[str, Any]] = {}
        # (output index, None) -> a call's argument pieces; (output index, content index) -> text
        self._pieces: dict[tuple[int, int | None], list[str]] = {}
        self._calls: dict[int, int] = {}  # output index -> the call's place among the calls
        self._shown: set[tuple[int, int | None]] = set()  # the pieces' keys deltas reported

    @property
    def complete(self) -> bool:
        return self._final

    def api_error(self, event: Any) -> str | None:
        return error_event_message(event)

    def _read_event(self, event: Cursor) -> list[StreamDelta]:
        kind = event.at("type").string()
        if kind == "error":
            raise stream_error(event, self.api_error(event.value))
        if kind in _RESPONSE_EVENTS:
            self._response = event.at("response").object()
            self._final = self._final or kind in _FINAL_EVENTS
        elif kind in _ITEM_EVENTS:
            return self._item(event)
        elif kind in _PART_EVENTS:
            index, content_index = event.at("output_index").integer(), self._content_index(event)
            part = self._parts(event)[content_index] = dict(event.at("part").object())
            self._settle(index, content_index)
            return self._unshown_text(index, content_index, part)
        else:
            return self._piece(kind, event)
        return []

    def _item(self, event: Cursor) -> list[StreamDelta]:
        """An item announced or finished; a function call's start, the first time it is seen,
        and what it holds that no delta reported (some servers send no deltas at all)."""
        index = event.at("output_index").integer()
        given = event.at("item")
        item = self._items[index] = copy.deepcopy(given.object())
        self._settle(index, None)
        if item.get("type") == "message":
            parts = enumerate(item.get("content") or [])
            return [d for i, part in parts for d in self._unshown_text(index, i, part)]
        if item.get("type") == "tool_search_call" and item.get("execution") == "client":
            return self._search_call(index, given)
        if item.get("type") != "function_call":
            return []
        deltas: list[StreamDelta] = []
        if index not in self._calls:
            self._calls[index] = len(self._calls)
            name = given.at("name").string()
            deltas.append(
                CallStarted(self._calls[index], given.at("call_id").optional_string(), name)
            )
        return deltas + self._unshown_arguments(index, given.at("arguments").optional_string())

    def _search_call(self, index: int, given: Cursor) -> list[StreamDelta]:
        """A client-executed tool search: a call of the host's search tool, by the name the API
        gives it (``tool_search``; `with_canonical_name` maps it to the host's), its
        arguments once they are there (the item comes whole; no delta events build it)."""
        deltas: list[StreamDelta] = []
        if index not in self._calls:
            self._calls[index] = len(self._calls)
            search = SEARCH_NAMES[API]
            call_id = given.at("call_id").optional_string()
            deltas.append(CallStarted(self._calls[index], call_id, search))
        arguments = given.at("arguments").optional_object()
        return deltas + self._unshown_arguments(index, compact(arguments) if arguments else None)

    def _piece(self, kind: str, event: Cursor) -> list[StreamDelta]:
        """The deltas, and the ``.done`` values that replace them; other events (reasoning
        summaries, hosted tools' progress) are summed up by the ``output_item.done`` after."""
        key: tuple[int, int | None]
        if kind.startswith("response.function_call_arguments."):
            key, member = (self._index(event), None), "arguments"
        elif kind.startswith("response.output_text."):
            self._parts(event)  # the part must exist before its text
            key, member = (self._index(event), self._content_index(event)), "text"
        else:
            return []
        if kind.endswith(".delta"):
            piece = event.at("delta").string()
            self._pieces.setdefault(key, []).append(piece)
            return self._reported(key, piece)
        if kind.endswith(".done"):
            self._pieces.pop(key, None)
            value = self._holder(key)[member] = event.at(member).string()
            if key[1] is None:
                return self._unshown_arguments(key[0], value)
            return self._unshown_text(key[0], key[1], {"type": "output_text", "text": value})
        return []

    def _reported(self, key: tuple[int, int | None], piece: str) -> list[StreamDelta]:
        index, content_index = key
        if not piece:
            return []
        self._shown.add(key)
        if content_index is not None:
            return [TextDelta(piece)]
        call = self._calls.get(index)
        return [ArgumentsDelta(call, piece)] if call is not None else []

    def _unshown_arguments(self, index: int, arguments: str | None) -> list[StreamDelta]:
        """A call's arguments that came whole, when no delta reported any of them."""
        call = self._calls.get(index)
        if not arguments or call is None or (index, None) in self._shown:
            return []
        self._shown.add((index, None))
        return [ArgumentsDelta(call, arguments)]

    def _unshown_text(self, index: int, content_index: int, part: Any) -> list[StreamDelta]:
        """A text part that came whole, when no delta reported any of it."""
        if not isinstance(part, dict) or part.get("type") != "output_text":
            return []
        text = part.get("text")
        if not isinstance(text, str) or not text or (index, content_index) in self._shown:
            return []
        self._shown.add((index, content_index))
        return [TextDelta(text)]

    def _content_index(self, event: Cursor) -> int:
        return event.at("content_index").integer()

    def _holder(self, key: tuple[int, int | None]) -> dict[str, Any]:
        """The item (for arguments) or content part (for text) that ``key``'s pieces go to."""
        index, content_index = key
        item = self._items[index]
        return item if content_index is None else item["content"][content_index]

    def _settle(self, index: int, content_index: int | None) -> None:
        """Forget the pieces a complete item (or content part) just replaced."""
        for key in [k for k in self._pieces if k[0] == index]:
            if content_index is None or key[1] == content_index:
                del self._pieces[key]

    def _index(self, event: Cursor) -> int:
        """The event's output index, which an ``output_item.added`` must have announced."""
        index = event.at("output_index")
        if index.integer() not in self._items:
            raise index.error("the index of an item an output_item.added event announced")
        return index.integer()

    def _parts(self, event: Cursor) -> list[dict[str, Any]]:
        """The content parts of the event's message item, long enough for its index."""
        parts: list[dict[str, Any]] = self._items[self._index(event)].setdefault("content", [])
        while len(parts) <= self._content_index(event):
            parts.append({"type": "output_text", "text": "", "annotations": []})
        return parts

    def body(self) -> dict[str, Any]:
        """The response the events add up to, as the non-streamed API would send it."""
        items = copy.deepcopy(self._items)
        for (index, content_index), pieces in self._pieces.items():
            item = items[index]
            holder = item if content_index is None else item["content"][content_index]
            member = "arguments" if content_index is None else "text"
            holder[member] = (holder.get(member) or "") + "".join(pieces)
        output = [items[i] for i in sorted(items)] or self._response.get("output") or []
        return {**self._response, "object": "response", "output": output}


def accumulate(events: Iterable[Any], tools: Sequence[ToolRef] = ()) -> AssistantTurn:
    """The turn that streamed Responses events add up to (`ResponsesStreamReader`).

    Raises:
        InputError: an event is malformed or names an item never announced, the stream
            carried an ``error`` event, or the items leave a call without id or name.
    """
    return read_all(ResponsesStreamReader(tools), events)


WIRE: WireFormat = ApiWire(API, _entry, _body, _read_turn, ResponsesStreamReader)
"""Responses as a `WireFormat` (asked for a stream with ``stream: true``)."""
