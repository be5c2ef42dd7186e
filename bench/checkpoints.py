"""Checkpoint bench: checkpoints per second of a 2 KB state (`bench/checkpoint_state.py`), written
by schemawire's stores and by LangGraph's checkpointers, on SQLite and on one PostgreSQL server.

- SQLite, one thread, a fresh file in bench/.work/checkpoints per contender and round:
  `SqliteStore` with ``synchronous=FULL`` (its default) and ``NORMAL``, beside LangGraph's
  ``SqliteSaver`` as it ships (``journal_mode=WAL``, ``synchronous`` left at SQLite's default:
  FULL with this machine's SQLite, read back from the saver's connection and shown) and with
  ``PRAGMA synchronous=NORMAL`` set on its connection; ``AsyncSqliteSaver`` as an extra row.
- SQLite, THREADS threads at FULL, in one process, each writing THREAD_EACH checkpoints to its
  own run: through one `SqliteStore` they share (whose saves share commits), beside LangGraph's
  ``SqliteSaver`` shared by the threads on one connection as its docs set it up (its one lock;
  why not a saver per thread is in bench/peers_checkpoints.py); the floor is one INSERT per
  transaction on one connection the threads take turns on.
- PostgreSQL: one temporary server (tests/store/postgres_server.py) for every contender, started
  with PostgreSQL's durable defaults (``fsync``, ``synchronous_commit`` and ``full_page_writes``
  on, unlike the test server), a fresh schema per contender and round. One thread; and WORKERS
  threads, each writing EACH checkpoints to its own run through its own `PostgresStore` (so its
  own connection), beside LangGraph's ``PostgresSaver`` shared by the threads over a pool (its
  one lock) and one saver per thread.
- The floor of each: the state's compact JSON in one ``INSERT`` per transaction, nothing else,
  at the same durability: what the database alone costs.

Threads, not processes, for the concurrent writers: LangGraph's lock is a ``threading.Lock``,
which only threads in one process share, so threads are the setup the comparison is about; and
psycopg releases the GIL while it waits for the server, so ten threads keep ten transactions in
flight. On this two-core machine, whose cores the server needs as much as the writers, ten
processes wrote no faster than ten threads (4,600 to 6,500 checkpoints/s either way).

schemawire's rows come with validation on (the state checked against ``STATE_SCHEMA`` before
each save, as ``repository.validator(file).violations(state)`` in `schemawire.host.workflow`,
here the same `CompiledSchema` from `compile_schema`) and off, to show what validation costs.
Timed: validation and ``save`` (ours), ``put`` (LangGraph's), after a few untimed writes; the
checkpoints are built beforehand.

The machine is shared and its disk's flush time swings several-fold from one second to the
next, so the contenders of a group (SQLite FULL, SQLite NORMAL, PostgreSQL one thread,
PostgreSQL WORKERS threads) are open together and take turns, CHUNK checkpoints per writer a
turn, the first to go rotating: floor, ours, and LangGraph's (bench/peers_checkpoints.py in
bench/.work/peers-venv, driven a line at a time). A contender's figure is its checkpoints over
the sum of its turns' seconds; every figure in the table is the median of the rounds.
"""

from __future__ import annotations

import json
import queue
import shutil
import sqlite3
import statistics
import subprocess
import threading
import uuid
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import psycopg
from psycopg.types.json import Jsonb
from tests.store import postgres_server

from bench.checkpoint_state import STATE_SCHEMA, WARM_UP, Lanes, size, state
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.store.base import Checkpoint, Store
from schemawire.store.postgres import PostgresStore
from schemawire.store.sqlite import SqliteStore

