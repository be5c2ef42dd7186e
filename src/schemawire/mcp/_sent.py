"""A call's arguments as the client sent them, where the SDK's parse would hide what was wrong.

The SDK parses every message before a handler sees it, and its parser keeps the last value of a
repeated key: ``{"order_id": "A", "order_id": "B"}`` reaches the handler as ``{"order_id":
"B"}``. The argument gate refuses duplicate keys in a JSON text, so the server hands it the text:
for Streamable HTTP from the request's body (the SDK keeps it), for stdio from the line
(`SentLines` reads stdin for the SDK and notes what each line held).

Only a ``tools/call`` whose ``params.arguments`` repeats a key, at any depth, takes this path;
every other message is parsed once more (with orjson: fast) and goes on as the SDK parsed it.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from starlette.requests import Request

from schemawire._json import Limits, loads
from schemawire._jsonpos import iter_nodes
from schemawire.errors import ErrorCode, JSONError
from schemawire.mcp._offload import off_loop

__all__ = ["SentLines", "arguments_as_sent", "duplicated_arguments", "stdin_lines"]

_ARGUMENTS = "/params/arguments"
_MESSAGE_LIMITS = Limits(max_bytes=1 << 30, max_depth=250)  # the gate applies its own limits
_KEPT = 256  # stdio calls whose text is kept until their handler takes it


def duplicated_arguments(message: bytes | str) -> str | None:
    """The text of ``params.arguments`` in a JSON-RPC message when it repeats a key (at any
    depth), exactly as sent; None when it does not, or when the message is not JSON at all
    (the SDK then says so)."""
    try:
        loads(message, limits=_MESSAGE_LIMITS)
        return None
    except JSONError as error:
        if error.code != ErrorCode.JSON_DUPLICATE_KEY:
            return None
    text = message.decode("utf-8") if isinstance(message, bytes) else message
    start = _repeating_arguments(text)
    if start is None:
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return text[start:end]


def _repeating_arguments(text: str) -> int | None:
    """Where ``params.arguments`` starts in ``text``, if a key repeats inside it."""
    start = None
    for node in iter_nodes(text):
        if node.pointer == _ARGUMENTS:
            start = node.offset
        elif node.duplicate and node.pointer.startswith(_ARGUMENTS + "/") and start is not None:
            return start
    return None


class SentLines:
    """Reads stdin, line by line, for the SDK's stdio transport (as its ``stdin``), and keeps
    the arguments text of each ``tools/call`` line that repeats a key, for its handler."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines
        self._texts: dict[Any, str] = {}  # request id -> arguments text

    def __aiter__(self) -> SentLines:
        return self

    async def __anext__(self) -> str:
        line: str = await self._lines.readline()
        if not line:
            raise StopAsyncIteration
        await off_loop(self._note, line, weight=line)
        return line

    def _note(self, line: str) -> None:
        text = duplicated_arguments(line)
        if text is None:
            return
        message = json.loads(line)  # the last value of a repeated key wins, as in the SDK
        if message.get("method") == "tools/call" and isinstance(message.get("id"), int | str):
            self._texts[message["id"]] = text
            while len(self._texts) > _KEPT:
                del self._texts[next(iter(self._texts))]

    def take(self, request_id: Any, parsed: Any) -> str | None:
        """The text of request ``request_id``'s arguments, if its line repeated a key and the
        SDK parsed it as ``parsed`` (an id reused since gets nothing)."""
        text = self._texts.pop(request_id, None)
        if text is None or json.loads(text) != parsed:
            return None
        return text


async def arguments_as_sent(
    request: Any, arguments: Any, request_id: Any, lines: SentLines | None
) -> Any:
    """A call's arguments for the gate: the text sent, when it repeats a key, else ``arguments``
    as the SDK parsed them. ``request`` is the HTTP request the call came in (None on stdio)."""
    if isinstance(request, Request):
        body = await request.body()  # read already, and kept, by the SDK
        text = await off_loop(duplicated_arguments, body, weight=body)
    else:
        text = lines.take(request_id, arguments) if lines is not None else None
    return text if text is not None else arguments


@asynccontextmanager
async def stdin_lines() -> AsyncIterator[SentLines]:
    """Stdin, as `SentLines`, while the block runs. Meanwhile descriptor 0 reads the null
    device (as the SDK's own stdio transport arranges), so a tool's child processes cannot take
    the protocol's bytes."""
    private = os.dup(0)  # not inherited by children
    quiet = os.open(os.devnull, os.O_RDONLY)
    os.dup2(quiet, 0)
    os.close(quiet)
    try:
        # closefd=False: a worker thread may still be blocked reading it when the block ends.
        raw = open(private, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        yield SentLines(anyio.wrap_file(raw))
    finally:
        os.dup2(private, 0)
