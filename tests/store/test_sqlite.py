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
