"""PostgreSQL's own behaviour: claims held by a session and lapsing with it, many workers in
many processes on one database, and what JSONB cannot hold."""

from __future__ import annotations

import multiprocessing
import queue
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from schemawire.store import Checkpoint, StoreError, open_store
from schemawire.store.postgres import PostgresStore
from tests.store.other_process import claimed_in_another_process, crash, exit_normally
from tests.store.postgres_server import TemporaryPostgres, free_port
from tests.store.racing_worker import Race, Report, race

pytestmark = pytest.mark.slow  # a real PostgreSQL server

SECONDS = 30


def wait_until_unclaimed(url: str, run_id: str) -> None:
    """Block until no session holds ``run_id``'s claim (at most SECONDS, timed by the server):
    take the claim's advisory lock, then give it back. A session's locks go when the server
    notices the session ended, a moment after the client's socket closes."""
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(f"SET lock_timeout = '{SECONDS}s'")
        key = "hashtextextended(%s, 'runs'::regclass::oid::bigint)"
        admin.execute(f"SELECT pg_advisory_lock({key})", (run_id,))
        admin.execute(f"SELECT pg_advisory_unlock({key})", (run_id,))


def start_run(store: PostgresStore, run_id: str) -> None:
    store.create_run(run_id, "refunds", Checkpoint(run_id, 0, {"step": 0}, None, None, "next"))


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(postgres_url)
    yield store
    store.close()


# --- claims lapse with their session ------------------------------------------------------------


def test_a_claim_lapses_when_its_store_is_closed(postgres_url: str) -> None:
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        assert first.claim("r1", "worker-1")
        assert not second.claim("r1", "worker-2")

        first.close()
        wait_until_unclaimed(postgres_url, "r1")

        assert second.claim("r1", "worker-2")
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("end", [exit_normally, crash], ids=["exits", "is killed"])
def test_a_claim_holds_while_its_worker_process_lives_and_lapses_when_it_ends(
    store: PostgresStore, postgres_url: str, end: Callable[[subprocess.Popen[str]], None]
) -> None:
    with claimed_in_another_process(postgres_url, "r1") as other:
        assert not store.claim("r1", "worker-1")
        end(other)
        wait_until_unclaimed(postgres_url, "r1")
        assert store.claim("r1", "worker-1")


def test_the_same_worker_name_on_another_connection_is_another_claimant(
    postgres_url: str,
) -> None:
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        assert first.claim("r1", "worker")
        assert not second.claim("r1", "worker")
        second.release("r1", "worker")
        assert not second.claim("r1", "worker"), "a release through another store does nothing"
    finally:
        first.close()
        second.close()


def test_a_closed_store_does_not_answer_for_its_claims(store: PostgresStore) -> None:
    assert store.claim("r1", "worker-1")
    store.close()
    with pytest.raises(StoreError):
        store.claim("r1", "worker-1")


def test_the_claims_table_names_the_holder_until_release(
    store: PostgresStore, postgres_url: str
) -> None:
    assert store.claim("r1", "worker-1")
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        holders = "SELECT run_id, worker, pid IN (SELECT pid FROM pg_stat_activity) FROM claims"
        assert admin.execute(holders).fetchall() == [("r1", "worker-1", True)]
        store.release("r1", "worker-1")
        assert admin.execute(holders).fetchall() == []


def test_pg_locks_shows_each_claim_under_its_run_key(
    store: PostgresStore, postgres_url: str
) -> None:
    run_ids = [f"run-{n}" for n in range(16)]
    for run_id in run_ids:
        assert store.claim(run_id, "worker-1")
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        keys: dict[int, str] = dict(
            admin.execute(
                "SELECT hashtextextended(r, 'runs'::regclass::oid::bigint), r "
                "FROM unnest(%s::text[]) r",
                (run_ids,),
            ).fetchall()
        )
        held = admin.execute(
            "SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks "
            "WHERE locktype = 'advisory' AND objsubid = 1"
        ).fetchall()
    assert sorted(keys[key] for (key,) in held) == sorted(run_ids)
    assert min(keys) < 0 < max(keys), "both signs of keys were decoded"


def test_stores_in_two_schemas_of_one_database_have_separate_claims(
    postgres_server: TemporaryPostgres,
) -> None:
    with psycopg.connect(postgres_server.url, autocommit=True) as admin:
        admin.execute(
            "CREATE SCHEMA IF NOT EXISTS left_side; CREATE SCHEMA IF NOT EXISTS right_side"
        )
    left = PostgresStore(f"{postgres_server.url}?options=-csearch_path%3Dleft_side")
    right = PostgresStore(f"{postgres_server.url}?options=-csearch_path%3Dright_side")
    try:
        assert left.claim("r1", "worker-1")
        assert right.claim("r1", "worker-2")
    finally:
        left.close()
        right.close()


