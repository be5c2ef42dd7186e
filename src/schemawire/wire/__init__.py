"""Pure translation between the host's conversation and each model API: request bodies out,
assistant turns (text and tool calls) back, streamed responses read as they arrive. No I/O.

- `openai_chat` (Chat Completions), `openai_responses` (Responses), `anthropic` (Messages),
  `gemini` (generateContent): each a `WireFormat`, with a `StreamReader` for its streams.
- `conversation`: the conversation every API renders, and `EntryCache`, one conversation's
  renderings, which its owner passes to `WireFormat.body`.
- `stream`: what a streamed event adds (`TextDelta`, `CallStarted`, `ArgumentsDelta`).
- `_api`: `WireFormat`, what one model API is, and the skeleton each API module fills in.
- `sse`: server-sent events parsed from bytes as they arrive.
"""

from __future__ import annotations

import importlib

from schemawire._json import quoted
from schemawire.errors import UsageError
from schemawire.wire._api import WireFormat
from schemawire.wire.conversation import (
    SEARCH_NAMES,
    AssistantTurn,
    Entry,
    EntryCache,
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
    StreamReader,
    TextDelta,
)

__all__ = [
    "APIS",
    "SEARCH_NAMES",
    "ArgumentsDelta",
    "AssistantTurn",
    "CallStarted",
    "Entry",
    "EntryCache",
    "FoundTools",
    "Request",
    "StreamDelta",
    "StreamReader",
    "TextDelta",
    "ToolOutputs",
    "ToolRef",
    "UserText",
    "WireFormat",
    "wire_format",
]

# API name -> the module that speaks it (each has a `WIRE` object, a `WireFormat`).
APIS = {
    "openai.chat": "openai_chat",
    "openai.responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}


def wire_format(api: str) -> WireFormat:
    """The `WireFormat` of ``api`` (a key of `APIS`).

    Raises:
        UsageError: no such API.
    """
    module = APIS.get(api)
    if module is None:
        raise UsageError(f"unknown model API {quoted(api)}; known: {', '.join(APIS)}")
    wire: WireFormat = importlib.import_module(f"schemawire.wire.{module}").WIRE
    return wire
