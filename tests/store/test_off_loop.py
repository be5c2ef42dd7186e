"""Store calls from async code run in a thread: a store kept waiting by another connection's
lock leaves the event loop free for every other task (on SQLite and on PostgreSQL)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest

from schemawire.store import Checkpoint, Store, StoreError
from schemawire.store._offloop import OffLoop

pytestmark = pytest.mark.anyio

SECONDS = 20


@contextmanager
def run_locked(url: str, run_id: str) -> Iterator[Callable[[], None]]:
    """Another connection holds the lock a write to ``run_id`` needs (SQLite: the file's write
    lock; PostgreSQL: the run's row) until the function it yields is called."""
    other: Any
    if url.startswith("sqlite:"):
        other = sqlite3.connect(url.removeprefix("sqlite:"), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
    else:
        import psycopg  # the PostgreSQL extra, needed by this branch only

        other = psycopg.connect(url, autocommit=True)
        other.execute("BEGIN")
        other.execute("SELECT 1 FROM runs WHERE run_id = %s FOR UPDATE", (run_id,))

    def release() -> None:
        other.execute("COMMIT")

    try:
        yield release
    finally:
        other.close()


def checkpoint(run_id: str, step: int) -> Checkpoint:
    return Checkpoint(run_id, step, {"step": step}, None, None, "next")


async def test_a_save_kept_waiting_by_a_lock_leaves_the_loop_running(
    store: Store, store_url: str
) -> None:
    store.create_run("r1", "refunds", checkpoint("r1", 0))
    off_loop = OffLoop(store)
    written: list[Checkpoint] = []

    async def save() -> None:
        written.append(await off_loop.run(store.save, checkpoint("r1", 1), expected_step=0))

    with anyio.fail_after(SECONDS), run_locked(store_url, "r1") as release:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(save)
            await anyio.wait_all_tasks_blocked()  # this task runs while the save waits
            assert written == []
            release()
    assert [c.step for c in written] == [1]
    assert [c.step for c in store.checkpoints("r1")] == [0, 1]


async def test_a_store_error_reaches_the_caller_as_it_is(store: Store) -> None:
    store.create_run("r1", "refunds", checkpoint("r1", 0))
    off_loop = OffLoop(store)

    with anyio.fail_after(SECONDS), pytest.raises(StoreError, match="no longer at step 3"):
        await off_loop.run(store.save, checkpoint("r1", 4), expected_step=3)
    assert [c.step for c in store.checkpoints("r1")] == [0]