# --- claim_next --------------------------------------------------------------------------------


def test_claim_next_takes_the_least_recently_moved_running_run_nobody_holds(
    postgres_url: str,
) -> None:
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        for run_id in ("r1", "r2", "r3", "r4"):
            start_run(first, run_id)
        first.save(Checkpoint("r1", 1, {}, None, None, "next"), expected_step=0)
        first.finish("r4", "done")

        assert first.claim_next("worker-1") == "r2"
        assert second.claim_next("worker-2") == "r3"
        assert second.claim_next("worker-2") == "r1"
        assert second.claim_next("worker-2") is None
        assert first.claim_next("worker-1") is None

        first.release("r2", "worker-1")
        assert second.claim_next("worker-2") == "r2"
    finally:
        first.close()
        second.close()


# --- many workers ------------------------------------------------------------------------------


@pytest.mark.parametrize("claims", [True, False], ids=["with-claims", "saves-only"])
def test_workers_on_one_database_never_write_the_same_step(postgres_url: str, claims: bool) -> None:
    """Four processes advance four runs to step 25. Every step of every run is written once,
    by the worker that says it wrote it; with claims, no save is ever refused."""
    plan = Race(postgres_url, [f"run-{n}" for n in range(4)], steps=25, claims=claims)
    setup = PostgresStore(postgres_url)
    try:
        for run_id in plan.run_ids:
            start_run(setup, run_id)
        reports = run_workers(plan, workers=4)

        assert [r.error for r in reports] == [None] * 4
        writers = {step: r.worker for r in reports for step in r.written}
        every_step = [(run_id, step) for run_id in plan.run_ids for step in range(1, 26)]
        assert Counter(step for r in reports for step in r.written) == Counter(every_step)
        for run_id in plan.run_ids:
            written = setup.checkpoints(run_id)
            assert [c.step for c in written] == list(range(plan.steps + 1))
            assert all(c.state["by"] == writers[run_id, c.step] for c in written[1:])
        if claims:
            assert [r.refused for r in reports] == [0] * 4
    finally:
        setup.close()


def run_workers(plan: Race, workers: int) -> list[Report]:
    """Start the workers together (a barrier), and collect their reports, waiting at most
    SECONDS for each."""
    context = multiprocessing.get_context("spawn")
    start, reports = context.Barrier(workers, timeout=SECONDS), context.Queue()
    processes = [
        context.Process(target=race, args=(plan, f"worker-{n}", start, reports))
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    try:
        collected = [reports.get(timeout=SECONDS) for _ in processes]
    except queue.Empty:
        pytest.fail(f"a worker did not report within {SECONDS} s", pytrace=False)
    finally:
        for process in processes:
            process.join(timeout=SECONDS)
            process.kill()
        reports.close()
        reports.join_thread()
    assert [process.exitcode for process in processes] == [0] * workers
    return collected


def test_workers_opening_a_new_database_together_create_the_tables_once(
    postgres_url: str,
) -> None:
    together = threading.Barrier(4, timeout=SECONDS)

    def open_and_start(n: int) -> None:
        together.wait()
        store = PostgresStore(postgres_url)
        try:
            start_run(store, f"run-{n}")
        finally:
            store.close()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(open_and_start, range(4), timeout=SECONDS))
    store = PostgresStore(postgres_url)
    try:
        assert sorted(r.run_id for r in store.runs()) == ["run-0", "run-1", "run-2", "run-3"]
    finally:
        store.close()


# --- opening, and what JSONB cannot hold -------------------------------------------------------


def test_open_store_opens_postgresql_and_postgres_urls(postgres_url: str) -> None:
    for url in (postgres_url, postgres_url.replace("postgresql://", "postgres://")):
        store = open_store(url)
        try:
            assert isinstance(store, PostgresStore)
        finally:
            store.close()


def test_a_server_that_cannot_be_reached_is_a_store_error_without_the_password() -> None:
    url = f"postgresql://someone:secret-word@127.0.0.1:{free_port()}/nowhere"
    with pytest.raises(StoreError) as raised:
        PostgresStore(url, connect_timeout=5)
    assert "secret-word" not in str(raised.value)
    assert "127.0.0.1" in str(raised.value)


def test_a_malformed_url_is_a_store_error() -> None:
    with pytest.raises(StoreError):
        PostgresStore("postgresql://host:not-a-port/db?nonsense=1")


def test_a_state_holding_u0000_is_refused_and_nothing_is_written(store: PostgresStore) -> None:
    start_run(store, "r1")
    with pytest.raises(StoreError):
        store.save(Checkpoint("r1", 1, {"text": "a\x00b"}, None, None, "next"), expected_step=0)
    latest = store.latest("r1")
    assert latest is not None
    assert latest.step == 0