PEERS_PYTHON = Path(__file__).parent / ".work/peers-venv/bin/python"
SEQUENTIAL, CHUNK = 3000, 100  # checkpoints per one-thread writer, and per turn
WORKERS, EACH, CHUNK_EACH = 10, 500, 50  # concurrent writers, checkpoints each, per turn each
# Concurrent SQLite writers at FULL, checkpoints each, per turn each.
THREADS, THREAD_EACH, CHUNK_THREAD = 16, 200, 100
PEERS_SECONDS = 300  # the longest the peers' script may take to answer
# PostgreSQL's durable defaults: the test server's fsync=off and synchronous_commit=off left out.
SERVER_SETTINGS = "-c listen_addresses=127.0.0.1 -c max_connections=80"

OURS, FLOOR = "schemawire", "floor"
SQLITE_FULL, SQLITE_NORMAL = "SQLite, synchronous=FULL", "SQLite, synchronous=NORMAL"
SQLITE_MANY = f"SQLite, synchronous=FULL, {THREADS} threads"
PG_ONE, PG_MANY = "PostgreSQL, one thread", f"PostgreSQL, {WORKERS} threads"
LG_SQLITE, LG_SQLITE_NORMAL = "LangGraph SqliteSaver", "LangGraph SqliteSaver, NORMAL"
LG_SQLITE_SHARED = f"LangGraph SqliteSaver, {THREADS} threads sharing one saver"
LG_POSTGRES = "LangGraph PostgresSaver"
LG_SHARED = f"LangGraph PostgresSaver, {WORKERS} threads sharing one saver and pool"
LG_OWN = f"LangGraph PostgresSaver, {WORKERS} threads with a saver each"
# Per group, the LangGraph rows each of ours is compared with (the first is the goal's).
ANCHORS = {
    SQLITE_FULL: [LG_SQLITE],
    SQLITE_NORMAL: [LG_SQLITE_NORMAL],
    SQLITE_MANY: [LG_SQLITE_SHARED],
    PG_ONE: [LG_POSTGRES],
    PG_MANY: [LG_SHARED, LG_OWN],
}
GOALS = {
    SQLITE_FULL: (LG_SQLITE, 1.1),
    SQLITE_MANY: (LG_SQLITE_SHARED, 3.0),
    PG_MANY: (LG_SHARED, 2.0),
}

Rows = dict[str, dict[str, Any]]


@dataclass
class Contender:
    """One row of the table while it is measured: ``write(n)`` has each of its writers write its
    next n checkpoints and gives the seconds; ``close`` checks they are all stored."""

    label: str
    info: dict[str, Any]
    write: Callable[[int], float]
    close: Callable[[], None]


def run(work: Path, rounds: int) -> dict[str, Any]:
    """Every contender, ``rounds`` rounds: the rows (label: group, median checkpoints/s and the
    rounds' figures), the state's size and the server's settings."""
    work = work / "checkpoints"
    work.mkdir(parents=True, exist_ok=True)
    validator = compile_schema(STATE_SCHEMA)
    assert not validator.violations(state(1))
    state_bytes = statistics.fmean(size(state(step)) for step in range(100))
    print(
        f"checkpoints of a {state_bytes:,.0f}-byte state: {SEQUENTIAL} by one writer, "
        f"{THREAD_EACH} by each of {THREADS} SQLite threads, {EACH} by each of {WORKERS} "
        f"PostgreSQL threads, {rounds} rounds",
        flush=True,
    )
    server = _start_server()
    samples: dict[str, list[dict[str, Any]]] = {}
    try:
        facts = _server_facts(server.url)
        print(f"  {facts} started in {server.started_in:.1f} s", flush=True)
        with _Peers(work, server.url) as peers:
            for number in range(rounds):
                print(f"  round {number + 1}", flush=True)
                for group, makers, total, chunk in _plan(work, server.url, validator, peers):
                    for label, row in _measure(group, makers, total, chunk).items():
                        samples.setdefault(label, []).append(row)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    results: Rows = {}
    for label, rows in samples.items():
        rates = [row["per_second"] for row in rows]
        results[label] = {**rows[0], "per_second": statistics.median(rates), "rounds": rates}
    return {"state_bytes": state_bytes, "server": facts, "rows": results}


