"""What every API module shares: tool results as a model reads them, tool names on the wire and
back, options merged into a body, and reading response bodies with errors that say where.

A response body is provider JSON: `Cursor` walks it and raises `InputError` (with the source,
a JSON Pointer and what was expected) at the first value of the wrong shape, so one malformed
body never becomes a half-read `AssistantTurn`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from schemawire._json import dumps, loads, quoted
from schemawire._pointer import join
from schemawire.errors import ErrorCode, InputError, UsageError
from schemawire.types import ToolResult
from schemawire.wire.conversation import SEARCH_NAMES, ToolRef

__all__ = [
    "Cursor",
    "arguments_object",
    "arguments_text",
    "canonical_name",
    "compact",
    "error_body_message",
    "error_event_message",
    "refuse_error_body",
    "result_object",
    "result_text",
    "stream_error",
    "wire_name",
    "with_options",
]

_T = TypeVar("_T")
_JSON_NAMES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def compact(value: Any) -> str:
    """``value`` as compact JSON text, the way tool arguments and results travel."""
    return dumps(value, indent=False)


# --- tool results ------------------------------------------------------------------------------


def result_text(result: ToolResult) -> str:
    """The result as the text an API's tool message carries.

    Text blocks are joined by newlines; a block that is not text (an image, a resource) is kept
    as its compact JSON so nothing is silently left out. A string is the text itself; any other
    value, including a gate's ``{"error": ...}`` object, is compact JSON.
    """
    content = result.content
    if result.has_content_blocks:
        return "\n".join(_block_text(block) for block in content)
    if isinstance(content, str):
        return content
    return compact(content)


def _block_text(block: dict[str, Any]) -> str:
    text = block.get("text")
    if block.get("type") == "text" and isinstance(text, str):
        return text
    return compact(block)


def result_object(result: ToolResult) -> dict[str, Any]:
    """The result as a JSON object, for APIs whose function responses must be objects (Gemini).

    An object is sent as it is (a gate's error object already reads ``{"error": ...}``); any
    other value, and the text of content blocks, is wrapped as ``{"result": value}``, or as
    ``{"error": value}`` when the tool failed.
    """
    content = result.content
    if isinstance(content, dict):
        return content if not result.is_error or "error" in content else {"error": content}
    value = result_text(result) if result.has_content_blocks else content
    return {"error": value} if result.is_error else {"result": value}


# --- names and arguments -----------------------------------------------------------------------


def wire_name(name: str, tools: Sequence[ToolRef]) -> str:
    """The name the model knows the canonical ``name`` by (``name`` itself when not a tool)."""
    return next((tool.projected_name for tool in tools if tool.name == name), name)


def canonical_name(name: str, tools: Sequence[ToolRef]) -> str:
    """The canonical name of the tool the model called ``name``; an unknown name passes through
    unchanged, so that the host can answer "unknown tool" itself. The name an API gives its
    own tool search (`SEARCH_NAMES`) is the request's tool search, when it has one."""
    named = next((tool.name for tool in tools if tool.projected_name == name), None)
    if named is None and name in _SEARCH_NAMES:
        named = next((tool.name for tool in tools if tool.searches), None)
    return named if named is not None else name


_SEARCH_NAMES = frozenset(SEARCH_NAMES.values())


def arguments_text(arguments: Any) -> str:
    """Tool-call arguments as the JSON string OpenAI's APIs replay: a string is kept exactly as
    the model sent it (it may not even be valid JSON), anything else is written compactly."""
    return arguments if isinstance(arguments, str) else compact(arguments)


def arguments_object(arguments: Any, source: str) -> dict[str, Any]:
    """Tool-call arguments as the JSON object Anthropic and Gemini replay.

    Raises:
        JSONError: ``arguments`` is a string that is not JSON.
        UsageError: ``arguments`` is not an object (nor a string holding one).
    """
    value = loads(arguments, source=source) if isinstance(arguments, str) else arguments
    if not isinstance(value, dict):
        raise UsageError(f"{source}: tool-call arguments must be a JSON object, got {_kind(value)}")
    return value


# --- request bodies ----------------------------------------------------------------------------


def with_options(
    body: dict[str, Any], options: Mapping[str, Any], merged: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """``body`` with the request's pass-through options added after what it already holds.

    An option may not replace what the request itself decides (the model, the conversation,
    the tools): that would silently undo the request. For the keys in ``merged`` both sides are
    objects, joined, with the request's members winning (``text.verbosity`` beside
    ``text.format``).

    Raises:
        UsageError: an option names a member the request already set.
    """
    result = dict(body)
    for key, value in options.items():
        if key not in result:
            result[key] = value
        elif key in merged and isinstance(value, Mapping) and isinstance(result[key], dict):
            result[key] = {**value, **result[key]}
        else:
            raise UsageError(
                f"option {quoted(key)} would replace what the request sets; leave it out"
            )
    return result


# --- reading response bodies -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cursor:
    """A value inside a response body and where it is, so that a wrong shape says where.

    Attributes:
        value: the value (None when the member is missing).
        source: what the body is, such as ``<anthropic response>``.
        base: where the body itself is (``/3`` for the fourth event of a stream).
        parent: the cursor this one was reached from, and ``key`` the step from it.
    """

    value: Any
    source: str
    base: str = ""
    parent: Cursor | None = None
    key: str | int | None = None

    @property
    def pointer(self) -> str:
        """Where ``value`` is, as a JSON Pointer. Worked out only when asked (for an error):
        a well-formed body is read without building a pointer for every member."""
        if self.parent is None or self.key is None:
            return self.base
        return join(self.parent.pointer, self.key)

    def at(self, key: str | int) -> Cursor:
        """The member ``key`` of an object or the item ``key`` of an array (missing: None)."""
        value = self.value
        if isinstance(value, dict) and isinstance(key, str):
            child = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
            child = value[key]
        else:
            child = None
        return Cursor(child, self.source, "", self, key)

    @property
    def present(self) -> bool:
        """Whether there is a value here (JSON null counts as none)."""
        return self.value is not None

    def object(self) -> dict[str, Any]:
        """The value, which must be an object."""
        return self._expect(dict, "an object")

    def array(self) -> list[Any]:
        """The value, which must be an array."""
        return self._expect(list, "an array")

    def string(self) -> str:
        """The value, which must be a string."""
        return self._expect(str, "a string")

    def integer(self) -> int:
        """The value, which must be an integer."""
        if isinstance(self.value, bool):
            raise self.error("an integer")
        return self._expect(int, "an integer")

    def optional_object(self) -> dict[str, Any] | None:
        """The value if there is one, which must then be an object."""
        return self.object() if self.present else None

    def optional_string(self) -> str | None:
        """The value if there is one, which must then be a string."""
        return self.string() if self.present else None

    def items(self) -> Iterator[Cursor]:
        """A cursor on each item of the array here; none when the member is missing."""
        if self.present:
            for index in range(len(self.array())):
                yield self.at(index)

    def error(self, expected: str) -> InputError:
        """The error for a value that is not what ``expected`` says."""
        got = "nothing" if self.value is None else _kind(self.value)
        return InputError(
            ErrorCode.JSON_SYNTAX,
            f"expected {expected}, got {got}",
            source=self.source,
            pointer=self.pointer,
        )

    def _expect(self, kind: type[_T], expected: str) -> _T:
        if not isinstance(self.value, kind):
            raise self.error(expected)
        return self.value


def refuse_error_body(root: Cursor, expected: str) -> None:
    """Raise for a body that is not an object, or that is an API's error body
    (``{"error": {"message": ...}}``) where a response with the member ``expected`` was due:
    the error quotes the API's own message rather than complaining about the shape.

    Raises:
        InputError: ``root`` is not an object, or has no ``expected`` member but an ``error``.
    """
    root.object()
    message = error_body_message(root.value, expected)
    if message is None:
        return
    raise InputError(
        ErrorCode.JSON_SYNTAX,
        f"expected a response with {quoted(expected)}, got the API's error: {message}",
        source=root.source,
        pointer=root.at("error").pointer,
    )


def error_body_message(body: Any, expected: str) -> str | None:
    """The API's message when ``body`` is its error body (``{"error": {...}}`` without the
    member ``expected``), else None."""
    if not isinstance(body, dict) or body.get(expected) is not None:
        return None
    error = body.get("error")
    if not isinstance(error, dict):
        return None
    message = error.get("message")
    return message if isinstance(message, str) and message else compact(error)


def error_event_message(event: Any) -> str | None:
    """The API's message when ``event`` is a stream's ``{"type": "error", ...}`` event
    (Anthropic's and Responses': the text in ``message`` or ``error.message``), else None."""
    if not isinstance(event, dict) or event.get("type") != "error":
        return None
    error = event.get("error")
    message = event.get("message") or (error.get("message") if isinstance(error, dict) else None)
    return message if isinstance(message, str) and message else compact(event)


def stream_error(event: Cursor, message: str | None) -> InputError:
    """The error for a stream that carried the API's own error event (``message`` is the
    API's text, when the event has one)."""
    return InputError(
        ErrorCode.JSON_SYNTAX,
        f"the stream ended with the API's error: {message or compact(event.value)}",
        source=event.source,
        pointer=event.pointer,
    )


def _kind(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)
