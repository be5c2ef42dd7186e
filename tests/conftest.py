"""Fixtures every test may use: a schema repository in a temporary directory, JSON snapshots.

Helpers that tests import live in `tests.helpers`, not here."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schemawire._json import dumps
from tests.helpers import WriteRepo

# A real PostgreSQL for the store, crash and run tests (three folders, so registered here), started
# once per session when a test asks for it; psycopg is imported only then, so the tests that
# never ask (`pytest tests/gates`) run without the postgres extra.
pytest_plugins = ["tests.store.postgres_server"]


@pytest.fixture
def write_repo(tmp_path: Path) -> WriteRepo:
    """Write ``{relative path: content}`` under a fresh root; dicts and lists become JSON."""

    def write(files: dict[str, Any]) -> Path:
        for relative, content in files.items():
            path = tmp_path / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            elif isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.write_text(dumps(content) + "\n", encoding="utf-8")
        return tmp_path

    return write


SNAPSHOTS = Path(__file__).parent / "data" / "snapshots"


@pytest.fixture
def snapshot(request: pytest.FixtureRequest) -> Callable[[str, Any], None]:
    """Compare JSON with ``tests/data/snapshots/<name>.json``; set SCHEMAWIRE_UPDATE_SNAPSHOTS=1
    to write the snapshots instead (then review the diff)."""

    def check(name: str, value: Any) -> None:
        path = SNAPSHOTS / f"{name}.json"
        text = dumps(value) + "\n"
        if os.environ.get("SCHEMAWIRE_UPDATE_SNAPSHOTS") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"no snapshot {path.name}: run with SCHEMAWIRE_UPDATE_SNAPSHOTS=1"
        assert text == path.read_text(encoding="utf-8"), f"{name} differs from its snapshot"

    return check


# Every hop a test writes to a trace file is checked against the shipped schema of the format
# (src/schemawire/trace/hop.schema.json): the writer is wrapped, each line it writes validated
# (and each hop a trace without a file keeps, as the line it would write),
# and what breaks the schema fails the test at its end (not in the writer: recording must not
# raise inside the code it records). A compiled validator, and a payload the schema leaves
# open, keep it to a few microseconds a hop.
@functools.cache
def _hop_validator() -> Any:
    import jsonschema

    from schemawire.trace import hop_schema

    return jsonschema.Draft202012Validator(hop_schema())


@pytest.fixture(autouse=True)
def written_hops_follow_the_schema(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Each hop line written while the test runs is valid against `hop_schema()`."""
    import orjson

    from schemawire.trace import recorder

    broken: list[str] = []
    write_line = recorder.hop_line

    def checked(hop: Any) -> bytes:
        line = write_line(hop)
        errors = list(_hop_validator().iter_errors(orjson.loads(line)))
        if errors:
            where = "/".join(str(part) for part in errors[0].absolute_path)
            broken.append(f"hop {hop.seq} at /{where}: {errors[0].message}")
        return line

    def kept(trace: Any, *args: Any, **kwargs: Any) -> Any:
        hop = record(trace, *args, **kwargs)
        if hop is not None and trace.path is None:  # kept in memory only: checked here
            checked(hop)
        return hop

    record = recorder.Trace.record
    monkeypatch.setattr(recorder, "hop_line", checked)
    monkeypatch.setattr(recorder.Trace, "record", kept)
    yield
    assert not broken, "hops written against the trace schema:\n" + "\n".join(broken)
