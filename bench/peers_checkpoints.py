"""LangGraph's checkpointers, timed writing checkpoints of the state in `bench/checkpoint_state.py`
(about 2 KB of JSON). Runs in the peers' environment (bench/.work/peers-venv), not schemawire's:
it imports LangGraph and that shared, dependency-free module only.

    python bench/peers_checkpoints.py WORK POSTGRES_URL SEQUENTIAL WORKERS EACH THREADS THREAD_EACH

`bench/checkpoints.py` drives it one JSON line at a time on stdin (each answered by one line on
stdout), so that it can take turns between LangGraph's savers and its own stores:
``{"open": ROW}`` makes a saver (a fresh SQLite file or PostgreSQL schema) and writes WARM_UP
untimed checkpoints per writer, and answers the row's label, group and details; ``{"write": ROW,
"n": N}`` has each writer put its next N checkpoints and answers the seconds; ``{"close": ROW}``
checks that every checkpoint is stored and closes; ``{"quit": true}`` ends. The rows:

- ``sqlite``: ``SqliteSaver`` on a connection opened as its ``from_conn_string`` opens it, so with
  the durability it ships with: it sets ``journal_mode=WAL`` and leaves ``synchronous`` at
  SQLite's default, read back and reported (FULL with this machine's SQLite);
  ``sqlite-normal``: the same with ``PRAGMA synchronous=NORMAL`` set on the connection first;
  ``sqlite-async``: ``AsyncSqliteSaver`` (the saver of ``ainvoke``) as shipped, in one event loop.
  One writer, SEQUENTIAL checkpoints.
- ``sqlite-threads-shared``: THREADS threads, each putting THREAD_EACH checkpoints to its own
  thread_id through one ``SqliteSaver`` on one connection opened with
  ``check_same_thread=False``, as its docs show for threads (every call takes the saver's one
  lock), at the durability it ships with. A saver and connection per thread on one file is left
  out: with the 5 s busy wait of the connection LangGraph opens, 16 of them failed here with
  "database is locked" (before that they wrote 270 to 370 checkpoints/s, a fifth of the shared
  saver's rate).
- ``postgres``: ``PostgresSaver.from_conn_string`` (one connection, autocommit), one writer.
- ``postgres-shared``: WORKERS threads, each putting EACH checkpoints to its own thread_id through
  one ``PostgresSaver`` over a ``ConnectionPool`` of WORKERS connections (the way LangGraph's docs
  set up a saver for a multi-threaded server; every call takes the saver's one lock);
  ``postgres-own``: the same threads with a saver and connection each (no shared lock).

Timed is ``put`` alone: the checkpoints, their configs and channel versions are built beforehand,
as LangGraph's loop builds them, every channel changed (so every channel is written).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import uuid
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from checkpoint_state import WARM_UP, Lanes, state

SYNCHRONOUS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}

Put = tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]


def puts(thread_id: str, count: int, next_version: Any) -> list[Put]:
    """``count`` (config, checkpoint, metadata, new_versions) for ``put``, one per step from step
    1, each config pointing at the checkpoint before, as LangGraph's loop makes them."""
    from langgraph.checkpoint.base.id import uuid6

    made: list[Put] = []
    versions: dict[str, Any] = {}
    parent: str | None = None
    for step in range(1, count + 1):
        values = state(step)
        new_versions = {key: next_version(versions.get(key), None) for key in values}
        versions.update(new_versions)
        checkpoint = {
            "v": 4,
            "id": str(uuid6(clock_seq=step)),
            "ts": datetime.now(UTC).isoformat(),
            "channel_values": values,
            "channel_versions": dict(versions),
            "versions_seen": {"agent": dict(versions)},
            "updated_channels": sorted(values),
        }
        configurable = {"thread_id": thread_id, "checkpoint_ns": ""}
        if parent is not None:
            configurable["checkpoint_id"] = parent
        metadata = {"source": "loop", "step": step, "parents": {}}
        made.append(({"configurable": configurable}, checkpoint, metadata, new_versions))
        parent = checkpoint["id"]
    return made


def put_all(saver: Any) -> Callable[[list[Put]], None]:
    def write(batch: list[Put]) -> None:
        for config, checkpoint, metadata, new_versions in batch:
            saver.put(config, checkpoint, metadata, new_versions)

    return write


@dataclass
class Saver:
    """One row: its writers, what closes it, how many checkpoints it must have stored, and what
    the table shows of it."""

    lanes: Lanes
    info: dict[str, Any]
    stored: Callable[[], int]
    expected: int
    stack: ExitStack = field(default_factory=ExitStack)


