"""SQLite saves share commits: the saves that threads make at the same time through one store go
in one transaction, each with its own compare-and-set, and each returns once that transaction is
committed. Commits are counted on the connection (its statements, traced), never timed."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemawire.store import Checkpoint, SqliteStore, StoreError

SECONDS = 30  # the longest any wait here may take
THREADS, EACH = 16, 25


class _SeenQueuing:
    """The lock over the store's queue of saves, counting the times it was let go: once for each
    save that queued, while the store's own lock keeps every committer from taking the queue
    (so a test knows when a batch is queued without timing anything)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.released = 0
        self.seen = threading.Condition()

    def __enter__(self) -> None:
        self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()
        with self.seen:
            self.released += 1
            self.seen.notify_all()

    def until_queued(self, count: int) -> None:
        with self.seen:
            assert self.seen.wait_for(lambda: self.released >= count, timeout=SECONDS)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "runs.db")
    yield opened
    opened.close()


def commits_of(store: SqliteStore) -> list[str]:
    """The COMMITs the store's connection runs from now on, as a list that grows."""
    seen: list[str] = []
    store._db.set_trace_callback(lambda sql: seen.append(sql) if sql == "COMMIT" else None)
    return seen


def new_run(store: SqliteStore, run_id: str) -> None:
    store.create_run(run_id, "f", Checkpoint(run_id, 0, {}, None, None, "a"))


def step(run_id: str, number: int, state: Any = None) -> Checkpoint:
    value = {"run": run_id, "step": number} if state is None else state
    return Checkpoint(run_id, number, value, None, None, "a")


