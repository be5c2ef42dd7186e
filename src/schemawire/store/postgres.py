"""Checkpoints in PostgreSQL, for many workers on many machines.

The tables are those of `schemawire.store.sqlite`, with JSONB for states, arguments and results,
created on first use in the first schema of the connection's ``search_path`` (``public`` unless
the URL says otherwise: ``postgresql://host/db?options=-csearch_path%3Dagents``). Times come from
the server's clock, the one clock all the workers share.

Every method is one statement or one transaction. ``save`` moves the run with ``UPDATE ... WHERE
step = expected_step`` and writes the checkpoint in the same statement: of two concurrent saves,
the second waits for the first to commit, re-reads the row, finds the run moved on and writes
nothing. That is what keeps two workers from both writing a step, claims or not.

Claims are session-level advisory locks (``pg_try_advisory_lock``) held by the store's
connection, rather than row locks:

- A row lock (``SELECT ... FOR UPDATE [SKIP LOCKED]``) lasts as long as its transaction. To hold a
  run through a step (model calls and tools, seconds to minutes) a worker would keep a
  transaction open all that time: idle in transaction, holding back vacuum, cut off by
  ``idle_in_transaction_session_timeout``, with its checkpoints either inside it (not durable
  until the claim ends) or on a second connection.
- An advisory lock belongs to the session, not to a transaction, so checkpoints commit one by
  one while it is held, and the server drops it when the session ends for any reason: `release`,
  `close`, the worker exiting or killed (its socket closes), or its machine or network gone (the
  server's TCP keepalives, set here to give up after about 25 seconds of silence). A crashed
  worker's claim lapses with no lease to renew; it lapses *shortly after* its connection ends,
  as soon as the server notices.

The lock key is a 64-bit hash of the run id, seeded with the ``runs`` table's oid so that stores
in two schemas of one database do not share keys; a collision makes a worker pass over a free run,
it never lets two hold one. The ``claims`` table says who took each claim (worker and server
pid) for people to read; the lock, not the row, is the claim. `PostgresStore.claim_next` finds
work for a worker: a running run whose lock nobody holds. Session-level locks need a direct
connection or a pooler in session mode: in transaction mode (PgBouncer's ``pool_mode =
transaction``) the lock would stay on a server session that other clients then use.

JSONB keeps what JSON means, not its text: object keys come back in JSONB's order, and a string
holding U+0000 cannot be stored (`StoreError`), which SQLite's text columns accept.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

try:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    from psycopg.rows import class_row
    from psycopg.types.json import Jsonb, set_json_loads
except ImportError as error:  # the optional extra, not a dependency of the SQLite store
    hint = "postgresql:// stores need psycopg: pip install 'schemawire[postgres]'"
    raise ImportError(hint) from error

from schemawire._json import dumps

# The names the SQLite store imports too: both implement one Store.
from schemawire.store.base import (
    CallStatus,
    Checkpoint,
    JournalEntry,
    RunInfo,
    RunStatus,
    StoreError,
    check_next,
    one_call_at_a_time,
    stored,
)

__all__ = ["PostgresStore"]

_compact = partial(dumps, indent=False)

_Row = TypeVar("_Row", Checkpoint, JournalEntry, RunInfo)

# A transaction-level lock around the CREATEs: concurrent CREATE TABLE IF NOT EXISTS can fail.
_SCHEMA_LOCK = 0x5C4E_3A77_1E57_0001
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, flow TEXT NOT NULL, status TEXT NOT NULL, step INTEGER NOT NULL,
    node TEXT, created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL, error TEXT);
CREATE INDEX IF NOT EXISTS runs_status ON runs (status, updated);
CREATE TABLE IF NOT EXISTS checkpoints (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, state JSONB NOT NULL, schema TEXT,
    version TEXT, node TEXT, next_input JSONB, created DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, step));
CREATE TABLE IF NOT EXISTS journal (
    key TEXT PRIMARY KEY, seq BIGINT GENERATED ALWAYS AS IDENTITY, run_id TEXT NOT NULL,
    step INTEGER NOT NULL, tool TEXT NOT NULL, arguments JSONB NOT NULL, status TEXT NOT NULL,
    result JSONB);
CREATE INDEX IF NOT EXISTS journal_run ON journal (run_id, seq);
CREATE TABLE IF NOT EXISTS claims (
    run_id TEXT PRIMARY KEY, worker TEXT NOT NULL, pid INTEGER NOT NULL,
    at DOUBLE PRECISION NOT NULL);
"""
# The server's clock: every worker's rows are ordered by one clock. One value per transaction.
_NOW = "extract(epoch FROM transaction_timestamp())::float8"
_KEY = "hashtextextended(%(run_id)s, %(seed)s)"