# --- SQLite ------------------------------------------------------------------------------------


def sqlite_saver(work: Path, count: int, synchronous: str | None) -> Saver:
    from langgraph.checkpoint.sqlite import SqliteSaver

    stack = ExitStack()
    # As SqliteSaver.from_conn_string opens it.
    conn = sqlite3.connect(work / f"lg-{uuid.uuid4().hex[:8]}.sqlite", check_same_thread=False)
    stack.callback(conn.close)
    if synchronous is not None:
        conn.execute(f"PRAGMA synchronous={synchronous}")
    saver = SqliteSaver(conn)
    saver.setup()
    effective = SYNCHRONOUS[conn.execute("PRAGMA synchronous").fetchone()[0]]
    journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    thread = uuid.uuid4().hex
    lanes = Lanes([(put_all(saver), puts(thread, WARM_UP + count, saver.get_next_version))])

    def stored() -> int:
        query = "SELECT count(*) FROM checkpoints WHERE thread_id = ?"
        return int(conn.execute(query, (thread,)).fetchone()[0])

    info = {
        "group": f"SQLite, synchronous={effective}",
        "synchronous": effective,
        "journal_mode": journal,
    }
    return Saver(lanes, info, stored, WARM_UP + count, stack)


def sqlite_threads(work: Path, threads: int, each: int) -> Saver:
    """``threads`` threads, each putting ``each`` checkpoints to its own thread_id through one
    saver on one connection (as LangGraph's docs set it up for threads), at the durability the
    saver ships with."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    stack = ExitStack()
    conn = sqlite3.connect(work / f"lg-{uuid.uuid4().hex[:8]}.sqlite", check_same_thread=False)
    stack.callback(conn.close)
    saver = SqliteSaver(conn)
    saver.setup()
    effective = SYNCHRONOUS[conn.execute("PRAGMA synchronous").fetchone()[0]]
    journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    jobs = [puts(uuid.uuid4().hex, WARM_UP + each, saver.get_next_version) for _ in range(threads)]
    lanes = Lanes([(put_all(saver), job) for job in jobs])

    def stored() -> int:
        return int(conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0])

    info = {
        "group": f"SQLite, synchronous={effective}, {threads} threads",
        "synchronous": effective,
        "journal_mode": journal,
        "workers": threads,
    }
    return Saver(lanes, info, stored, threads * (WARM_UP + each), stack)


def async_sqlite_saver(work: Path, count: int) -> Saver:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    loop = asyncio.new_event_loop()
    stack, inner = ExitStack(), AsyncExitStack()
    stack.callback(loop.close)
    stack.callback(lambda: loop.run_until_complete(inner.aclose()))
    path = str(work / f"lg-{uuid.uuid4().hex[:8]}.sqlite")
    saver = loop.run_until_complete(
        inner.enter_async_context(AsyncSqliteSaver.from_conn_string(path))
    )
    loop.run_until_complete(saver.setup())

    async def read(query: str, *args: Any) -> Any:
        async with saver.conn.execute(query, args) as cursor:
            return (await cursor.fetchone())[0]

    async def put_many(batch: list[Put]) -> None:
        for config, checkpoint, metadata, new_versions in batch:
            await saver.aput(config, checkpoint, metadata, new_versions)

    effective = SYNCHRONOUS[loop.run_until_complete(read("PRAGMA synchronous"))]
    thread = uuid.uuid4().hex
    work_items = puts(thread, WARM_UP + count, saver.get_next_version)
    lanes = Lanes([(lambda batch: loop.run_until_complete(put_many(batch)), work_items)])

    def stored() -> int:
        query = "SELECT count(*) FROM checkpoints WHERE thread_id = ?"
        return int(loop.run_until_complete(read(query, thread)))

    info = {"group": f"SQLite, synchronous={effective}", "synchronous": effective}
    return Saver(lanes, info, stored, WARM_UP + count, stack)


# --- PostgreSQL --------------------------------------------------------------------------------


def fresh_schema(url: str, prefix: str) -> str:
    """A new schema on the server; the URL whose ``search_path`` starts there."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(f"CREATE SCHEMA {name}")
    return f"{url}?options=-csearch_path%3D{name}"


def counter(url: str) -> Callable[[], int]:
    def stored() -> int:
        import psycopg

        with psycopg.connect(url, connect_timeout=10) as db:
            row = db.execute("SELECT count(*) FROM checkpoints").fetchone()
        return int(row[0]) if row else 0

    return stored


