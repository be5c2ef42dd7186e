"""Gemini ``generateContent`` and ``streamGenerateContent``: request bodies, responses, streams.

The conversation becomes ``contents`` of ``user`` and ``model`` turns made of parts. A model turn
that came from this API is replayed from its own content (``raw``), so thought signatures go
back unchanged; a turn from elsewhere is rebuilt as ``text`` and ``functionCall`` parts.

Gemini may send function calls without ids. `turn` then gives each call the id
``"<canonical name>-<index>"`` (its place among the turn's calls), which is stable for the same
response; when the results go back, a synthesized id is left out and the call is matched by its
name and place, as the API expects. ``functionResponse.response`` must be an object: see
`schemawire.wire._render.result_object`.

The model's name is not in the body: the API takes it in the URL
(``/v1beta/models/{model}:generateContent``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from schemawire._json import quoted
from schemawire.errors import UsageError
from schemawire.types import ToolCall, ToolResult
from schemawire.wire._api import ApiWire, EventReader, WireFormat
from schemawire.wire._partial_args import ArgumentsBuilder
from schemawire.wire._render import (
    Cursor,
    arguments_object,
    canonical_name,
    compact,
    error_body_message,
    refuse_error_body,
    result_object,
    wire_name,
    with_options,
)
from schemawire.wire.conversation import (
    AssistantTurn,
    Entry,
    Request,
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

__all__ = [
    "REQUEST_MEMBERS",
    "WIRE",
    "GenerateContentStreamReader",
    "accumulate",
]

API = "gemini"
REQUEST_MEMBERS = frozenset(
    {
        "model",
        "contents",
        "systemInstruction",
        "tools",
        "toolConfig",
        "safetySettings",
        "generationConfig",
        "cachedContent",
        "serviceTier",
        "store",
    }
)
"""The members of a GenerateContentRequest: an option named so is a member of the request
(one the request already sets is refused); every other option (``temperature``,
``maxOutputTokens``...) is a member of ``generationConfig``."""

_TEXT_MEMBERS = frozenset({"text", "thought", "thoughtSignature"})
# call id -> (the name the model knows the tool by, the id the model gave the call, if any)
_Calls = dict[str, tuple[str, str | None]]


def _body(request: Request, contents: list[dict[str, Any]]) -> dict[str, Any]:
    """The request body: ``contents``, ``systemInstruction``, ``tools`` (one tool with every
    function declaration), ``generationConfig`` (JSON output following the output schema, plus
    the generation options), then the request-level options.

    Raises:
        UsageError: an option names a member the request sets.
    """
    body: dict[str, Any] = {"contents": contents}
    if request.system is not None:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        body["tools"] = [{"functionDeclarations": [tool.payload for tool in request.tools]}]
    members, generation = _split_options(request.options)
    config = _generation_config(request.output_schema, generation)
    if config:
        body["generationConfig"] = config
    return with_options(body, members, frozenset({"generationConfig"}))


def _stream_body(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` itself: Gemini is asked for a stream by its URL
    (``:streamGenerateContent?alt=sse``), not by its body."""
    return body


def _split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    members = {key: value for key, value in options.items() if key in REQUEST_MEMBERS}
    generation = {key: value for key, value in options.items() if key not in REQUEST_MEMBERS}
    return members, generation


def _generation_config(
    output_schema: dict[str, Any] | None, generation: dict[str, Any]
) -> dict[str, Any]:
    if output_schema is None:
        return generation
    schema = {"responseMimeType": "application/json", "responseJsonSchema": output_schema}
    return with_options(schema, generation)


def _entry(entry: Entry, before: Entry | None, tools: Sequence[ToolRef]) -> list[dict[str, Any]]:
    """An entry's contents; tool results are matched to the calls of the turn ``before``.

    Raises:
        UsageError: a result answers no call of the turn before it (Gemini needs the call's
            name).
        JSONError: a replayed tool call's arguments are a string that is not JSON.
    """
    if isinstance(entry, UserText):
        return [{"role": "user", "parts": [{"text": entry.text}]}]
    if isinstance(entry, AssistantTurn):
        content = _model_content(entry, tools)
        return [content] if content["parts"] else []  # the API refuses a content without parts
    calls = _wire_calls(before, tools) if isinstance(before, AssistantTurn) else {}
    return [{"role": "user", "parts": [_function_response(r, calls) for r in entry.results]}]


def _own_content(turn: AssistantTurn) -> dict[str, Any] | None:
    """The turn's content as this API sent it, if it came from this API."""
    raw = turn.raw
    is_own = isinstance(raw, dict) and raw.get("role") == "model"
    return raw if is_own and isinstance(raw.get("parts"), list) else None


