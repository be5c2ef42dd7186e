"""Checkpoints in SQLite: one file, write-ahead log, durable by default.

Each write is one transaction (``BEGIN IMMEDIATE``), so a worker killed at any point leaves the
file as it was before the write or after it, never between. ``synchronous=FULL`` (the default)
makes a committed checkpoint survive a power loss, as LangGraph's SQLite saver does;
``synchronous=NORMAL`` keeps it across a crash of the process only, faster.

Saves share commits (group commit): the threads of one process that save through one store at
the same time are written in one transaction, with one fsync at FULL, by whichever of them
comes first (the committer); the others wait for it. Each save keeps its own compare-and-set
(one that lost its race fails alone), and each returns only once the transaction that holds it
is committed, so a save that returned is as durable as before. A save alone is committed at
once: no one waits for company, and the saves that come during a commit go in the next one.

Claims are per process on one machine: a claim names the worker's pid, and a claim whose
process is gone lapses.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from schemawire._json import dumps
from schemawire.store.base import (
    CallStatus,
    Checkpoint,
    JournalEntry,
    RunInfo,
    RunStatus,
    StoreError,
    check_next,
    locks_for_itself,
    one_call_at_a_time,
    stored,
)

__all__ = ["SqliteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, flow TEXT NOT NULL, status TEXT NOT NULL, step INTEGER NOT NULL,
    node TEXT, created REAL NOT NULL, updated REAL NOT NULL, error TEXT);
CREATE TABLE IF NOT EXISTS checkpoints (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, state TEXT NOT NULL, schema TEXT,
    version TEXT, node TEXT, next_input TEXT, created REAL NOT NULL,
    PRIMARY KEY (run_id, step));
CREATE TABLE IF NOT EXISTS journal (
    key TEXT PRIMARY KEY, seq INTEGER NOT NULL, run_id TEXT NOT NULL, step INTEGER NOT NULL,
    tool TEXT NOT NULL, arguments TEXT NOT NULL, status TEXT NOT NULL, result TEXT);
CREATE INDEX IF NOT EXISTS journal_run ON journal (run_id, seq);
CREATE TABLE IF NOT EXISTS claims (
    run_id TEXT PRIMARY KEY, worker TEXT NOT NULL, pid INTEGER NOT NULL, at REAL NOT NULL);
"""
_COLUMNS = "?, ?, ?, ?, ?, ?, ?, ?"
# A run as `RunInfo`: its step, node and last change from its latest checkpoint, since `save`
# writes only the checkpoint (the runs row keeps the step it was created or last moved at;
# files written before kept it current, so both read the same).
_RUNS = """
SELECT r.run_id, r.flow, r.status,
    CASE WHEN c.step IS NULL THEN r.step ELSE c.step END,
    CASE WHEN c.step IS NULL THEN r.node ELSE c.node END,
    r.created, MAX(r.updated, COALESCE(c.created, r.updated)), r.error
FROM runs AS r LEFT JOIN checkpoints AS c ON c.run_id = r.run_id
    AND c.step = (SELECT MAX(step) FROM checkpoints WHERE run_id = r.run_id)"""
_JOURNAL = "SELECT key, run_id, step, tool, arguments, status, result FROM journal"
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")


