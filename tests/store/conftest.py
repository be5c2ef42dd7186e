"""Both stores behind one fixture: a SQLite file in a temporary directory, or a fresh schema in
a real PostgreSQL server that the session starts once (`tests.store.postgres_server`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from schemawire.store import Store, open_store
from tests.helpers import OpenStore


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        return f"sqlite:{tmp_path_factory.mktemp('store') / 'runs.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def open_stores(store_url: str) -> Iterator[OpenStore]:
    """Open another store on the same database (another worker's); all are closed after."""
    opened: list[Store] = []

    def open_one() -> Store:
        opened.append(open_store(store_url))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def store(open_stores: OpenStore) -> Store:
    return open_stores()