def in_threads(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run each call in a thread of its own; what each returned or raised, in order."""
    outcomes: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            outcomes[index] = calls[index]()
        except Exception as error:
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS)
        assert not thread.is_alive(), "a save did not return"
    return outcomes


def one_batch(store: SqliteStore, saves: list[Callable[[], Any]]) -> list[Any]:
    """Run the saves in threads, all queued before any is written: the store's lock is held
    until each has queued (the first, the committer, waits for that lock, the others for it)."""
    watched = _SeenQueuing()
    store._saves = watched  # type: ignore[assignment]
    outcomes: list[Any] = []
    with store._lock:
        runner = threading.Thread(target=lambda: outcomes.extend(in_threads(saves)))
        runner.start()
        watched.until_queued(len(saves))
    runner.join(timeout=SECONDS)
    assert not runner.is_alive()
    return outcomes


def test_many_threads_saving_many_runs_all_land_in_order_with_fewer_commits_than_saves(
    store: SqliteStore,
) -> None:
    run_ids = [f"r{index}" for index in range(THREADS)]
    for run_id in run_ids:
        new_run(store, run_id)
    commits = commits_of(store)

    def advance(run_id: str) -> None:
        for number in range(1, EACH + 1):
            written = store.save(step(run_id, number), expected_step=number - 1)
            assert written.step == number

    outcomes = in_threads([lambda run_id=run_id: advance(run_id) for run_id in run_ids])

    assert outcomes == [None] * THREADS
    assert len(commits) < THREADS * EACH
    reopened = SqliteStore(store.path)  # what is on disk, through a connection of its own
    try:
        for run_id in run_ids:
            saved = reopened.checkpoints(run_id)
            assert [c.step for c in saved] == list(range(EACH + 1))
            assert [c.state for c in saved[1:]] == [
                {"run": run_id, "step": n} for n in range(1, EACH + 1)
            ]
    finally:
        reopened.close()


def test_saves_queued_together_are_committed_once(store: SqliteStore) -> None:
    for run_id in ("r1", "r2", "r3"):
        new_run(store, run_id)
    commits = commits_of(store)

    outcomes = one_batch(
        store,
        [
            lambda run_id=run_id: store.save(step(run_id, 1), expected_step=0)
            for run_id in ("r1", "r2", "r3")
        ],
    )

    assert [written.step for written in outcomes] == [1, 1, 1]
    assert commits == ["COMMIT"]


def test_a_save_that_lost_its_race_in_a_batch_fails_alone(store: SqliteStore) -> None:
    new_run(store, "r1")
    new_run(store, "r2")

    outcomes = one_batch(
        store,
        [
            lambda: store.save(step("r1", 1, {"by": "first"}), expected_step=0),
            lambda: store.save(step("r1", 1, {"by": "second"}), expected_step=0),
            lambda: store.save(step("r2", 1), expected_step=0),
        ],
    )

    refused = [outcome for outcome in outcomes if isinstance(outcome, StoreError)]
    assert len(refused) == 1
    assert str(refused[0]) == "run r1 is no longer at step 0"
    winner = next(o for o in outcomes[:2] if isinstance(o, Checkpoint))
    latest = store.latest("r1")
    assert latest is not None
    assert latest.state == winner.state
    assert outcomes[2].step == 1
    assert store.latest("r2") == outcomes[2]


def test_an_error_of_the_batch_reaches_every_save_in_it_and_none_is_saved(
    store: SqliteStore,
) -> None:
    for run_id in ("r1", "r2", "r3"):
        new_run(store, run_id)
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages + 8}")  # room for small states only
    too_big = {"text": "x" * 200_000}

    outcomes = one_batch(
        store,
        [
            lambda: store.save(step("r1", 1), expected_step=0),
            lambda: store.save(step("r2", 1, too_big), expected_step=0),
            lambda: store.save(step("r3", 1), expected_step=0),
        ],
    )

    assert all(isinstance(outcome, StoreError) for outcome in outcomes)
    assert all("full" in str(outcome) for outcome in outcomes)
    assert [store.latest(run_id).step for run_id in ("r1", "r2", "r3")] == [0, 0, 0]  # type: ignore[union-attr]
    assert store.save(step("r1", 1), expected_step=0).step == 1  # the store goes on


def test_saves_waiting_when_the_store_closes_fail_with_a_store_error(store: SqliteStore) -> None:
    for run_id in ("r1", "r2"):
        new_run(store, run_id)
    watched = _SeenQueuing()
    store._saves = watched  # type: ignore[assignment]
    outcomes: list[Any] = []
    with store._lock:
        runner = threading.Thread(
            target=lambda: outcomes.extend(
                in_threads(
                    [lambda r=r: store.save(step(r, 1), expected_step=0) for r in ("r1", "r2")]
                )
            )
        )
        runner.start()
        watched.until_queued(2)
        store.close()
    runner.join(timeout=SECONDS)

    assert len(outcomes) == 2
    assert all(isinstance(outcome, StoreError) for outcome in outcomes)


# Eight threads, each advancing a run of its own, saying each save that returned on stdout.
SAVER = """
import sys, threading
from schemawire.store import Checkpoint, SqliteStore
store = SqliteStore(sys.argv[1])
said = threading.Lock()
def advance(run_id):
    for number in range(1, 100_000):
        store.save(Checkpoint(run_id, number, {"run": run_id, "step": number, "pad": "p" * 500},
                              None, None, "a"), expected_step=number - 1)
        with said:
            print(run_id, number, flush=True)
runs = [f"r{index}" for index in range(8)]
for run_id in runs:
    store.create_run(run_id, "f", Checkpoint(run_id, 0, {}, None, None, "a"))
for run_id in runs:
    threading.Thread(target=advance, args=(run_id,)).start()
"""


async def saved_until_killed(path: Path, acknowledged: int) -> dict[str, int]:
    """Run SAVER until it has said ``acknowledged`` saves, then SIGKILL it; per run, the last
    step it said was saved."""
    command = [sys.executable, "-c", SAVER, str(path)]
    said: dict[str, int] = {}
    async with await anyio.open_process(command, stderr=subprocess.DEVNULL) as process:
        assert process.stdout is not None
        text = b""
        with anyio.fail_after(SECONDS):
            while sum(said.values()) < acknowledged:
                text += await process.stdout.receive()
                *lines, text = text.split(b"\n")
                for line in lines:
                    run_id, number = line.decode().split()
                    said[run_id] = max(said.get(run_id, 0), int(number))
            process.send_signal(signal.SIGKILL)
            assert await process.wait() == -signal.SIGKILL
    return said


@pytest.mark.anyio
async def test_a_kill_amid_shared_commits_leaves_whole_checkpoints_and_every_acknowledged_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    said = await saved_until_killed(path, acknowledged=400)

    store = SqliteStore(path)
    try:
        for index in range(8):
            run_id = f"r{index}"
            saved = store.checkpoints(run_id)
            steps = [checkpoint.step for checkpoint in saved]
            assert steps == list(range(len(saved)))  # no gap, nothing half written
            assert steps[-1] >= said.get(run_id, 0)  # every save that returned is there
            for checkpoint in saved[1:]:
                assert checkpoint.state == {
                    "run": run_id,
                    "step": checkpoint.step,
                    "pad": "p" * 500,
                }
    finally:
        store.close()