def _model_content(turn: AssistantTurn, tools: Sequence[ToolRef]) -> dict[str, Any]:
    own = _own_content(turn)
    if own is not None:
        return own
    parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text else []
    parts.extend({"functionCall": _function_call(call, tools)} for call in turn.tool_calls)
    return {"role": "model", "parts": parts}


def _function_call(call: ToolCall, tools: Sequence[ToolRef]) -> dict[str, Any]:
    arguments = arguments_object(call.arguments, f"<arguments of {call.call_id}>")
    return {"name": wire_name(call.name, tools), "args": arguments, "id": call.call_id}


def _wire_calls(turn: AssistantTurn, tools: Sequence[ToolRef]) -> _Calls:
    """Each call of ``turn`` by its id: the name the model knows and the id the model gave it
    (None where `turn` synthesized the id, which the API must not see)."""
    own = _own_content(turn)
    if own is None:
        given: list[str | None] = [call.call_id for call in turn.tool_calls]
    else:
        given = [p["functionCall"].get("id") for p in own["parts"] if "functionCall" in p]
    given += [None] * (len(turn.tool_calls) - len(given))
    return {
        call.call_id: (wire_name(call.name, tools), call_id)
        for call, call_id in zip(turn.tool_calls, given, strict=False)
    }


def _function_response(result: ToolResult, calls: _Calls) -> dict[str, Any]:
    if result.call_id not in calls:
        raise UsageError(
            f"the result for {quoted(result.call_id)} answers no tool call of the turn before it"
        )
    name, call_id = calls[result.call_id]
    response: dict[str, Any] = {"name": name}
    if call_id is not None:
        response["id"] = call_id
    response["response"] = result_object(result)
    return {"functionResponse": response}


def _read_turn(root: Cursor, tools: Sequence[ToolRef]) -> AssistantTurn:
    """The first candidate: its text parts (thoughts left out), its function calls (names
    canonical, args objects, ids synthesized where missing), finish reason and usage; ``raw``
    is the candidate's content. A blocked prompt gives a turn with no content whose ``stop``
    is the block reason.

    Raises:
        InputError: the body is not a GenerateContentResponse.
    """
    refuse_error_body(root, "candidates")
    usage = root.at("usageMetadata").optional_object() or {}
    if not root.at("candidates").present or not root.at("candidates").array():
        blocked = root.at("promptFeedback").at("blockReason").optional_string()
        if blocked is None:
            raise root.at("candidates").error("at least one candidate")
        return AssistantTurn(stop=blocked, usage=usage)
    candidate = root.at("candidates").at(0)
    content = candidate.at("content")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for part in content.at("parts").items():
        if part.at("functionCall").present:
            calls.append(_read_call(part.at("functionCall"), len(calls), tools))
        elif part.at("text").present and part.at("thought").value is not True:
            texts.append(part.at("text").string())
    return AssistantTurn(
        text="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        stop=candidate.at("finishReason").optional_string(),
        raw=content.optional_object(),
        usage=usage,
    )


def _read_call(call: Cursor, index: int, tools: Sequence[ToolRef]) -> ToolCall:
    name = canonical_name(call.at("name").string(), tools)
    return ToolCall(
        call_id=call.at("id").optional_string() or f"{name}-{index}",
        name=name,
        arguments=call.at("args").optional_object() or {},
        provider=API,
    )


# --- streaming ---------------------------------------------------------------------------------


class _OpenCall:
    """A call whose arguments are still streaming (``partialArgs``): its part in the turn, its
    place among the calls, and the builder of its arguments (the part's ``args``)."""

    def __init__(self, part: dict[str, Any], index: int) -> None:
        self.part, self.index = part, index
        call = part["functionCall"]
        for member in ("willContinue", "partialArgs"):
            call.pop(member, None)
        self.builder = ArgumentsBuilder(call.setdefault("args", {}))


