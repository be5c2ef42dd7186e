"""Running a tool's Python function: bounded by a timeout, its failure returned, not raised.

One runner for every place a Python function serves as a tool (the host's `PythonTool`, the
functions `schemawire serve` serves), so both treat a slow, failing or hanging tool alike. It
sits below both layers and imports neither the gates nor the MCP SDK: a host with only Python
tools never loads ``mcp``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import anyio

__all__ = ["DEFAULT_TIMEOUT", "invoke"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a tool's function may take, unless told otherwise."""


async def invoke(
    function: Callable[..., Any], arguments: Mapping[str, Any], timeout: float = DEFAULT_TIMEOUT
) -> Any:
    """Call ``function`` with ``arguments`` as keywords: what it returned, or the exception it
    raised, or a `TimeoutError` when it took longer than ``timeout`` seconds.

    A coroutine function is awaited; any other function runs in a worker thread, so a slow tool
    does not stall the event loop. A synchronous function still running at the timeout is left
    to finish in its thread (Python cannot stop a thread); its result is dropped. What a
    synchronous function returns that is awaitable (an object whose ``__call__`` is async) is
    awaited too, within the same timeout.

    Cancelling the calling task cancels the call: cancellation is never returned as an outcome.
    """
    try:
        with anyio.move_on_after(timeout):
            return await _called(function, arguments)
    except Exception as error:  # a failing tool is a result, not a crash (its own timeouts too)
        return error
    # Past the block only when the timeout cancelled the call: the call itself returns.
    return TimeoutError(f"the tool did not finish within {timeout:g} s")


async def _called(function: Callable[..., Any], arguments: Mapping[str, Any]) -> Any:
    if inspect.iscoroutinefunction(function):
        return await function(**arguments)
    call = functools.partial(function, **arguments)
    value = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
    if inspect.isawaitable(value):
        return await value
    return value
