"""What is worked off the event loop: `is_large` weighs a payload in bounded time."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire.mcp._offload import OFFLOAD_FROM, is_large, off_loop, off_loop_if


@dataclass(frozen=True, slots=True)
class Holder:
    content: Any


def test_small_payloads_are_not_large() -> None:
    assert not is_large({"city": "Oslo", "tags": ["a", "b"], "n": 3})
    assert not is_large("x" * (OFFLOAD_FROM - 2))


@pytest.mark.parametrize(
    "value",
    [
        "x" * OFFLOAD_FROM,
        {"city": "y" * OFFLOAD_FROM},
        [0] * OFFLOAD_FROM,
        Holder([{"type": "text", "text": "z" * OFFLOAD_FROM}]),
    ],
)
def test_a_long_string_or_many_items_is_large(value: Any) -> None:
    assert is_large(value)


def test_weighing_stops_at_the_threshold_whatever_the_value_holds() -> None:
    shared: list[Any] = [0]
    for _ in range(40):  # 2**40 leaves, as a tree
        shared = [shared, shared]
    long = {"order_id": [0] * 10**7}
    started = time.perf_counter()
    assert is_large(shared)
    assert is_large(long)
    assert time.perf_counter() - started < 1.0  # walked as a tree: never


def weighed_in_general(value: Any, threshold: int) -> bool:
    """`is_large` as it was before its fast path for the JSON types: every item asked what it
    is the long way (the same weights, the same early stop)."""
    budget, pending = threshold, [value]
    while pending:
        item = pending.pop()
        sized = isinstance(item, str | bytes | bytearray | memoryview | list | tuple | dict)
        budget -= 1 + (len(item) if sized else 0)
        if budget <= 0:
            return True
        if isinstance(item, dict):
            pending.extend([*item.keys(), *item.values()])
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif isinstance(getattr(item, "__dict__", None), dict):
            pending.extend(vars(item).values())
    return False


class Tagged(str):
    """A str subclass: weighed by the general walk."""


JSON_LIKE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | st.binary(max_size=40)
    | st.text(max_size=40).map(Tagged),
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.lists(inner, max_size=6).map(tuple)
        | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=60,
)


@given(JSON_LIKE, st.integers(min_value=1, max_value=400))
def test_the_json_types_weigh_what_the_general_walk_says(value: Any, threshold: int) -> None:
    assert is_large(value, threshold) == weighed_in_general(value, threshold)


@pytest.mark.anyio
async def test_work_weighed_once_runs_where_its_weight_says() -> None:
    here = threading.get_ident()
    assert await off_loop_if(False, threading.get_ident) == here
    assert await off_loop_if(True, threading.get_ident) != here


@pytest.mark.anyio
async def test_large_work_runs_in_a_worker_thread() -> None:
    def where(_: Any) -> int:
        return threading.get_ident()

    here = threading.get_ident()
    assert await off_loop(where, "small", weight="small") == here
    assert await off_loop(where, "large", weight="x" * OFFLOAD_FROM) != here


@pytest.mark.anyio
async def test_a_cancelled_caller_waits_for_its_worker_and_gets_its_result() -> None:
    started, release = threading.Event(), threading.Event()
    got: list[str] = []

    def work(_: Any) -> str:
        started.set()
        release.wait(30)
        return "done"

    async def caller() -> None:
        got.append(await off_loop(work, "x", weight="x" * OFFLOAD_FROM))
        await anyio.lowlevel.checkpoint()  # where the cancellation takes effect
        got.append("not cancelled")

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(caller)
            await anyio.to_thread.run_sync(started.wait)
            group.cancel_scope.cancel()
            release.set()
    assert got == ["done"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_worker_limiter_is_per_event_loop() -> None:
    async def run() -> str:
        return await off_loop(str.upper, "a", weight="x" * OFFLOAD_FROM)

    assert anyio.run(run) == "A"
    assert anyio.run(run) == "A"
