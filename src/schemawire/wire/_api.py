"""What one model API is (`WireFormat`), and the skeleton every API module fills in to be one,
so that each module holds only what is particular to its API.

`WireFormat` sits here, above the `conversation` and `stream` modules whose types its methods
take and return: `stream` imports `conversation`, so `conversation` cannot name a stream reader.
`ApiWire` is a `WireFormat` made of an API's own parts: how one conversation entry renders, how
the request body is put together around the rendered messages, how a response body is read, and
its stream reader. `EventReader` is what every `StreamReader` shares: counting events (so that
an error says which one), mapping tool names back to canonical, and reading the assembled body.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from schemawire.wire._render import Cursor
from schemawire.wire.conversation import (
    AssistantTurn,
    EntryCache,
    EntryRenderer,
    Request,
    ToolRef,
)
from schemawire.wire.stream import StreamDelta, StreamReader, with_canonical_name

__all__ = [
    "ApiWire",
    "BodyBuilder",
    "EventReader",
    "TurnReader",
    "WireFormat",
    "stream_member",
]


class WireFormat(Protocol):
    """One model API: how a request is written and a response read. Pure: no I/O."""

    @property
    def name(self) -> str:
        """The API's name, such as ``"openai.chat"``."""
        ...

    @property
    def target(self) -> str:
        """The projection target its tools use, such as ``"openai.chat"``."""
        ...

    def body(self, request: Request, rendered: EntryCache | None = None) -> dict[str, Any]:
        """The JSON body of the HTTP request.

        Without ``rendered``, the body is the caller's own: it shares no object with the
        request or with any other body, so changing it changes nothing else. With
        ``rendered`` (the conversation's cache), each entry is rendered once, and for speed
        the body shares its messages and tools with the request and with the earlier bodies
        rendered through that cache: read it, copy it, never change it.

        Raises:
            UsageError: an option names a member the request sets, or the conversation cannot
                be put in this API's shape.
            JSONError: a replayed tool call's arguments are a string that is not JSON.
        """
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


BodyBuilder = Callable[[Request, list[dict[str, Any]]], dict[str, Any]]
"""Puts a request body together: the request, and its conversation's rendered messages."""
TurnReader = Callable[[Cursor, Sequence[ToolRef]], AssistantTurn]
"""Reads the turn in a response body (at the cursor), tool names mapped back to canonical."""


def stream_member(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with ``stream: true``, the way most APIs are asked for a stream."""
    return {**body, "stream": True}


@dataclass(frozen=True, slots=True)
class ApiWire:
    """One model API as a `WireFormat`, made of its own parts.

    Attributes:
        name: the API's name, which is also the projection target its tools use.
        render_entry: one conversation entry's messages (`EntryRenderer`).
        build_body: the request body around the rendered messages (`BodyBuilder`).
        read_turn: the turn in a response body (`TurnReader`).
        reader: a new stream reader, given the tools.
        ask_for_stream: a body turned into one that asks for a stream (`WireFormat.stream_body`).
    """

    name: str
    render_entry: EntryRenderer
    build_body: BodyBuilder
    read_turn: TurnReader
    reader: Callable[[Sequence[ToolRef]], StreamReader]
    ask_for_stream: Callable[[dict[str, Any]], dict[str, Any]] = stream_member

    @property
    def target(self) -> str:
        """The projection target of the API's tools: the API's own name."""
        return self.name

    def body(self, request: Request, rendered: EntryCache | None = None) -> dict[str, Any]:
        """See `WireFormat.body`: without ``rendered``, a deep copy, so that it shares nothing."""
        cache = rendered if rendered is not None else EntryCache()
        messages = cache.render_all(request.conversation, request.tools, self.render_entry)
        body = self.build_body(request, messages)
        return body if rendered is not None else copy.deepcopy(body)

    def turn(self, body: Any, tools: Sequence[ToolRef]) -> AssistantTurn:
        """See `WireFormat.turn`."""
        return self.read_turn(Cursor(body, f"<{self.name} response>"), tools)

    def stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """See `WireFormat.stream_body`."""
        return self.ask_for_stream(body)

    def stream_reader(self, tools: Sequence[ToolRef] = ()) -> StreamReader:
        """See `WireFormat.stream_reader`."""
        return self.reader(tools)


class EventReader(ABC):
    """What every API's `StreamReader` shares; a subclass reads one event (`_read_event`),
    says whether the response is `complete`, and assembles its `body`.

    Args:
        api: the API's name, for where an error is (``<anthropic stream>/3``).
        read_turn: how the API's response bodies are read (the assembled body is one).
        tools: the request's tools, to map names back to canonical (none: names stay as on
            the wire).
    """

    def __init__(self, api: str, read_turn: TurnReader, tools: Sequence[ToolRef] = ()) -> None:
        self._api, self._read_turn, self._tools = api, read_turn, tools
        self._events = 0

    def feed(self, event: Any) -> list[StreamDelta]:
        """See `StreamReader.feed`."""
        cursor = Cursor(event, f"<{self._api} stream>", f"/{self._events}")
        self._events += 1
        return [with_canonical_name(delta, self._tools) for delta in self._read_event(cursor)]

    @abstractmethod
    def _read_event(self, event: Cursor) -> list[StreamDelta]:
        """What one event adds (names as on the wire)."""

    @abstractmethod
    def body(self) -> dict[str, Any]:
        """See `StreamReader.body`."""

    def turn(self) -> AssistantTurn:
        """See `StreamReader.turn`."""
        return self._read_turn(Cursor(self.body(), f"<{self._api} stream, assembled>"), self._tools)