def _plan(
    work: Path, url: str, validator: CompiledSchema, peers: _Peers
) -> list[tuple[str, list[Callable[[], Contender]], int, int]]:
    """Per group: what makes its contenders (floor, ours, LangGraph's), the checkpoints each
    writer writes and how many a turn."""
    return [
        (
            SQLITE_FULL,
            [
                partial(_floor_sqlite, work, "FULL"),
                partial(_ours_sqlite, work, "FULL", validator),
                partial(_ours_sqlite, work, "FULL", None),
                partial(peers.open, "sqlite"),
                partial(peers.open, "sqlite-async"),
            ],
            SEQUENTIAL,
            CHUNK,
        ),
        (
            SQLITE_NORMAL,
            [
                partial(_floor_sqlite, work, "NORMAL"),
                partial(_ours_sqlite, work, "NORMAL", validator),
                partial(_ours_sqlite, work, "NORMAL", None),
                partial(peers.open, "sqlite-normal"),
            ],
            SEQUENTIAL,
            CHUNK,
        ),
        (
            SQLITE_MANY,
            [
                partial(_floor_sqlite, work, "FULL", THREADS),
                partial(_ours_sqlite_threads, work, validator),
                partial(_ours_sqlite_threads, work, None),
                partial(peers.open, "sqlite-threads-shared"),
            ],
            THREAD_EACH,
            CHUNK_THREAD,
        ),
        (
            PG_ONE,
            [
                partial(_floor_postgres, url, 1),
                partial(_ours_postgres, url, 1, validator),
                partial(_ours_postgres, url, 1, None),
                partial(peers.open, "postgres"),
            ],
            SEQUENTIAL,
            CHUNK,
        ),
        (
            PG_MANY,
            [
                partial(_floor_postgres, url, WORKERS),
                partial(_ours_postgres, url, WORKERS, validator),
                partial(_ours_postgres, url, WORKERS, None),
                partial(peers.open, "postgres-shared"),
                partial(peers.open, "postgres-own"),
            ],
            EACH,
            CHUNK_EACH,
        ),
    ]


