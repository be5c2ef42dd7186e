"""A store's calls from async code, run off the event loop.

The stores are synchronous (sqlite3 and psycopg's blocking connection). Called straight from a
coroutine, a store call stops the whole event loop for as long as the database takes: a SQLite
file another process is writing waits up to 30 seconds for its lock, and a PostgreSQL save waits
for the network and for any row lock. `OffLoop` runs each call in a worker thread and waits for
it without blocking the loop, so the other tasks (a second agent, an MCP session, a progress
display) keep running.

The calls of one `OffLoop` run one at a time, in the order they were made (a capacity limiter
of one thread). Any number of `OffLoop`s, in any number of threads and event loops, may share a
store: the store lets one call at a time onto its connection (`one_call_at_a_time`), so two
transactions never interleave. A call that has begun is never abandoned: cancelling its caller
waits for it to end, so each write still commits or rolls back whole, and `Store.save`'s
compare-and-set is the store's own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import ParamSpec, TypeVar

import anyio
import anyio.to_thread

from schemawire.store.base import Store

__all__ = ["OffLoop"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


class OffLoop:
    """Runs the calls of one store in a worker thread, one at a time.

    Example: ``written = await off_loop.run(store.save, checkpoint, expected_step=1)``.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._limiter = anyio.CapacityLimiter(1)

    async def run(self, method: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """What ``method(*args, **kwargs)`` returns, called in a worker thread.

        Raises:
            StoreError: whatever the store raises, as it raises it.
        """
        return await anyio.to_thread.run_sync(
            partial(method, *args, **kwargs), limiter=self._limiter
        )

    async def claim(self, run_id: str, worker: str) -> bool:
        """`Store.claim` in a worker thread, given up again if its caller is cancelled before
        it receives the answer: asyncio's own cancel (``wait_for``, a server's timeout) does
        not wait for the thread, and a claim taken for no one would hold the run until the
        store closes. A claim that returns True is the caller's to release, as always.
        """
        caller = _Caller()

        def claim_for_the_caller() -> bool:
            claimed = self.store.claim(run_id, worker)
            with caller.lock:
                caller.answered, caller.claimed = True, claimed
                if caller.gone and claimed:  # no one is there to release it
                    self.store.release(run_id, worker)
            return claimed

        try:
            return await self.run(claim_for_the_caller)
        except BaseException:
            with caller.lock:
                caller.gone = True
                taken_for_no_one = caller.answered and caller.claimed
            if taken_for_no_one:  # the thread answered, but the cancel came before the answer
                with anyio.CancelScope(shield=True):
                    await self.run(self.store.release, run_id, worker)
            raise


@dataclass
class _Caller:
    """What the coroutine waiting for a claim and the thread taking it know of each other."""

    gone: bool = False  # the coroutine was cancelled (or failed) before the answer reached it
    answered: bool = False  # the thread's claim has returned
    claimed: bool = False  # and it was granted
    lock: threading.Lock = field(default_factory=threading.Lock)
