"""A call's arguments as the client sent them, where the SDK's parse would hide what was wrong.

The SDK parses every message before a handler sees it, and its parser keeps the last value of a
repeated key: ``{"order_id": "A", "order_id": "B"}`` reaches the handler as ``{"order_id":
"B"}``; it also takes ``NaN`` and ``1e999`` as numbers. The argument gate refuses all of these
in a JSON text, so the server hands it the text: for Streamable HTTP from the request's body
(the SDK keeps it), for stdio from the line (`SentLines` reads stdin for the SDK and notes what
each line held).

Deciding costs one pass at orjson's speed (`reads_plainly`) for the usual message, which
holds nothing of the kind. Only a message that fails it is looked into: the C scanner of the
standard library finds where ``params.arguments`` starts and ends (a message is free to hold
``NaN`` elsewhere), and when the arguments' own text fails the same test, that text is what the
gate checks.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from starlette.requests import Request

from schemawire._json import reads_plainly
from schemawire.mcp._offload import off_loop

__all__ = ["SentLines", "arguments_as_sent", "arguments_to_check", "stdin_lines"]

_KEPT = 256  # stdio calls whose text is kept until their handler takes it
_SPACE = re.compile(r"[ \t\n\r]*")
# Finds where a value ends: numbers and constants stay text, so no value makes it raise but
# nesting past the interpreter's recursion limit (which the SDK refuses too).
_SKIPPER = json.JSONDecoder(parse_int=len, parse_float=len, parse_constant=len)
_VALUES = json.JSONDecoder()  # reads the few values a decision needs (the id, the method)


def arguments_to_check(message: bytes | str) -> str | None:
    """The text of ``params.arguments`` in a JSON-RPC message, exactly as sent, when the SDK's
    parse of it would hide what the gate refuses (a repeated key at any depth, ``NaN``,
    ``Infinity``); None when it holds none of that, or when the message is not JSON at all
    (the SDK then says so)."""
    raw = message.encode("utf-8", "surrogatepass") if isinstance(message, str) else message
    if reads_plainly(raw):
        return None
    found = _sent_fields(raw)
    return found[2] if found is not None else None


def _sent_fields(raw: bytes) -> tuple[Any, Any, str | None] | None:
    """The ``method``, ``id`` and (when it is not plain JSON) ``params.arguments`` text of a
    message that is not plain JSON; None when it is not a JSON object at all."""
    try:
        text = raw.decode("utf-8")
        members, params, _ = _members(text, _after_space(text, 0), opening="params")
        method, request_id = (_value(text, members.get(name)) for name in ("method", "id"))
    except (ValueError, RecursionError):  # not JSON (or an id of 5,000 digits): the SDK says so
        return None
    arguments = params.get("arguments")
    if arguments is None:
        return method, request_id, None
    sent = text[arguments[0] : arguments[1]]
    return method, request_id, None if reads_plainly(sent.encode("utf-8")) else sent


_Spans = dict[str, tuple[int, int]]


def _members(text: str, start: int, opening: str | None = None) -> tuple[_Spans, _Spans, int]:
    """Where the value of each member of the object at ``start`` starts and ends (by key; the
    last of a repeated key, as the SDK takes it), the same for the members of the object under
    key ``opening``, and where the object ends. Each value is scanned once.

    Raises:
        ValueError: there is no JSON object at ``start``.
        RecursionError: a value nests deeper than the scanner goes.
    """
    if text[start : start + 1] != "{":
        raise ValueError("not an object")
    spans: _Spans = {}
    opened: _Spans = {}
    pos = _after_space(text, start + 1)
    if text[pos : pos + 1] == "}":
        return spans, opened, pos + 1
    while True:
        key, pos = _SKIPPER.raw_decode(text, pos)
        pos = _after_space(text, pos)
        if not isinstance(key, str) or text[pos : pos + 1] != ":":
            raise ValueError("not a member")
        value_start = _after_space(text, pos + 1)
        if key == opening and text[value_start : value_start + 1] == "{":
            opened, _, value_end = _members(text, value_start)
        else:
            opened = {} if key == opening else opened
            value_end = _SKIPPER.raw_decode(text, value_start)[1]
        spans[key] = (value_start, value_end)
        pos = _after_space(text, value_end)
        if text[pos : pos + 1] == "}":
            return spans, opened, pos + 1
        if text[pos : pos + 1] != ",":
            raise ValueError("not an object")
        pos = _after_space(text, pos + 1)


def _after_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def _value(text: str, span: tuple[int, int] | None) -> Any:
    """The value at ``span`` (None for none).

    Raises:
        ValueError: it is not JSON the standard library can read (an integer of 5,000 digits).
    """
    return _VALUES.raw_decode(text, span[0])[0] if span is not None else None


class SentLines:
    """Reads stdin, line by line, for the SDK's stdio transport (as its ``stdin``), and keeps
    the arguments text of each ``tools/call`` line that the SDK's parse would hide a problem of,
    for its handler."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines
        self._texts: dict[Any, str] = {}  # request id -> arguments text
        self.closed = False  # set once stdin is given back: nothing reads it any more

    def __aiter__(self) -> SentLines:
        return self

    async def __anext__(self) -> str:
        if self.closed:
            raise StopAsyncIteration
        line: str = await self._lines.readline()
        if not line:
            raise StopAsyncIteration
        await off_loop(self._note, line, weight=line)
        return line

    def _note(self, line: str) -> None:
        """Keep the arguments text of ``line`` if it is a ``tools/call`` that needs it. Never
        raises: a line that is not JSON is the SDK's to answer."""
        raw = line.encode("utf-8", "surrogatepass")
        if reads_plainly(raw):
            return
        found = _sent_fields(raw)
        if found is None:
            return
        method, request_id, text = found
        if text is not None and method == "tools/call" and isinstance(request_id, int | str):
            self._texts[request_id] = text
            while len(self._texts) > _KEPT:
                del self._texts[next(iter(self._texts))]

    async def take(self, request_id: Any, parsed: Any) -> str | None:
        """The text of request ``request_id``'s arguments, if its line needed it and the SDK
        parsed it as ``parsed`` (an id reused since gets nothing)."""
        text = self._texts.pop(request_id, None)
        if text is None:
            return None
        return text if await off_loop(_parsed_as, text, parsed, weight=text) else None


