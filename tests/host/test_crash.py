"""Workers killed with SIGKILL at every kind of point, 100 runs: every run resumes to its end,
no completed tool call runs twice, every checkpoint is there and valid, and each run's trace
file reads as that one run."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from schemawire.evals.outcome import read_outcome
from schemawire.schema.repository import Repository
from schemawire.store import open_store
from schemawire.trace import read_trace, trace_path
from tests.host.crash import in_child, work
from tests.host.flows import REFUND, ledger_lines

pytestmark = pytest.mark.slow  # workers killed as processes

RUNS = 100
WRITES_PER_RUN = 10  # create, claim, two checkpoints, two calls (started, ended), finish, release
SIGKILL = -9


def store_url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return f"sqlite:{tmp_path / 'runs.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_killed_workers_resume_every_run_to_its_end(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = store_url(kind, tmp_path, request)
    ledger = tmp_path / "ledger.txt"
    chance = random.Random(2026)
    crashes = Counter[int]()
    for number in range(RUNS):
        run_id = f"{kind}-{number}"
        # a write from the first to one past the last (no crash), just before it or just after
        crash = (chance.randint(1, WRITES_PER_RUN + 1), chance.random() < 0.5)
        code = in_child(lambda run_id=run_id, crash=crash: work(url, run_id, ledger, crash))
        assert code in (0, SIGKILL), f"{run_id}: the worker failed ({code})"
        crashes[code] += 1
        for _ in range(3):  # a fresh worker picks the run up, as often as it takes
            if _status(url, run_id) == "done":
                break
            resumed = in_child(lambda run_id=run_id: work(url, run_id, ledger, None))
            assert resumed == 0, f"{run_id}: resuming failed"
        assert _status(url, run_id) == "done", run_id
    assert crashes[SIGKILL] > RUNS // 2  # most attempts really died
    _check_runs(url, kind, ledger)


def _status(url: str, run_id: str) -> str | None:
    store = open_store(url)
    try:
        run = store.run(run_id)
        return run.status if run else None
    finally:
        store.close()


def _check_runs(url: str, kind: str, ledger: Path) -> None:
    repository = Repository.load(REFUND)
    state_file = repository.find("state/refund_flow")
    assert state_file is not None
    state_schema = repository.validator(state_file)
    executed = Counter(line.split()[0] for line in ledger_lines(ledger))
    store: Any = open_store(url)
    try:
        for number in range(RUNS):
            run_id = f"{kind}-{number}"
            steps = store.checkpoints(run_id)
            assert [c.step for c in steps] == [0, 1, 2], run_id  # none lost, none doubled
            assert all(state_schema.is_valid(c.state) for c in steps[1:]), run_id
            for entry in store.journal(run_id):
                if entry.tool == "create_refund":
                    # a completed refund ran exactly once; an interrupted one at most once
                    limit = {"completed": (1, 1), "started": (0, 1)}[entry.status]
                    assert limit[0] <= executed[entry.key] <= limit[1], (run_id, entry)
            _check_trace(trace_path(run_id, ledger.parent / "traces"), run_id, store)
    finally:
        store.close()


def _check_trace(path: Path, run_id: str, store: Any) -> None:
    """Every attempt of the run appended to its one trace file, numbered on, and the file
    reads as one run that did each step once and made a completed refund once."""
    hops = list(read_trace(path))
    assert {hop.run_id for hop in hops} == {run_id}, path
    assert [hop.seq for hop in hops] == list(range(1, len(hops) + 1)), path
    outcome = read_outcome(hops)
    assert (outcome.status, outcome.steps) == ("done", ["triage", "billing"]), run_id
    refunds = [call for call in outcome.calls if call.tool == "create_refund"]
    entries = [e for e in store.journal(run_id) if e.tool == "create_refund"]
    completed = any(entry.status == "completed" for entry in entries)
    # a completed refund counts once (run, or answered from the journal after a crash); an
    # interrupted one is not made again, so the run as read did not make it
    assert len(refunds) == (1 if completed else 0), (run_id, refunds, entries)