_CREATE_RUN = f"""
WITH made AS (
    INSERT INTO runs VALUES (%(run_id)s, %(flow)s, 'running', %(step)s, %(node)s, {_NOW}, {_NOW},
            NULL)
    ON CONFLICT (run_id) DO NOTHING RETURNING run_id)
INSERT INTO checkpoints
SELECT run_id, %(step)s, %(state)s, %(schema)s, %(version)s, %(node)s, %(next_input)s,
       {_NOW} FROM made
RETURNING created"""
_SAVE = f"""
WITH moved AS (
    UPDATE runs SET step = %(step)s, node = %(node)s, updated = {_NOW}
    WHERE run_id = %(run_id)s AND step = %(expected)s RETURNING run_id)
INSERT INTO checkpoints
SELECT run_id, %(step)s, %(state)s, %(schema)s, %(version)s, %(node)s, %(next_input)s,
       {_NOW} FROM moved
RETURNING created"""
_CHECKPOINTS = (
    "SELECT run_id, step, state, schema, version, node, next_input, created FROM checkpoints"
)
_RUNS = "SELECT run_id, flow, status, step, node, created, updated, error FROM runs"
_JOURNAL = "SELECT key, run_id, step, tool, arguments, status, result FROM journal"
_CALL_STARTED = """
INSERT INTO journal (key, run_id, step, tool, arguments, status, result)
VALUES (%s, %s, %s, %s, %s, 'started', NULL)
ON CONFLICT (key) DO UPDATE SET seq = DEFAULT, run_id = EXCLUDED.run_id, step = EXCLUDED.step,
    tool = EXCLUDED.tool, arguments = EXCLUDED.arguments, status = 'started', result = NULL"""
_RECORD_CLAIM = f"""
INSERT INTO claims VALUES (%(run_id)s, %(worker)s, pg_backend_pid(), {_NOW})
ON CONFLICT (run_id) DO UPDATE SET worker = EXCLUDED.worker, pid = EXCLUDED.pid, at = EXCLUDED.at"""
# Running runs whose lock no session holds, least recently moved first. pg_locks shows a bigint
# advisory key as its high half in classid and its low half in objid, with objsubid 1.
_FREE_RUNS = """
WITH held AS MATERIALIZED (
    SELECT (classid::bigint << 32) | objid::bigint AS key FROM pg_locks
    WHERE locktype = 'advisory' AND objsubid = 1 AND granted
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
SELECT run_id FROM runs
WHERE status = 'running' AND NOT EXISTS (
    SELECT FROM held WHERE held.key = hashtextextended(run_id, %(seed)s))
ORDER BY updated LIMIT 32"""
# The server gives up on a silent client after 10 s idle + 3 probes 5 s apart; overridable with
# the URL's own options, which come after these.
# No statement may hold a worker longer than 30 s, and a silent peer is noticed in about 25 s
# (the server's side here; the client's side is set on the connection below).
_SESSION_OPTIONS = (
    "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3 "
    "-c tcp_user_timeout=25000 -c statement_timeout=30000"
)
_CLIENT_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 25000,
}