class GenerateContentStreamReader(EventReader):
    """Reads the chunks of ``streamGenerateContent`` (see `schemawire.wire.stream`).

    Each chunk is a partial GenerateContentResponse of the first candidate's parts. Text comes
    in pieces, each its own part, and is joined: pieces of the same kind (thought or answer)
    until a part carries a thought signature, which closes it. A function call comes whole, with
    its args; or, when the request asked Vertex AI to ``streamFunctionCallArguments``, in parts:
    one with the name and ``willContinue`` opens it, ``partialArgs`` build its args
    (`ArgumentsBuilder`), and a part without ``willContinue`` (an empty ``functionCall``)
    closes it. The finish reason and usage are the last chunk's that has them.
    """

    def __init__(self, tools: Sequence[ToolRef] = ()) -> None:
        super().__init__(API, _read_turn, tools)
        self._envelope: dict[str, Any] = {}
        self._parts: list[dict[str, Any]] = []
        self._texts: dict[int, list[str]] = {}  # a text part's pieces, joined at the end
        self._open: _OpenCall | None = None
        self._calls = 0
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None
        self._feedback: dict[str, Any] | None = None
        self._candidates = 0

    @property
    def complete(self) -> bool:
        blocked = (self._feedback or {}).get("blockReason") is not None
        return self._finish_reason is not None or blocked

    def api_error(self, event: Any) -> str | None:
        return error_body_message(event, "candidates")

    def _read_event(self, chunk: Cursor) -> list[StreamDelta]:
        refuse_error_body(chunk, "candidates")
        deltas: list[StreamDelta] = []
        for candidate in chunk.at("candidates").items():
            if candidate.at("index").present and candidate.at("index").integer() != 0:
                continue  # only the first candidate makes the turn, as in `turn`
            self._candidates += 1
            for part in candidate.at("content").at("parts").items():
                deltas += self._add_part(part)
            reason = candidate.at("finishReason").optional_string()
            self._finish_reason = reason or self._finish_reason
        self._usage = chunk.at("usageMetadata").optional_object() or self._usage
        self._feedback = chunk.at("promptFeedback").optional_object() or self._feedback
        for member in ("modelVersion", "responseId"):
            if chunk.at(member).present:
                self._envelope[member] = chunk.at(member).value
        return deltas

    def _add_part(self, part: Cursor) -> list[StreamDelta]:
        if part.at("functionCall").present:
            return self._function_call(part)
        new = copy.deepcopy(part.object())
        text = part.at("text").optional_string()
        last = self._parts[-1] if self._parts else None
        if last is not None and _continues(last, new):
            self._texts.setdefault(len(self._parts) - 1, [last["text"]]).append(new["text"])
            if "thoughtSignature" in new:
                last["thoughtSignature"] = new["thoughtSignature"]
        else:
            self._parts.append(new)
        return [TextDelta(text)] if text and new.get("thought") is not True else []

    def _function_call(self, part: Cursor) -> list[StreamDelta]:
        call = part.at("functionCall")
        call.object()
        name = call.at("name").optional_string()
        if name is None:
            return self._continue_call(call)
        deltas = self._close_call()
        new = copy.deepcopy(part.object())
        self._parts.append(new)
        index, self._calls = self._calls, self._calls + 1
        deltas.append(CallStarted(index, call.at("id").optional_string(), name))
        if call.at("willContinue").value is True:  # its arguments stream in the parts after
            self._open = _OpenCall(new, index)
            self._open.builder.add(call.at("partialArgs"))
            return deltas
        return [*deltas, ArgumentsDelta(index, compact(call.at("args").optional_object() or {}))]

    def _continue_call(self, call: Cursor) -> list[StreamDelta]:
        if self._open is None:
            raise call.at("name").error("a string (the part of a call opened before has none)")
        self._open.builder.add(call.at("partialArgs"))
        return [] if call.at("willContinue").value is True else self._close_call()

    def _close_call(self) -> list[StreamDelta]:
        """End the call whose arguments streamed, if one is open: its arguments, whole."""
        if self._open is None:
            return []
        closed, self._open = self._open, None
        return [ArgumentsDelta(closed.index, compact(closed.builder.arguments))]

    def body(self) -> dict[str, Any]:
        """The response the chunks add up to, as the non-streamed API would send it (a call
        whose arguments streamed is one ``functionCall`` with its ``args``)."""
        parts = copy.deepcopy(self._parts)
        for index, pieces in self._texts.items():
            parts[index]["text"] = "".join(pieces)
        body: dict[str, Any] = {"candidates": []}
        if self._candidates:
            content = {"role": "model", "parts": parts}
            candidate = {"content": content, "finishReason": self._finish_reason, "index": 0}
            body["candidates"].append(candidate)
        if self._feedback is not None:
            body["promptFeedback"] = self._feedback
        if self._usage is not None:
            body["usageMetadata"] = self._usage
        return {**body, **self._envelope}


def _continues(last: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether the part ``new`` is the next piece of the text part ``last``: both text of the
    same kind (thought or answer), ``last`` not closed by a thought signature."""
    return (
        _is_text(last)
        and _is_text(new)
        and last.get("thought") == new.get("thought")
        and "thoughtSignature" not in last
    )


def _is_text(part: dict[str, Any]) -> bool:
    return "text" in part and set(part) <= _TEXT_MEMBERS


def accumulate(events: Iterable[Any], tools: Sequence[ToolRef] = ()) -> AssistantTurn:
    """The turn that the chunks of ``streamGenerateContent`` add up to
    (`GenerateContentStreamReader`).

    Raises:
        InputError: a chunk is malformed or is the API's error object.
    """
    return read_all(GenerateContentStreamReader(tools), events)


WIRE: WireFormat = ApiWire(
    API, _entry, _body, _read_turn, GenerateContentStreamReader, _stream_body
)
"""generateContent as a `WireFormat`."""