def _measure(group: str, makers: list[Callable[[], Contender]], total: int, chunk: int) -> Rows:
    """Open the group's contenders (each warmed up), then take turns, ``chunk`` checkpoints per
    writer a turn, the first to go rotating, until each writer has written ``total``."""
    contenders: list[Contender] = []
    try:
        for make in makers:
            contenders.append(make())
        seconds = dict.fromkeys(range(len(contenders)), 0.0)
        for turn in range(total // chunk):
            first = turn % len(contenders)
            for index in [*range(first, len(contenders)), *range(first)]:
                seconds[index] += contenders[index].write(chunk)
    except BaseException:
        for contender in contenders:
            with suppress(Exception):  # the first error is the one to see
                contender.close()
        raise
    for contender in contenders:
        contender.close()
    rows: Rows = {}
    for index, contender in enumerate(contenders):
        writers = contender.info.get("workers", 1)
        count = writers * (total // chunk) * chunk
        rows[contender.label] = {
            "group": group,
            **contender.info,
            "checkpoints": count,
            "per_second": count / seconds[index],
        }
        print(f"    {contender.label}: {count / seconds[index]:,.0f} checkpoints/s", flush=True)
    return rows


# --- the server --------------------------------------------------------------------------------


def _start_server() -> postgres_server.TemporaryPostgres:
    """The tests' temporary server, with PostgreSQL's durable defaults instead of theirs."""
    settings = postgres_server.SETTINGS
    postgres_server.SETTINGS = SERVER_SETTINGS
    try:
        return postgres_server.start_postgres()
    finally:
        postgres_server.SETTINGS = settings


def _server_facts(url: str) -> str:
    """The server's version and durability settings, for the table's caption."""
    names = ("fsync", "synchronous_commit", "full_page_writes")
    query = "SELECT current_setting('server_version'), " + ", ".join(
        f"current_setting('{name}')" for name in names
    )
    with psycopg.connect(url, connect_timeout=10) as db:
        row = db.execute(query).fetchone()
    assert row is not None
    settings = ", ".join(f"{name}={value}" for name, value in zip(names, row[1:], strict=True))
    return f"PostgreSQL {str(row[0]).split()[0]} ({settings})"


def _fresh_schema(url: str, prefix: str) -> str:
    """A new schema on the server; the URL whose ``search_path`` starts there."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(f"CREATE SCHEMA {name}")
    return f"{url}?options=-csearch_path%3D{name}"


# --- schemawire's stores -----------------------------------------------------------------------


def _store_lane(
    store: Store, count: int, validator: CompiledSchema | None
) -> tuple[Callable[[list[Checkpoint]], None], list[Checkpoint], str]:
    """A new run in ``store``, and a writer of its checkpoints (steps 1..count, as the workflow
    writes them), validating each first as the workflow does when a validator is given."""
    run_id = uuid.uuid4().hex
    schema, version = STATE_SCHEMA["$id"], STATE_SCHEMA["x-version"]
    store.create_run(run_id, "bench", Checkpoint(run_id, 0, {}, schema, version, "agent"))
    checkpoints = [
        Checkpoint(run_id, step, state(step), schema, version, "agent", None)
        for step in range(1, count + 1)
    ]

    def write(batch: list[Checkpoint]) -> None:
        for checkpoint in batch:
            if validator is not None:
                violations = validator.violations(checkpoint.state)
                if violations:
                    raise AssertionError(f"state of step {checkpoint.step}: {violations[0]}")
            store.save(checkpoint, expected_step=checkpoint.step - 1)

    return write, checkpoints, run_id


def _stores(
    label: str,
    info: dict[str, Any],
    stores: list[Store],
    count: int,
    validator: CompiledSchema | None,
) -> Contender:
    """A contender writing through ``stores``, one writer each, ``count`` checkpoints each."""
    made = [_store_lane(store, WARM_UP + count, validator) for store in stores]
    lanes = Lanes([(write, checkpoints) for write, checkpoints, _ in made])
    lanes.warm_up()

    def close() -> None:
        try:
            for store, (_, _, run_id) in zip(stores, made, strict=True):
                stored = len(store.checkpoints(run_id))
                assert stored == WARM_UP + count + 1, f"{stored} checkpoints in run {run_id}"
        finally:
            for store in stores:
                store.close()

    label = f"{label}, validation {'on' if validator is not None else 'off'}"
    return Contender(label, {**info, "ours": True}, lanes.write, close)


def _ours_sqlite(work: Path, synchronous: str, validator: CompiledSchema | None) -> Contender:
    path = work / f"ours-{uuid.uuid4().hex[:8]}.sqlite"
    store = SqliteStore(path, synchronous=synchronous)
    return _stores(f"{OURS} SqliteStore, {synchronous}", {}, [store], SEQUENTIAL, validator)


def _ours_sqlite_threads(work: Path, validator: CompiledSchema | None) -> Contender:
    """THREADS threads writing THREAD_EACH checkpoints each to a run of its own, through one
    store at FULL that they share."""
    store = SqliteStore(work / f"ours-{uuid.uuid4().hex[:8]}.sqlite", synchronous="FULL")
    label = f"{OURS} SqliteStore, FULL, {THREADS} threads sharing one store"
    return _stores(label, {"workers": THREADS}, [store] * THREADS, THREAD_EACH, validator)


def _ours_postgres(url: str, workers: int, validator: CompiledSchema | None) -> Contender:
    """One writer of SEQUENTIAL checkpoints, or ``workers`` threads writing EACH, each thread
    through a store (a connection) of its own, to a run of its own."""
    schema_url = _fresh_schema(url, "sw")
    stores: list[Store] = [PostgresStore(schema_url) for _ in range(workers)]
    if workers == 1:
        return _stores(f"{OURS} PostgresStore", {}, stores, SEQUENTIAL, validator)
    return _stores(
        f"{OURS} PostgresStore, {workers} threads with a store each",
        {"workers": workers},
        stores,
        EACH,
        validator,
    )


# --- the floor: one INSERT of the state's JSON per transaction, nothing else -------------------

_FLOOR_TABLE = """CREATE TABLE checkpoints (run_id TEXT NOT NULL, step INTEGER NOT NULL,
    state {} NOT NULL, PRIMARY KEY (run_id, step))"""


def _floor_sqlite(work: Path, synchronous: str, threads: int = 1) -> Contender:
    """``BEGIN IMMEDIATE``, the ``INSERT``, ``COMMIT``, in WAL mode: from one writer, or from
    ``threads`` threads taking turns on one connection (THREAD_EACH each)."""
    path = work / f"floor-{uuid.uuid4().hex[:8]}.sqlite"
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    db.execute(_FLOOR_TABLE.format("TEXT"))
    turn = threading.Lock()
    count = SEQUENTIAL if threads == 1 else THREAD_EACH

    def write(batch: list[tuple[str, int, Any]]) -> None:
        for run_id, step, value in batch:
            text = orjson.dumps(value).decode()
            with turn:
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO checkpoints VALUES (?, ?, ?)", (run_id, step, text))
                db.execute("COMMIT")

    lanes = Lanes([(write, _floor_items(count)) for _ in range(threads)])
    lanes.warm_up()

    def close() -> None:
        stored = db.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        db.close()
        assert stored == threads * (WARM_UP + count), stored

    if threads == 1:
        return Contender(f"{FLOOR}: sqlite3, {synchronous}", {"floor": True}, lanes.write, close)
    label = f"{FLOOR}: sqlite3, {synchronous}, {threads} threads taking turns on one connection"
    return Contender(label, {"floor": True, "workers": threads}, lanes.write, close)


def _floor_postgres(url: str, workers: int) -> Contender:
    """The ``INSERT`` in autocommit, from one writer or from ``workers`` threads, a connection
    each."""
    count = SEQUENTIAL if workers == 1 else EACH
    schema_url = _fresh_schema(url, "floor")
    connections = [
        psycopg.connect(schema_url, autocommit=True, connect_timeout=10) for _ in range(workers)
    ]
    connections[0].execute(_FLOOR_TABLE.format("JSONB"))

    def writer(db: psycopg.Connection[Any]) -> Callable[[list[tuple[str, int, Any]]], None]:
        def write(batch: list[tuple[str, int, Any]]) -> None:
            for run_id, step, value in batch:
                db.execute(
                    "INSERT INTO checkpoints VALUES (%s, %s, %s)",
                    (run_id, step, Jsonb(value, dumps=_dumps)),
                )

        return write

    lanes = Lanes([(writer(db), _floor_items(count)) for db in connections])
    lanes.warm_up()

    def close() -> None:
        row = connections[0].execute("SELECT count(*) FROM checkpoints").fetchone()
        for db in connections:
            db.close()
        assert row is not None
        assert row[0] == workers * (WARM_UP + count), row

    if workers == 1:
        return Contender(f"{FLOOR}: psycopg", {"floor": True}, lanes.write, close)
    label = f"{FLOOR}: psycopg, {workers} threads with a connection each"
    return Contender(label, {"floor": True, "workers": workers}, lanes.write, close)


def _floor_items(count: int) -> list[tuple[str, int, Any]]:
    run_id = uuid.uuid4().hex
    return [(run_id, step, state(step)) for step in range(1, WARM_UP + count + 1)]


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


# --- LangGraph's, in the peers' environment ----------------------------------------------------


class _Peers:
    """`bench/peers_checkpoints.py` in the peers' environment, driven a line at a time."""

    def __init__(self, work: Path, url: str) -> None:
        if not PEERS_PYTHON.exists():
            raise SystemExit(
                f"the peers' environment is missing: {PEERS_PYTHON} (make bench makes it)"
            )
        script = Path(__file__).parent / "peers_checkpoints.py"
        command = [
            str(PEERS_PYTHON),
            str(script),
            str(work),
            url,
            str(SEQUENTIAL),
            str(WORKERS),
            str(EACH),
            str(THREADS),
            str(THREAD_EACH),
        ]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")  # the script ended

    def call(self, **command: Any) -> dict[str, Any]:
        """Send one command; its answer (at most PEERS_SECONDS later)."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        try:
            line = self.lines.get(timeout=PEERS_SECONDS)
        except queue.Empty:
            raise TimeoutError(
                f"the peers' script gave no answer to {command} in {PEERS_SECONDS} s"
            ) from None
        if not line:
            raise RuntimeError(f"the peers' script ended on {command} (its error is above)")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def open(self, row: str) -> Contender:
        info = self.call(open=row)  # its group is the durability it found, as the table shows
        label = info.pop("label")

        def write(n: int) -> float:
            return float(self.call(write=row, n=n)["seconds"])

        def close() -> None:
            self.call(close=row)

        return Contender(label, info, write, close)

    def __enter__(self) -> _Peers:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.process.poll() is None:
                assert self.process.stdin is not None
                self.process.stdin.write(json.dumps({"quit": True}) + "\n")
                self.process.stdin.close()
            self.process.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait(timeout=60)


# --- the table ---------------------------------------------------------------------------------


def print_table(results: dict[str, Any]) -> None:
    rows: Rows = results["rows"]
    print()
    print(
        f"| checkpoints of a {results['state_bytes']:,.0f}-byte state | checkpoints/s "
        "| µs per checkpoint | µs over the floor | x LangGraph |"
    )
    print("|---|---:|---:|---:|---:|")
    groups = dict.fromkeys(row["group"] for row in rows.values())
    for group in groups:
        print(f"| **{group}** | | | | |")
        members = {label: row for label, row in rows.items() if row["group"] == group}
        floor = next((row for row in members.values() if row.get("floor")), None)
        anchors = [rows[a] for a in ANCHORS.get(group, []) if a in rows]
        for label, row in members.items():
            name = f"{label} {row['version']}" if "version" in row else label
            micros = 1e6 / row["per_second"]
            over = ""
            if floor is not None and row is not floor:
                over = f"{micros - 1e6 / floor['per_second']:,.0f}"
            ratio = ""
            if row.get("ours") and anchors:
                ratio = " / ".join(f"{row['per_second'] / a['per_second']:.2f}x" for a in anchors)
            print(f"| {name} | {row['per_second']:,.0f} | {micros:,.0f} | {over} | {ratio} |")
    print()
    print(
        f"{results.get('server', 'PostgreSQL')}, one server for every contender. The floor: "
        "one INSERT of the state's JSON per transaction, at the same durability."
    )
    if SQLITE_MANY in groups:
        print(
            f"{SQLITE_MANY}: x LangGraph is against its saver shared by the threads on one "
            "connection (one lock), as its docs set it up."
        )
    if PG_MANY in groups:
        print(
            f"{PG_MANY}: x LangGraph is against its saver shared by the threads over a pool "
            "(one lock) / against a saver and connection per thread."
        )
    for group, (anchor, goal) in GOALS.items():
        ours = next(
            (
                row
                for label, row in rows.items()
                if row["group"] == group and row.get("ours") and label.endswith("validation on")
            ),
            None,
        )
        if ours is None or anchor not in rows:
            continue
        ratio = ours["per_second"] / rows[anchor]["per_second"]
        verdict = "met" if ratio >= goal else "missed"
        print(
            f"goal, {group}, validation on: at least {goal:.1f}x {anchor}: {ratio:.2f}x, {verdict}"
        )


if __name__ == "__main__":
    work = Path(__file__).parent / ".work"
    work.mkdir(exist_ok=True)
    print_table(run(work, rounds=3))