@one_call_at_a_time
class PostgresStore:
    """A `Store` in a PostgreSQL database, shared by workers on many machines; one connection
    (one session, which holds the claims), which any number of threads may share."""

    def __init__(self, url: str, *, connect_timeout: int = 10) -> None:
        """
        Args:
            url: ``postgresql://user:password@host:port/database?...`` (any libpq URL).
            connect_timeout: seconds to wait for the server, unless the URL says.

        Raises:
            StoreError: the URL is malformed, the server cannot be reached, or the tables
                cannot be created.
        """
        self._lock = threading.RLock()  # see one_call_at_a_time
        try:
            params: dict[str, Any] = dict(conninfo_to_dict(url))
        except psycopg.ProgrammingError as error:
            raise StoreError(f"postgresql store: {error}") from None
        self._where = _describe(params)
        params.setdefault("connect_timeout", connect_timeout)
        for name, value in _CLIENT_KEEPALIVES.items():
            params.setdefault(name, value)
        params.setdefault("application_name", "schemawire")
        params["options"] = f"{_SESSION_OPTIONS} {params.get('options') or ''}".strip()
        self._held: dict[str, str] = {}  # run id -> the worker holding it through this store
        with self._translated():
            self._db = psycopg.connect(make_conninfo("", **params), autocommit=True)
            try:
                self._seed: int = self._prepare()
            except BaseException:
                self._db.close()
                raise

    def _prepare(self) -> int:
        """Create the tables if they are not there; return the claims' key seed."""
        set_json_loads(stored, self._db)
        with self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            self._db.execute(_SCHEMA)
        seed: int = self._value("SELECT 'runs'::regclass::oid::bigint")
        return seed

    # --- runs ----------------------------------------------------------------------------------

    def create_run(self, run_id: str, flow: str, first: Checkpoint) -> Checkpoint:
        with self._translated():
            made = self._db.execute(_CREATE_RUN, {**_row(first), "flow": flow}).fetchone()
        if made is None:
            raise StoreError(f"run {run_id} exists")
        return replace(first, created=made[0])

    def save(self, checkpoint: Checkpoint, *, expected_step: int) -> Checkpoint:
        check_next(checkpoint, expected_step)
        with self._translated():
            moved = self._db.execute(_SAVE, {**_row(checkpoint), "expected": expected_step})
            written = moved.fetchone()
        if written is None:
            raise StoreError(f"run {checkpoint.run_id} is no longer at step {expected_step}")
        return replace(checkpoint, created=written[0])

    def latest(self, run_id: str) -> Checkpoint | None:
        found = self._read(
            Checkpoint, f"{_CHECKPOINTS} WHERE run_id = %s ORDER BY step DESC LIMIT 1", (run_id,)
        )
        return found[0] if found else None

    def checkpoints(self, run_id: str) -> list[Checkpoint]:
        return self._read(Checkpoint, f"{_CHECKPOINTS} WHERE run_id = %s ORDER BY step", (run_id,))

    def finish(self, run_id: str, status: RunStatus, error: str | None = None) -> None:
        with self._translated():
            self._db.execute(
                f"UPDATE runs SET status = %s, error = %s, updated = {_NOW} WHERE run_id = %s",
                (status, error, run_id),
            )

    def run(self, run_id: str) -> RunInfo | None:
        found = self._read(RunInfo, f"{_RUNS} WHERE run_id = %s", (run_id,))
        return found[0] if found else None

    def runs(self, status: RunStatus | None = None, limit: int = 100) -> list[RunInfo]:
        if status is None:
            return self._read(RunInfo, f"{_RUNS} ORDER BY created DESC LIMIT %s", (limit,))
        return self._read(
            RunInfo, f"{_RUNS} WHERE status = %s ORDER BY created DESC LIMIT %s", (status, limit)
        )

    def runs_starting(self, prefix: str, limit: int = 10) -> list[RunInfo]:
        # left(), not LIKE: an id may hold _ or %, which LIKE would take as wildcards.
        query = f"{_RUNS} WHERE left(run_id, %s) = %s ORDER BY created DESC, run_id LIMIT %s"
        return self._read(RunInfo, query, (len(prefix), prefix, limit))

    # --- claims --------------------------------------------------------------------------------

    def claim(self, run_id: str, worker: str) -> bool:
        """Whether ``worker`` may run ``run_id`` now (see `Store.claim`).

        The claim is this store's session's: a second store, even with the same worker name,
        is another session and is refused while this one holds the run.

        Raises:
            StoreError: the connection is closed or lost (its claims have lapsed).
        """
        if run_id in self._held:
            if self._db.closed:
                raise StoreError(f"{self._where}: the connection is closed; its claims lapsed")
            return self._held[run_id] == worker
        with self._translated():
            if not self._value(f"SELECT pg_try_advisory_lock({_KEY})", self._key(run_id)):
                return False
            try:
                self._db.execute(_RECORD_CLAIM, {"run_id": run_id, "worker": worker})
            except psycopg.Error:
                self._db.execute(f"SELECT pg_advisory_unlock({_KEY})", self._key(run_id))
                raise
        self._held[run_id] = worker
        return True

    def claim_next(self, worker: str) -> str | None:
        """Claim a running run that no session holds, the least recently moved first.

        Returns:
            The run now claimed by ``worker``, or None if every running run is held (or was
            taken by another worker while this one tried).
        """
        with self._translated():
            free = self._db.execute(_FREE_RUNS, {"seed": self._seed})
            candidates = [row[0] for row in free.fetchall()]
        return next((run_id for run_id in candidates if self.claim(run_id, worker)), None)

    def release(self, run_id: str, worker: str) -> None:
        """Give up the claim, if ``worker`` holds it through this store."""
        if self._held.get(run_id) != worker:
            return
        with self._translated():
            try:
                self._db.execute(
                    "DELETE FROM claims WHERE run_id = %s AND pid = pg_backend_pid()", (run_id,)
                )
            finally:  # the lock is the claim: give it up even if the bookkeeping failed
                self._db.execute(f"SELECT pg_advisory_unlock({_KEY})", self._key(run_id))
                del self._held[run_id]

    def _key(self, run_id: str) -> dict[str, Any]:
        return {"run_id": run_id, "seed": self._seed}

    # --- the journal of tool calls -------------------------------------------------------------

    def call_started(self, entry: JournalEntry) -> None:
        with self._translated():
            self._db.execute(
                _CALL_STARTED,
                (entry.key, entry.run_id, entry.step, entry.tool, _jsonb(entry.arguments)),
            )

    def call_ended(self, key: str, status: CallStatus, result: Any) -> None:
        with self._translated():
            self._db.execute(
                "UPDATE journal SET status = %s, result = %s WHERE key = %s",
                (status, _jsonb(result), key),
            )

    def journal(self, run_id: str) -> list[JournalEntry]:
        return self._read(JournalEntry, f"{_JOURNAL} WHERE run_id = %s ORDER BY seq", (run_id,))

    def call(self, key: str) -> JournalEntry | None:
        found = self._read(JournalEntry, f"{_JOURNAL} WHERE key = %s", (key,))
        return found[0] if found else None

    def close(self) -> None:
        """Close the connection; the server then drops this store's claims."""
        self._held.clear()
        self._db.close()

    # --- plumbing ------------------------------------------------------------------------------

    def _read(self, kind: type[_Row], query: str, params: tuple[Any, ...]) -> list[_Row]:
        """The rows as ``kind``, built from the columns' names (which are its fields')."""
        with self._translated(), self._db.cursor(row_factory=class_row(kind)) as cursor:
            return cursor.execute(query, params).fetchall()

    def _value(self, query: str, params: dict[str, Any] | None = None) -> Any:
        row = self._db.execute(query, params).fetchone()
        return None if row is None else row[0]

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Raise what the driver raises as `StoreError`, naming the database (not the password)."""
        try:
            yield
        except psycopg.errors.UntranslatableCharacter as error:
            raise StoreError(f"{self._where}: JSONB cannot hold U+0000 ({error})") from error
        except psycopg.Error as error:
            raise StoreError(f"{self._where}: {error}") from error


def _row(checkpoint: Checkpoint) -> dict[str, Any]:
    return {
        "run_id": checkpoint.run_id,
        "step": checkpoint.step,
        "node": checkpoint.node,
        "state": _jsonb(checkpoint.state),
        "schema": checkpoint.schema,
        "version": checkpoint.version,
        "next_input": _jsonb(checkpoint.next_input),
    }


def _jsonb(value: Any) -> Jsonb:
    return Jsonb(value, dumps=_compact)


def _describe(params: dict[str, Any]) -> str:
    host = params.get("host") or params.get("hostaddr") or "localhost"
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{host}{port}/{params.get('dbname') or ''}"
