"""Streamed responses, read as they arrive: what each event adds, and the turn they make.

Every API module has a `StreamReader` (`WireFormat.stream_reader`). It is fed the stream's
events one at a time (each SSE ``data`` payload, parsed) and says what each one added:

- `TextDelta`: more of the answer's text;
- `CallStarted`: a tool call began (its id, when the API sent one, and its name);
- `ArgumentsDelta`: more of a call's arguments, as JSON text; a call's pieces, joined, are its
  arguments. (Gemini sends a call's arguments whole, as an object: one piece, its compact JSON.)

At the end, `StreamReader.body` is the response the events add up to, exactly as the
non-streamed API would have sent it (so traces and evals read streamed and plain responses
alike), and `StreamReader.turn` reads it. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from schemawire.wire._render import canonical_name
from schemawire.wire.conversation import AssistantTurn, ToolRef

__all__ = [
    "ArgumentsDelta",
    "CallStarted",
    "StreamDelta",
    "StreamReader",
    "TextDelta",
    "read_all",
    "with_canonical_name",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More of the answer's text (thoughts and reasoning are not the answer)."""

    text: str


@dataclass(frozen=True, slots=True)
class CallStarted:
    """A tool call began.

    Attributes:
        index: its place among the turn's calls, from 0 (`ArgumentsDelta.index` names it).
        call_id: its id, when the API sent one with its start.
        name: the tool's name: on the wire, or canonical when the reader was given the tools.
    """

    index: int
    call_id: str | None
    name: str


@dataclass(frozen=True, slots=True)
class ArgumentsDelta:
    """More of a call's arguments, as JSON text (the call's pieces, joined, are its arguments).

    Attributes:
        index: the call's place among the turn's calls (its `CallStarted.index`).
        text: the next piece.
    """

    index: int
    text: str


StreamDelta = TextDelta | CallStarted | ArgumentsDelta


class StreamReader(Protocol):
    """Reads one streamed response, an event at a time. Pure: no I/O."""

    @property
    def complete(self) -> bool:
        """Whether the events so far include the one that ends the response (a finish reason,
        ``message_stop``, ``response.completed``...): a stream that ends before it was cut."""
        ...

    def feed(self, event: Any) -> list[StreamDelta]:
        """Read the next event; what it added, in order.

        Raises:
            InputError: the event is malformed, or is the API's own error event (then
                `api_error` says so).
        """
        ...

    def api_error(self, event: Any) -> str | None:
        """The API's message when ``event`` is the API's error event (a stream reports a
        failure this way once it has begun), else None."""
        ...

    def body(self) -> dict[str, Any]:
        """The response the events so far add up to, as the non-streamed API would send it.

        Raises:
            InputError: the events leave a value that cannot be put together (a tool input
                whose fragments are not JSON).
        """
        ...

    def turn(self) -> AssistantTurn:
        """The turn the events add up to (the same as `WireFormat.turn` of `body`).

        Raises:
            InputError: the events leave a call without id or name, or `body` cannot be made.
        """
        ...


def read_all(reader: StreamReader, events: Iterable[Any]) -> AssistantTurn:
    """Feed every event to ``reader``; the turn they make.

    Raises:
        InputError: an event is malformed or the API's error, or the turn cannot be read.
    """
    for event in events:
        reader.feed(event)
    return reader.turn()


def with_canonical_name(delta: StreamDelta, tools: Sequence[ToolRef]) -> StreamDelta:
    """``delta`` with a started call's name mapped back to its canonical name (a reader given
    no tools reports names as they are on the wire)."""
    if isinstance(delta, CallStarted):
        return dataclasses.replace(delta, name=canonical_name(delta.name, tools))
    return delta
