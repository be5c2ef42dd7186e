"""SQLite's claims are per process: a claim names its process, and lapses once it is gone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from schemawire.store import Checkpoint, SqliteStore, StoreError
from tests.store.other_process import claimed_in_another_process, crash, exit_normally


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "runs.db")
    yield opened
    opened.close()


def test_a_claim_holds_while_its_process_lives_and_lapses_when_it_exits(
    store: SqliteStore,
) -> None:
    with claimed_in_another_process(f"sqlite:{store.path}", "r1") as other:
        assert not store.claim("r1", "worker-1")
        exit_normally(other)
        assert store.claim("r1", "worker-1")


def test_a_claim_by_a_killed_process_lapses(store: SqliteStore) -> None:
    with claimed_in_another_process(f"sqlite:{store.path}", "r1") as other:
        crash(other)
        assert store.claim("r1", "worker-1")


def test_a_live_claim_is_not_taken_by_a_worker_of_the_same_name(store: SqliteStore) -> None:
    with claimed_in_another_process(f"sqlite:{store.path}", "r1", worker="billing") as other:
        assert not store.claim("r1", "billing")  # same name, another live process
        exit_normally(other)
        assert store.claim("r1", "billing")


def test_database_errors_are_store_errors(store: SqliteStore) -> None:
    store.create_run("r1", "f", Checkpoint("r1", 0, {}, None, None, "a"))
    store._db.execute("DROP TABLE checkpoints")
    with pytest.raises(StoreError, match="no such table"):
        store.save(Checkpoint("r1", 1, {}, None, None, None), expected_step=0)
    store.finish("r1", "done")  # the connection is usable again