def postgres_saver(url: str, count: int) -> Saver:
    from langgraph.checkpoint.postgres import PostgresSaver

    url = fresh_schema(url, "lg_one")
    stack = ExitStack()
    saver = stack.enter_context(PostgresSaver.from_conn_string(url))
    saver.setup()
    work_items = puts(uuid.uuid4().hex, WARM_UP + count, saver.get_next_version)
    lanes = Lanes([(put_all(saver), work_items)])
    return Saver(lanes, {"group": "PostgreSQL, one thread"}, counter(url), WARM_UP + count, stack)


def postgres_threads(url: str, workers: int, each: int, shared: bool) -> Saver:
    """``workers`` threads, each putting ``each`` checkpoints to its own thread_id: through one
    saver over a pool (``shared``) or through a saver and connection of its own."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    url = fresh_schema(url, "lg_pool" if shared else "lg_own")
    options = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    stack = ExitStack()
    if shared:
        pool = ConnectionPool(
            url, min_size=workers, max_size=workers, kwargs=options, open=True, timeout=30
        )
        stack.callback(pool.close)
        pool.wait(timeout=30)
        savers = [PostgresSaver(pool)] * workers
    else:
        savers = []
        for _ in range(workers):
            conn = Connection.connect(url, **options)
            stack.callback(conn.close)
            savers.append(PostgresSaver(conn))
    savers[0].setup()
    jobs = [puts(uuid.uuid4().hex, WARM_UP + each, saver.get_next_version) for saver in savers]
    lanes = Lanes([(put_all(saver), job) for saver, job in zip(savers, jobs, strict=True)])
    info = {"group": f"PostgreSQL, {workers} threads", "workers": workers}
    return Saver(lanes, info, counter(url), workers * (WARM_UP + each), stack)


# --- the protocol ------------------------------------------------------------------------------


def rows(
    work: Path,
    url: str,
    *,
    sequential: int,
    workers: int,
    each: int,
    threads: int,
    thread_each: int,
) -> dict[str, Any]:
    """Per row: its label, its package, and what opens it."""
    sqlite, postgres = "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres"
    return {
        "sqlite-threads-shared": (
            f"LangGraph SqliteSaver, {threads} threads sharing one saver",
            sqlite,
            lambda: sqlite_threads(work, threads, thread_each),
        ),
        "sqlite": ("LangGraph SqliteSaver", sqlite, lambda: sqlite_saver(work, sequential, None)),
        "sqlite-normal": (
            "LangGraph SqliteSaver, NORMAL",
            sqlite,
            lambda: sqlite_saver(work, sequential, "NORMAL"),
        ),
        "sqlite-async": (
            "LangGraph AsyncSqliteSaver",
            sqlite,
            lambda: async_sqlite_saver(work, sequential),
        ),
        "postgres": ("LangGraph PostgresSaver", postgres, lambda: postgres_saver(url, sequential)),
        "postgres-shared": (
            f"LangGraph PostgresSaver, {workers} threads sharing one saver and pool",
            postgres,
            lambda: postgres_threads(url, workers, each, shared=True),
        ),
        "postgres-own": (
            f"LangGraph PostgresSaver, {workers} threads with a saver each",
            postgres,
            lambda: postgres_threads(url, workers, each, shared=False),
        ),
    }


def main() -> None:
    work, url = Path(sys.argv[1]), sys.argv[2]
    sequential, workers, each = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    threads, thread_each = int(sys.argv[6]), int(sys.argv[7])
    work.mkdir(parents=True, exist_ok=True)
    known = rows(
        work,
        url,
        sequential=sequential,
        workers=workers,
        each=each,
        threads=threads,
        thread_each=thread_each,
    )
    opened: dict[str, Saver] = {}
    for line in sys.stdin:
        command = json.loads(line)
        if "quit" in command:
            break
        if "open" in command:
            label, package, make = known[command["open"]]
            saver = make()
            saver.lanes.warm_up()
            opened[command["open"]] = saver
            answer = {"label": label, "version": version(package), **saver.info}
        elif "write" in command:
            answer = {"seconds": opened[command["write"]].lanes.write(command["n"])}
        else:
            saver = opened.pop(command["close"])
            stored = saver.stored()
            saver.stack.close()
            assert stored == saver.expected, f"{stored} checkpoints stored, {saver.expected} put"
            answer = {"stored": stored}
        print(json.dumps(answer), flush=True)
    for saver in opened.values():
        saver.stack.close()
    for path in work.glob("lg-*.sqlite*"):
        path.unlink()


if __name__ == "__main__":
    main()