@one_call_at_a_time
class SqliteStore:
    """A `Store` in one SQLite file; one connection, which any number of threads may share."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        """
        Raises:
            StoreError: the file cannot be opened or is not a schemawire store.
        """
        self._lock = threading.RLock()  # see one_call_at_a_time
        # The saves waiting for a commit, in the order they came, and whether a committer is at
        # work (or appointed); both guarded by `_saves`. Each waiting saver waits on a lock of
        # its own, which its committer releases: a save already committed returns without
        # waiting for the next commit, and a wake-up goes only to the saver it concerns.
        self._saves = threading.Lock()
        self._waiting: list[_Save] = []
        self._committing = False
        self._pid = os.getpid()
        if synchronous.upper() not in _SYNCHRONOUS:
            raise StoreError(f"synchronous must be one of {', '.join(_SYNCHRONOUS)}")
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Not tied to the opening thread: `OffLoop` runs the calls in worker threads, and
            # the store's lock lets one in at a time.
            self._db = sqlite3.connect(
                self.path, isolation_level=None, timeout=30, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
            self._db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as error:
            raise StoreError(f"{self.path}: {error}") from None

    # --- runs ----------------------------------------------------------------------------------

    def create_run(self, run_id: str, flow: str, first: Checkpoint) -> Checkpoint:
        now = time.time()
        with self._write():
            try:
                self._db.execute(
                    "INSERT INTO runs VALUES (?, ?, 'running', ?, ?, ?, ?, NULL)",
                    (run_id, flow, first.step, first.node, now, now),
                )
            except sqlite3.IntegrityError:
                raise StoreError(f"run {run_id} exists") from None
            return self._insert(first, now)

    @locks_for_itself
    def save(self, checkpoint: Checkpoint, *, expected_step: int) -> Checkpoint:
        check_next(checkpoint, expected_step)
        written = replace(checkpoint, created=time.time())
        save = _Save(written, expected_step, _row(written))
        if self._pid != os.getpid():
            self._forked()
        with self._saves:
            self._waiting.append(save)
            # No committer at work: this save commits now, alone or with whoever queues
            # before it takes the queue. Otherwise it waits for the commit after the current.
            save.leads = not self._committing
            if not save.leads:
                save.wake = _held_lock()
            self._committing = True
        if save.wake is not None:
            self._wait_for_turn(save.wake, save)
        if not save.done:  # it leads: the committer of the next transaction
            self._commit_waiting(save)
        if save.failure is not None:
            raise StoreError(save.failure)
        return written

    def _wait_for_turn(self, wake: threading.Lock, save: _Save) -> None:
        """Wait until a committer has written ``save``, or has appointed it the next one (either
        releases ``wake``, its lock)."""
        try:
            wake.acquire()
        except BaseException:  # interrupted: not saved, unless a committer has taken it
            with self._saves:
                self._withdraw(save)
                if save.leads and not save.done:  # appointed: the next one must lead instead
                    self._appoint_next()
            raise

    def _commit_waiting(self, own: _Save) -> None:
        """As the committer: write every save waiting in one transaction (``own`` among them),
        then appoint the next committer and wake the savers, whatever became of it."""
        batch: list[_Save] = []
        try:
            with self._lock:  # the connection's turn, among the store's other calls
                with self._saves:
                    batch, self._waiting = self._waiting, []
                self._write_batch(batch)
        finally:
            with self._saves:
                self._withdraw(own)  # if the committer failed before it took the queue
                for save in batch:
                    save.done = True
                self._appoint_next()
            for save in batch:
                if save.wake is not None:  # a saver waiting (the committer's own has none)
                    save.wake.release()

    def _appoint_next(self) -> None:
        """The first save that waits commits next; with none waiting, no one is committing
        (holding `_saves`)."""
        if self._waiting:
            first = self._waiting[0]
            first.leads = True
            if first.wake is not None:  # always: only the one committer queues without one
                first.wake.release()
        else:
            self._committing = False

    def _write_batch(self, batch: list[_Save]) -> None:
        """One transaction of the saves of ``batch``, each through its own compare-and-set;
        each save's `_Save.failure` says what became of it (None: committed)."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            landed = [self._compare_and_insert(save) for save in batch]
            self._db.execute("COMMIT")
        except BaseException as error:
            # The whole transaction failed (locked, full, read-only, corrupt, closed, or the
            # committer interrupted): none of its saves is written, and each saver hears why.
            with suppress(sqlite3.Error):
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            if not isinstance(error, sqlite3.Error):
                raise
            for save in batch:
                save.failure = f"{self.path}: {error}"
            return
        for save, inserted in zip(batch, landed, strict=True):
            save.failure = None if inserted else save.lost_race()

    def _compare_and_insert(self, save: _Save) -> bool:
        """Insert the save's checkpoint if its run is at its expected step; whether it was."""
        # The compare-and-set is the checkpoints' key, not the runs row: the run is at
        # ``expected_step`` when that step's checkpoint exists and the next one does not
        # (steps only grow one at a time). A worker that lost the race fails on the key: that
        # statement alone is undone, and the transaction goes on with the other saves.
        # Leaving the runs row alone saves a WAL page per save; `run` reads the step, node
        # and time of the last save from the checkpoints.
        try:
            inserted: int = self._db.execute(
                f"INSERT INTO checkpoints SELECT {_COLUMNS} WHERE EXISTS "
                "(SELECT 1 FROM checkpoints WHERE run_id = ? AND step = ?)",
                (*save.row, save.written.run_id, save.expected_step),
            ).rowcount
        except sqlite3.IntegrityError:
            return False
        return inserted == 1

    def _forked(self) -> None:
        """In a child process: forget the parent's waiting saves and committer, which are not
        here (the parent writes its own saves)."""
        self._pid = os.getpid()
        self._saves = threading.Lock()
        self._waiting = []
        self._committing = False

    def _withdraw(self, save: _Save) -> None:
        """Take a save out of the queue, if it is still there (holding `_saves`)."""
        if save in self._waiting:
            self._waiting.remove(save)

    def _insert(self, checkpoint: Checkpoint, now: float) -> Checkpoint:
        written = replace(checkpoint, created=now)
        self._db.execute(f"INSERT INTO checkpoints VALUES ({_COLUMNS})", _row(written))
        return written

    def latest(self, run_id: str) -> Checkpoint | None:
        row = self._db.execute(
            "SELECT * FROM checkpoints WHERE run_id = ? ORDER BY step DESC LIMIT 1", (run_id,)
        ).fetchone()
        return _checkpoint(row) if row else None

    def checkpoints(self, run_id: str) -> list[Checkpoint]:
        rows = self._db.execute(
            "SELECT * FROM checkpoints WHERE run_id = ? ORDER BY step", (run_id,)
        ).fetchall()
        return [_checkpoint(row) for row in rows]

    def finish(self, run_id: str, status: RunStatus, error: str | None = None) -> None:
        with self._write():
            self._db.execute(
                "UPDATE runs SET status = ?, error = ?, updated = ? WHERE run_id = ?",
                (status, error, time.time(), run_id),
            )

    def run(self, run_id: str) -> RunInfo | None:
        row = self._db.execute(f"{_RUNS} WHERE r.run_id = ?", (run_id,)).fetchone()
        return RunInfo(*row) if row else None

    def runs(self, status: RunStatus | None = None, limit: int = 100) -> list[RunInfo]:
        if status is None:
            rows = self._db.execute(f"{_RUNS} ORDER BY r.created DESC LIMIT ?", (limit,))
        else:
            rows = self._db.execute(
                f"{_RUNS} WHERE r.status = ? ORDER BY r.created DESC LIMIT ?", (status, limit)
            )
        return [RunInfo(*row) for row in rows.fetchall()]

    def runs_starting(self, prefix: str, limit: int = 10) -> list[RunInfo]:
        # substr, not LIKE: an id may hold _ or %, which LIKE would take as wildcards.
        rows = self._db.execute(
            f"{_RUNS} WHERE substr(r.run_id, 1, ?) = ? ORDER BY r.created DESC, r.run_id LIMIT ?",
            (len(prefix), prefix, limit),
        )
        return [RunInfo(*row) for row in rows.fetchall()]

    # --- claims --------------------------------------------------------------------------------

    def claim(self, run_id: str, worker: str) -> bool:
        with self._write():
            row = self._db.execute(
                "SELECT worker, pid FROM claims WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is not None and (row[0], row[1]) != (worker, os.getpid()) and _alive(row[1]):
                return False  # another live process holds it, whatever it calls itself
            self._db.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?)",
                (run_id, worker, os.getpid(), time.time()),
            )
            return True

    def release(self, run_id: str, worker: str) -> None:
        with self._write():
            # Only this process's own claim: a refused or interrupted claim releases nothing.
            self._db.execute(
                "DELETE FROM claims WHERE run_id = ? AND worker = ? AND pid = ?",
                (run_id, worker, os.getpid()),
            )

    # --- the journal of tool calls -------------------------------------------------------------

    def call_started(self, entry: JournalEntry) -> None:
        with self._write():
            seq = self._db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM journal WHERE run_id = ?", (entry.run_id,)
            ).fetchone()[0]
            self._db.execute(
                "INSERT OR REPLACE INTO journal VALUES (?, ?, ?, ?, ?, ?, 'started', NULL)",
                (
                    entry.key,
                    seq,
                    entry.run_id,
                    entry.step,
                    entry.tool,
                    dumps(entry.arguments, indent=False),
                ),
            )

    def call_ended(self, key: str, status: CallStatus, result: Any) -> None:
        with self._write():
            self._db.execute(
                "UPDATE journal SET status = ?, result = ? WHERE key = ?",
                (status, dumps(result, indent=False), key),
            )

    def journal(self, run_id: str) -> list[JournalEntry]:
        rows = self._db.execute(f"{_JOURNAL} WHERE run_id = ? ORDER BY seq", (run_id,))
        return [_entry(row) for row in rows.fetchall()]

    def call(self, key: str) -> JournalEntry | None:
        row = self._db.execute(f"{_JOURNAL} WHERE key = ?", (key,)).fetchone()
        return _entry(row) if row else None

    def close(self) -> None:
        self._db.close()

    def _write(self) -> _Transaction:
        return _Transaction(self._db, self.path)


