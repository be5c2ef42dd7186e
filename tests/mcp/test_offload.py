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

from schemawire.mcp._offload import OFFLOAD_FROM, is_large, off_loop


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
