"""Checkpoints that resume: every step's state, validated before it is written, and a journal
of tool calls so that a resumed run never repeats a completed one.

- `SqliteStore` (the default: one file, WAL) and `PostgresStore` (many workers, each claiming a
  run with a session-level advisory lock that lapses with its connection).
- `open_store(url)`: ``sqlite:PATH`` (``?synchronous=NORMAL`` to trade power-loss durability
  for speed) or ``postgresql://...``.
- `find_run(store, given)`: the run a whole id or the start of one names (``runs show 3f2a``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

# The facade: base.py's names again, as the public face of the store package.
from schemawire.store.base import (
    SHORT_ID,
    CallStatus,
    Checkpoint,
    JournalEntry,
    RunInfo,
    RunLookupError,
    RunStatus,
    Store,
    StoreError,
    find_run,
    idempotency_key,
    locks_for_itself,
    one_call_at_a_time,
)
from schemawire.store.sqlite import SqliteStore

if TYPE_CHECKING:
    from schemawire.store.postgres import PostgresStore

__all__ = [
    "SHORT_ID",
    "CallStatus",
    "Checkpoint",
    "JournalEntry",
    "PostgresStore",
    "RunInfo",
    "RunLookupError",
    "RunStatus",
    "SqliteStore",
    "Store",
    "StoreError",
    "find_run",
    "idempotency_key",
    "locks_for_itself",
    "one_call_at_a_time",
    "open_store",
]

DEFAULT_STORE = "sqlite:.schemawire/runs.db"


def __getattr__(name: str) -> Any:
    # PostgresStore needs the postgres extra (psycopg): loaded only when asked for.
    if name != "PostgresStore":
        raise AttributeError(f"module 'schemawire.store' has no attribute {name!r}")
    from schemawire.store.postgres import PostgresStore

    return PostgresStore


def open_store(url: str = DEFAULT_STORE) -> Store:
    """The store ``url`` names.

    Raises:
        StoreError: an unknown kind of store, or one that cannot be opened.
    """
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from schemawire.store.postgres import PostgresStore
        except ImportError as error:
            raise StoreError(str(error)) from None
        return PostgresStore(url)
    if url.startswith("sqlite:"):
        path, _, query = url.removeprefix("sqlite:").partition("?")
        options = {k: v[-1] for k, v in parse_qs(query).items()}
        return SqliteStore(Path(path), synchronous=options.get("synchronous", "FULL"))
    raise StoreError(f"--store {url}: write sqlite:PATH or postgresql://...")
