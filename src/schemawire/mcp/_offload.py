"""Gate work on large payloads, off the event loop.

A server's event loop serves every client: one client's 4 MB argument, checked, redacted and
traced on the loop, would stall every other client for as long as that takes. `off_loop` runs
such work in a worker thread (at most `WORKERS` at once, per event loop) once the payload weighs
`OFFLOAD_FROM` or more, and inline below that, so the usual small call pays nothing for the hop.

The threshold, as measured before this module existed: a hop to a worker thread and back costs
about 80 µs; redacting and tracing a payload about 70 µs per KiB, checking arguments a few µs per
KiB. At 16 KiB a call does about 1 ms of work, so work
on the loop stays under a millisecond and the hop adds under a tenth to what it moves.

Used by the server (`schemawire.mcp.server`) and the gating proxy's client
(`schemawire.mcp.client.McpClient.call`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

__all__ = ["OFFLOAD_FROM", "WORKERS", "is_large", "off_loop", "off_loop_if"]

_T = TypeVar("_T")

OFFLOAD_FROM = 16 * 1024
"""A payload this heavy (characters of its strings, plus one per item) is worked off the loop."""

WORKERS = 4
"""Worker threads gate work may hold at once, per event loop; more wait (off the loop)."""

_LIMITER: RunVar[anyio.CapacityLimiter] = RunVar("schemawire_gate_workers")


def is_large(value: Any, threshold: int = OFFLOAD_FROM) -> bool:
    """Whether ``value`` weighs ``threshold`` or more: the lengths of its strings and bytes, plus
    one for each item, member and key.

    The walk stops as soon as the weight is reached, so it costs at most about ``threshold``
    steps whatever ``value`` is: a list of a million items, or a few hundred lists that share
    references and so hold a million leaves.
    """
    budget = threshold
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        # The JSON types first, by exact type: a small call's payload is all of these, and the
        # general walk below asks each one several questions. The same weights either way.
        if kind in _LEAVES:
            budget -= 1
        elif kind in _SIZED_LEAVES:
            budget -= 1 + len(item)
        elif kind is dict:
            budget -= 1 + len(item)
            pending.extend(item.keys())
            pending.extend(item.values())
        elif kind is list or kind is tuple:
            budget -= 1 + len(item)
            pending.extend(item)
        else:
            budget -= 1 + _own_weight(item)
            pending.extend(_children(item))
        if budget <= 0:
            return True
    return False


_LEAVES = frozenset({int, float, bool, type(None)})
_SIZED_LEAVES = frozenset({str, bytes})


def _own_weight(item: Any) -> int:
    if isinstance(item, str | bytes | bytearray | memoryview | list | tuple | dict):
        return len(item)  # a container's length is paid before its items are listed
    return 0


def _children(item: Any) -> list[Any]:
    """What ``item`` holds: the keys and values of a mapping, the items of a sequence, the fields
    of a model (pydantic) or of a dataclass."""
    if isinstance(item, dict):
        return [*item.keys(), *item.values()]
    if isinstance(item, list | tuple):
        return list(item)
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return [getattr(item, f.name) for f in dataclasses.fields(item)]
    fields = getattr(item, "__dict__", None)
    return list(fields.values()) if isinstance(fields, dict) else []


async def off_loop(function: Callable[..., _T], *args: Any, weight: Any) -> _T:
    """``function(*args)``: in a worker thread when ``weight`` (the payload the work is
    proportional to) `is_large`, else right here.

    Cancelling the caller before the worker starts means ``function`` never runs. Once it
    runs, it runs to its end (a thread cannot be stopped) and the caller waits for it: the
    cancellation is held until the worker returns, the caller gets its result (or its
    exception), and the cancellation takes effect at the caller's next checkpoint.

    Raises:
        Exception: whatever ``function`` raises.
    """
    return await off_loop_if(is_large(weight), function, *args)


async def off_loop_if(large: bool, function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)``: in a worker thread when ``large`` (what `is_large` said of its
    payload, asked once for several steps of work on it), else right here; as `off_loop`.

    Raises:
        Exception: whatever ``function`` raises.
    """
    if not large:
        return function(*args)
    return await anyio.to_thread.run_sync(function, *args, limiter=_limiter())


def _limiter() -> anyio.CapacityLimiter:
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(WORKERS)
        _LIMITER.set(limiter)
        return limiter
