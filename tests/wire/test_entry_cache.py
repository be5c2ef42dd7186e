"""Request bodies with and without a conversation's `EntryCache`: what they share, and with whom."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from schemawire.types import ToolCall
from schemawire.wire import APIS, Entry, EntryCache, Request, wire_format
from tests.wire import scenario

WAIT = 10.0  # seconds any thread waits for the other before the test fails
TOOLS = {api: scenario.tool_refs(api) for api in APIS}  # one list per API, as in a host's run


def conversation(api: str) -> list[Entry]:
    """The scenario's question, three calls (arguments as objects), and their results."""
    call_ids = ["call_1", "call_2", "call_3"]
    calls = [
        ToolCall(call_id, name, dict(arguments), api)
        for call_id, name, arguments in zip(
            call_ids, scenario.CANONICAL_NAMES, scenario.ARGUMENTS, strict=True
        )
    ]
    return [scenario.QUESTION, scenario.host_turn(*calls), scenario.outputs(call_ids)]


def request(api: str, entries: list[Entry]) -> Request:
    return Request(scenario.MODEL[api], entries, TOOLS[api], scenario.SYSTEM)


def messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation in a body, wherever its API keeps it."""
    return next(body[key] for key in ("messages", "input", "contents") if key in body)


def scribble(value: Any) -> None:
    """Change every object and array inside ``value``, the way a careless caller might."""
    if isinstance(value, dict):
        for member in list(value.values()):
            scribble(member)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            scribble(item)
        value.append("scribbled")


@pytest.mark.parametrize("api", list(APIS))
def test_a_body_without_a_cache_is_the_callers_own_to_change(api: str) -> None:
    wire, entries = wire_format(api), conversation(api)
    pristine = wire.body(request(api, entries))
    changed = wire.body(request(api, entries))
    scribble(changed)
    assert wire.body(request(api, entries)) == pristine


@pytest.mark.parametrize("api", list(APIS))
def test_bodies_rendered_through_one_cache_share_each_entrys_messages(api: str) -> None:
    wire, entries, cache = wire_format(api), conversation(api), EntryCache()
    first = wire.body(request(api, entries[:2]), cache)
    second = wire.body(request(api, entries), cache)
    last = len(messages(first)) - 1
    assert messages(second)[last] is messages(first)[last]  # rendered once, sent again
    assert second == wire.body(request(api, entries))  # the same JSON as without a cache


@pytest.mark.parametrize("api", list(APIS))
def test_two_threads_with_a_cache_each_see_only_their_own_messages(api: str) -> None:
    wire, entries = wire_format(api), conversation(api)  # the same entries, in both threads
    barrier = threading.Barrier(2, timeout=WAIT)

    def render() -> list[dict[str, Any]]:
        cache, bodies = EntryCache(), []
        for turn in range(1, len(entries) + 1):
            barrier.wait()  # both threads render each step at once
            bodies.append(wire.body(request(api, entries[:turn]), cache))
        return bodies

    with ThreadPoolExecutor(2) as pool:
        mine, theirs = [f.result(timeout=WAIT) for f in [pool.submit(render) for _ in range(2)]]
    assert mine == theirs
    theirs_ids = {id(message) for body in theirs for message in messages(body)}
    assert all(id(m) not in theirs_ids for body in mine for m in messages(body))