def _held_lock() -> threading.Lock:
    lock = threading.Lock()
    lock.acquire()
    return lock


@dataclass(slots=True, eq=False)
class _Save:
    """One save, from the moment it queues until its committer is done with it. Not frozen:
    the committer writes what became of it for the saver waiting on it (under `_saves`).

    Attributes:
        written: the checkpoint as it is to be written.
        expected_step: the step its run must be at.
        row: its checkpoints row (serialised by the saver, before it queues).
        failure: why it is not saved (None once committed); as it starts, what a saver whose
            committer stopped on an error that is not the database's reads.
        done: its committer is done with it, committed or not.
        leads: it is (or has been appointed) the committer of the next transaction.
        wake: what its saver waits on, held until its committer (or appointer) releases it;
            None for a save that commits at once.
    """

    written: Checkpoint
    expected_step: int
    row: tuple[Any, ...]
    failure: str | None = "the transaction holding this save failed"
    done: bool = False
    leads: bool = False
    wake: threading.Lock | None = None

    def lost_race(self) -> str:
        return f"run {self.written.run_id} is no longer at step {self.expected_step}"


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on an exception); a database error
    (locked, full, read-only, corrupt) becomes a `StoreError`, as in every store."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}") from None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, *rest: object
    ) -> None:
        try:
            self.db.execute("ROLLBACK" if kind is not None else "COMMIT")
        except sqlite3.Error as failed:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise StoreError(f"{self.path}: {failed}") from None
        if isinstance(error, sqlite3.Error):
            raise StoreError(f"{self.path}: {error}") from None


def _row(written: Checkpoint) -> tuple[Any, ...]:
    """The checkpoints row of a checkpoint as written."""
    return (
        written.run_id,
        written.step,
        dumps(written.state, indent=False),
        written.schema,
        written.version,
        written.node,
        dumps(written.next_input, indent=False),
        written.created,
    )


def _checkpoint(row: tuple[Any, ...]) -> Checkpoint:
    run_id, step, state, schema, version, node, next_input, created = row
    return Checkpoint(
        run_id, step, stored(state), schema, version, node, stored(next_input), created
    )


def _entry(row: tuple[Any, ...]) -> JournalEntry:
    key, run_id, step, tool, arguments, status, result = row
    return JournalEntry(key, run_id, step, tool, stored(arguments), status, stored(result))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
