"""A store's calls from async code, run off the event loop.

The stores are synchronous (sqlite3 and psycopg's blocking connection). Called straight from a
coroutine, a store call stops the whole event loop for as long as the database takes: a SQLite
file another process is writing waits up to 30 seconds for its lock, and a PostgreSQL save waits
for the network and for any row lock. `OffLoop` runs each call in a worker thread and waits for
it without blocking the loop, so the other tasks (a second agent, an MCP session, a progress
display) keep running.

The calls of one `OffLoop` run one at a time (a capacity limiter of one thread): a store's
connection is used by one thread at a time, in the order the calls were made. Use one `OffLoop`
per store. A call that has begun is never abandoned: cancelling its caller waits for it to end,
so each write still commits or rolls back whole, and `Store.save`'s compare-and-set is the
store's own.
"""

from __future__ import annotations

from collections.abc import Callable
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
