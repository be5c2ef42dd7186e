"""Server-sent events (the WHATWG ``text/event-stream`` format) read from bytes as they arrive.

Every model API streams this way: ``event:`` and ``data:`` lines, an empty line ending each
event. `EventParser` is fed the body in whatever pieces the network delivers: a piece may end
inside a line, between a CR and its LF, or inside a UTF-8 character. It follows the standard's
parsing rules: lines end in CRLF, LF or CR; a line starting with ``:`` is a comment (servers
send them to keep a connection alive); ``field: value`` drops one space after the colon; the
``data`` lines of one event are joined with newlines; an event with no data is not dispatched;
a leading byte-order mark is skipped. Pure: no I/O.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from schemawire.errors import ErrorCode, InputError

__all__ = ["DONE", "MAX_EVENT_SIZE", "Event", "EventParser"]

DONE = "[DONE]"
"""The data OpenAI's APIs (and the servers compatible with them) end a stream with: not JSON."""
MAX_EVENT_SIZE = 16 * 1024 * 1024
"""The default bound on one event, in characters (its lines as they arrive), so that a stream
that never ends an event cannot grow without limit."""

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event.

    Attributes:
        data: its ``data`` lines joined with newlines.
        event: its ``event`` field (``"message"`` when it has none).
        id: the last event id the stream set, if any.
    """

    data: str
    event: str = "message"
    id: str | None = None


class EventParser:
    """Turns the bytes of an event stream into events, incrementally.

    Example:
        >>> parser = EventParser()
        >>> parser.feed(b"event: ping\\ndata: {}\\n\\nda")
        [Event(data='{}', event='ping', id=None)]
        >>> parser.feed(b"ta: 1\\r\\n\\r\\n")
        [Event(data='1', event='message', id=None)]
    """

    def __init__(self, max_event_size: int = MAX_EVENT_SIZE, source: str = "<stream>") -> None:
        """
        Args:
            max_event_size: the most characters one event may hold, counted as they arrive.
            source: what the stream is, for errors.
        """
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._max = max_event_size
        self._source = source
        self._started = False  # past the byte-order mark, if any
        self._after_cr = False  # the last character read was a CR: an LF next belongs to it
        self._line: list[str] = []  # the line being read, in pieces
        self._line_size = 0
        self._event_size = 0  # characters of the event's complete lines
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None

    @property
    def pending(self) -> bool:
        """Whether an event has begun that no empty line has ended yet."""
        return bool(self._line) or bool(self._data) or bool(self._event)

    def feed(self, chunk: bytes) -> list[Event]:
        """The events that ``chunk`` completes, in order.

        Raises:
            InputError: the bytes are not UTF-8, or one event outgrows ``max_event_size``.
        """
        return self._read(self._decode(chunk, final=False))

    def close(self) -> None:
        """The end of the stream. An event that no empty line ended is not dispatched (the
        standard's rule): `pending` says whether there was one.

        Raises:
            InputError: the stream ended inside a UTF-8 character.
        """
        self._decode(b"", final=True)

    def _decode(self, chunk: bytes, *, final: bool) -> str:
        try:
            text = self._decoder.decode(chunk, final)
        except UnicodeDecodeError as error:
            message = f"the event stream is not UTF-8: {error.reason}"
            raise InputError(ErrorCode.JSON_INVALID_UTF8, message, source=self._source) from None
        if not self._started and text:
            self._started = True
            text = text.removeprefix(_BOM)
        return text

    def _read(self, text: str) -> list[Event]:
        if not text:
            return []  # nothing read: a CR before it may still meet its LF in the next piece
        events: list[Event] = []
        start = 1 if self._after_cr and text.startswith("\n") else 0  # a CRLF split in two
        self._after_cr = False
        while start < len(text):
            end = _line_end(text, start)
            if end < 0:
                self._line.append(text[start:])
                self._line_size += len(text) - start
                self._check_size()
                break
            self._line.append(text[start:end])
            event = self._take_line("".join(self._line))
            if event is not None:
                events.append(event)
            start = _next_line(text, end)
            self._after_cr = start > len(text)  # a CR ended the text: its LF may come next
        return events

    def _take_line(self, line: str) -> Event | None:
        self._line, self._line_size = [], 0
        if not line:
            return self._dispatch()
        self._event_size += len(line)
        self._check_size()
        if not line.startswith(":"):  # a comment: servers send them to keep the line open
            self._field(*_split_field(line))
        return None

    def _field(self, name: str, value: str) -> None:
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value or None  # an empty id resets it
        # "retry" sets the reconnection delay of a browser's EventSource; nothing here reconnects

    def _dispatch(self) -> Event | None:
        data, event = self._data, self._event
        self._data, self._event, self._event_size = [], "", 0
        if not data:
            return None
        return Event("\n".join(data), event or "message", self._last_id)

    def _check_size(self) -> None:
        if self._event_size + self._line_size > self._max:
            message = f"an event of the stream passed {self._max} characters"
            raise InputError(ErrorCode.JSON_TOO_LARGE, message, source=self._source)


def _line_end(text: str, start: int) -> int:
    """Where the line starting at ``start`` ends (its CR or LF), or -1 when it goes on."""
    cr, lf = text.find("\r", start), text.find("\n", start)
    if cr < 0:
        return lf
    return cr if lf < 0 else min(cr, lf)


def _next_line(text: str, end: int) -> int:
    """Where the next line starts after the line end at ``end``; ``len(text) + 1`` when a CR
    is the last character (the caller must then skip an LF that opens the next chunk)."""
    if text[end] == "\n":
        return end + 1
    if end + 1 < len(text):
        return end + 2 if text[end + 1] == "\n" else end + 1
    return end + 2


def _split_field(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if colon and value.startswith(" "):
        value = value[1:]
    return name, value
