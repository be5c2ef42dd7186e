"""SQLite's claims are per process: a claim names its process, and lapses once it is gone."""

from __future__ import annotations

from pathlib import Path

from schemawire.store import SqliteStore
from tests.store.other_process import claimed_in_another_process, crash, exit_normally


def test_a_claim_holds_while_its_process_lives_and_lapses_when_it_exits(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    try:
        with claimed_in_another_process(f"sqlite:{tmp_path / 'runs.db'}", "r1") as other:
            assert not store.claim("r1", "worker-1")
            exit_normally(other)
            assert store.claim("r1", "worker-1")
    finally:
        store.close()


def test_a_claim_by_a_killed_process_lapses(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    try:
        with claimed_in_another_process(f"sqlite:{tmp_path / 'runs.db'}", "r1") as other:
            crash(other)
            assert store.claim("r1", "worker-1")
    finally:
        store.close()


def test_a_live_claim_is_not_taken_by_a_worker_of_the_same_name(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    try:
        url = f"sqlite:{tmp_path / 'runs.db'}"
        with claimed_in_another_process(url, "r1", worker="billing") as other:
            assert not store.claim("r1", "billing")  # same name, another live process
            exit_normally(other)
            assert store.claim("r1", "billing")
    finally:
        store.close()


def test_database_errors_are_store_errors(tmp_path: Path) -> None:
    import pytest

    from schemawire.store import Checkpoint, StoreError

    store = SqliteStore(tmp_path / "runs.db")
    try:
        store.create_run("r1", "f", Checkpoint("r1", 0, {}, None, None, "a"))
        store._db.execute("DROP TABLE checkpoints")
        with pytest.raises(StoreError, match="no such table"):
            store.save(Checkpoint("r1", 1, {}, None, None, None), expected_step=0)
        store.finish("r1", "done")  # the connection is usable again
    finally:
        store.close()