def _parsed_as(text: str, parsed: Any) -> bool:
    """Whether ``text``, parsed as the SDK parses (the last value of a repeated key wins), gives
    ``parsed``; True when that cannot be told (the gate then refuses the text). Compared as
    written, where ``NaN`` equals ``NaN``."""
    try:
        return json.dumps(_VALUES.decode(text)) == json.dumps(parsed)
    except (ValueError, TypeError, RecursionError):
        return True


async def arguments_as_sent(
    request: Any, arguments: Any, request_id: Any, lines: SentLines | None
) -> Any:
    """A call's arguments for the gate: the text sent, when the SDK's parse hides what the gate
    refuses, else ``arguments`` as the SDK parsed them. ``request`` is the HTTP request the call
    came in (None on stdio)."""
    if isinstance(request, Request):
        body = await request.body()  # read already, and kept, by the SDK
        text = await off_loop(arguments_to_check, body, weight=body)
    else:
        text = await lines.take(request_id, arguments) if lines is not None else None
    return text if text is not None else arguments


@asynccontextmanager
async def stdin_lines() -> AsyncIterator[SentLines]:
    """Stdin, as `SentLines`, while the block runs. Meanwhile descriptor 0 reads the null
    device (as the SDK's own stdio transport arranges), so a tool's child processes cannot take
    the protocol's bytes. Afterwards descriptor 0 reads stdin again and the private copy is
    closed."""
    private = os.dup(0)  # not inherited by children
    quiet = os.open(os.devnull, os.O_RDONLY)
    os.dup2(quiet, 0)
    os.close(quiet)
    lines: SentLines | None = None
    try:
        # closefd=False: the descriptor is closed below, once nothing reads it.
        raw = open(private, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        lines = SentLines(anyio.wrap_file(raw))
        yield lines
    finally:
        if lines is not None:
            lines.closed = True
        os.dup2(private, 0)
        os.close(private)
