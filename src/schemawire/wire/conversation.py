"""A conversation as the host keeps it, the same for every model API.

Each `schemawire.wire` module renders it into its API's request body and reads its API's
response back into an `AssistantTurn`. The host never touches a provider's shape. An
`EntryCache` keeps one conversation's renderings: its owner (the host's run) passes it to
`WireFormat.body`, so that nothing is kept between conversations or shared between threads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schemawire.types import ToolCall, ToolResult

__all__ = [
    "SEARCH_NAMES",
    "AssistantTurn",
    "Entry",
    "EntryCache",
    "FoundTools",
    "Request",
    "ToolOutputs",
    "ToolRef",
    "UserText",
]


@dataclass(frozen=True, slots=True)
class UserText:
    """What the user said."""

    text: str


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """One answer of the model: text, tool calls, or both.

    Attributes:
        text: the assistant's text, if any (the final answer when there are no tool calls).
        tool_calls: the calls it asked for, in its order, arguments as the API sent them (a
            JSON string for OpenAI, an object for Anthropic and Gemini), names canonical.
        stop: why the model stopped, as the API says it (``"tool_calls"``, ``"end_turn"``...).
        raw: the API's own message, kept so that the next request can replay it exactly (some
            APIs require their own ids, signatures or reasoning items to be sent back).
        usage: token counts as the API reports them.
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    stop: str | None = None
    raw: Any = None
    usage: Mapping[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class FoundTools(ToolResult):
    """The result of a tool search (the host's ``search_tools``): its content is the shortlist
    JSON, and ``found`` the canonical names of the tools it found, which the next request
    carries. An API with its own form for a search result renders that form from ``found``
    (Anthropic: ``tool_reference`` blocks beside the JSON); the others send the JSON alone."""

    found: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolOutputs:
    """The results of one turn's tool calls, matched to them by call id, in the model's order.
    A refused call's result is the gate's error object, with ``is_error`` set."""

    results: tuple[ToolResult, ...]


Entry = UserText | AssistantTurn | ToolOutputs


@dataclass(frozen=True, slots=True)
class ToolRef:
    """A tool as one request shows it: its payload, and the name the model calls it by.

    Attributes:
        name: the canonical name.
        projected_name: the name on the wire (a target may have had to change it).
        payload: the projected tool, exactly as the API takes it.
        deferred: found by a tool search (`FoundTools`), and loaded by its result where the
            API has a form for that: Anthropic lists it with ``defer_loading`` and the result
            references it; OpenAI Responses sends it in the ``tool_search_output`` item, not in
            ``tools``. The other APIs send it as any other tool.
        searches: the host's tool search (``search_tools``), sent in its API's own form
            (``HostOptions(search_form="native")``): OpenAI Responses takes it as a
            client-executed ``tool_search`` tool (and answers every call of it with a
            ``tool_search_output``); the other APIs as a function.
    """

    name: str
    projected_name: str
    payload: dict[str, Any]
    deferred: bool = False
    searches: bool = False


SEARCH_NAMES: Mapping[str, str] = {"openai.responses": "tool_search"}
"""The name an API gives its own client-executed tool search, by API: the host's search tool,
sent in that API's native form (`ToolRef.searches`), is called so there, and its calls and
refusals name it so."""


@dataclass(frozen=True, slots=True)
class Request:
    """Everything one model request carries, before it is put in an API's shape.

    Attributes:
        model: the model's name at the provider.
        conversation: the entries so far.
        tools: the projected tools.
        system: the system prompt.
        output_schema: a projected Structured Outputs schema the final answer must follow
            (the target's ``response_format`` / ``text.format`` / ``responseJsonSchema``
            payload), or None.
        options: API options passed through as they are (``temperature``, ``max_tokens``...).
    """

    model: str
    conversation: Sequence[Entry]
    tools: Sequence[ToolRef] = ()
    system: str | None = None
    output_schema: dict[str, Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])


EntryRenderer = Callable[[Any, Any, Sequence[ToolRef]], list[dict[str, Any]]]
"""Renders one entry (which follows another, or None) under the tools: its messages."""


class EntryCache:
    """One conversation's entries, each rendered once for a given tool list.

    Every request of a run repeats the whole conversation; rendering it anew each time would
    make a run's cost grow with the square of its length. An entry (frozen) renders the same
    every time it follows the same entry under the same tools, so its rendering is kept, by
    identity, and the same message objects go out again (which also lets the trace see, by
    identity, what a request adds). A conversation that is the same list as last time, grown at
    its end (the host's), costs only its new entries. The oldest renderings go past ``size``.

    A cache belongs to one conversation and its owner (the host keeps one per run): it is not
    locked, so it must not be shared between threads, and message objects it hands out are
    shared by every body rendered through it.
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._kept: dict[tuple[int, int, int], tuple[Any, Any, Any, list[dict[str, Any]]]] = {}
        # the last conversation rendered: its list, its tools, its entries, its last entry (to
        # see that the list only grew since), the messages
        self._last: tuple[Any, Any, int, Any, list[dict[str, Any]]] | None = None

    def render_all(
        self, conversation: Sequence[Any], tools: Sequence[ToolRef], render: EntryRenderer
    ) -> list[dict[str, Any]]:
        """The messages of every entry, in order: ``render(entry, before, tools)`` each."""
        done, messages = self._grown(conversation, tools)
        before = conversation[done - 1] if done else None
        for entry in conversation[done:]:
            messages.extend(self.render(entry, before, tools, render))
            before = entry
        self._last = (conversation, tools, len(conversation), before, messages)
        return list(messages)

    def _grown(
        self, conversation: Sequence[Any], tools: Sequence[ToolRef]
    ) -> tuple[int, list[dict[str, Any]]]:
        """How many entries of ``conversation`` the last rendering already covers, and a copy
        of its messages: all of them when it is the same list, grown (its last entry checked
        still in place), else none."""
        last = self._last
        if last is None or last[0] is not conversation or last[1] is not tools:
            return 0, []
        done = last[2]
        if done > len(conversation) or (done and conversation[done - 1] is not last[3]):
            return 0, []
        return done, list(last[4])

    def render(
        self, entry: Any, before: Any, tools: Sequence[ToolRef], render: EntryRenderer
    ) -> list[dict[str, Any]]:
        """``render``'s messages for ``entry`` (which follows ``before``), rendered once."""
        key = (id(entry), id(before), id(tools))
        kept = self._kept.get(key)
        # The kept objects are held, so their ids cannot be reused while the key is here.
        if kept is not None and kept[0] is entry and kept[1] is before and kept[2] is tools:
            return kept[3]
        messages = render(entry, before, tools)
        if len(self._kept) >= self._size:
            del self._kept[next(iter(self._kept))]
        self._kept[key] = (entry, before, tools, messages)
        return messages
