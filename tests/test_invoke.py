"""The one runner of tools' Python functions: what they return, raise, or overrun, as a value."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import anyio
import pytest

from schemawire._invoke import invoke

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_synchronous_function_runs_in_a_worker_thread() -> None:
    def where(city: str) -> dict[str, Any]:
        return {"city": city, "thread": threading.get_ident()}

    outcome = await invoke(where, {"city": "Oslo"})
    assert outcome["city"] == "Oslo"
    assert outcome["thread"] != threading.get_ident()


async def test_a_coroutine_function_is_awaited() -> None:
    async def double(n: int) -> int:
        await anyio.lowlevel.checkpoint()
        return n * 2

    assert await invoke(double, {"n": 21}) == 42


async def test_an_awaitable_from_a_callable_object_is_awaited() -> None:
    class Tool:
        async def __call__(self, n: int) -> int:
            return n + 1

    assert await invoke(Tool(), {"n": 1}) == 2


async def test_what_a_tool_raises_is_its_outcome() -> None:
    def broken() -> None:
        raise KeyError("internal")

    outcome = await invoke(broken, {})
    assert isinstance(outcome, KeyError)


async def test_a_coroutine_over_its_timeout_is_a_timeout_error() -> None:
    async def stuck() -> None:
        await anyio.Event().wait()

    with anyio.fail_after(10):
        outcome = await invoke(stuck, {}, timeout=0.05)
    assert isinstance(outcome, TimeoutError)
    assert str(outcome) == "the tool did not finish within 0.05 s"


async def test_a_blocking_function_over_its_timeout_is_left_in_its_thread() -> None:
    release = threading.Event()

    def blocked() -> str:
        release.wait(30)
        return "late"

    try:
        with anyio.fail_after(10):
            outcome = await invoke(blocked, {}, timeout=0.05)
    finally:
        release.set()  # let the abandoned thread finish
    assert isinstance(outcome, TimeoutError)


async def test_cancelling_the_caller_is_not_an_outcome() -> None:
    started = anyio.Event()

    async def waits() -> None:
        started.set()
        await anyio.Event().wait()

    outcomes: list[Any] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:

            async def run() -> None:
                outcomes.append(await invoke(waits, {}))

            group.start_soon(run)
            await started.wait()
            group.cancel_scope.cancel()
    assert outcomes == []


def test_running_python_tools_does_not_load_the_mcp_sdk() -> None:
    code = "import sys, schemawire._invoke, schemawire.host.tools; print('mcp' in sys.modules)"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert completed.stdout.strip() == "False"
