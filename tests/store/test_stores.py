"""What every store does, the same on SQLite and on PostgreSQL (each test runs on both)."""

from __future__ import annotations

import pytest

from schemawire.store import (
    Checkpoint,
    JournalEntry,
    RunLookupError,
    Store,
    StoreError,
    find_run,
    idempotency_key,
)
from tests.helpers import OpenStore

STATE_SCHEMA = "https://example.com/schemas/state.json"


def checkpoint(
    run_id: str,
    step: int,
    state: object = None,
    node: str | None = "next",
    next_input: object = None,
) -> Checkpoint:
    return Checkpoint(
        run_id,
        step,
        {"step": step} if state is None else state,
        STATE_SCHEMA,
        "1.0.0",
        node,
        next_input,
    )


def started(store: Store, run_id: str, step: int, tool: str, arguments: object) -> str:
    key = idempotency_key(run_id, step, tool, arguments)
    store.call_started(JournalEntry(key, run_id, step, tool, arguments, "started"))
    return key


# --- runs and checkpoints ----------------------------------------------------------------------


def test_a_new_run_is_running_at_its_input_checkpoint(store: Store) -> None:
    store.create_run("r1", "refunds", checkpoint("r1", 0, {"order": 7}, "start", "refund #7"))

    info = store.run("r1")
    assert info is not None
    assert (info.run_id, info.flow, info.status, info.step, info.node, info.error) == (
        "r1",
        "refunds",
        "running",
        0,
        "start",
        None,
    )
    assert info.created > 0
    assert info.updated == info.created
    latest = store.latest("r1")
    assert latest is not None
    assert (
        latest.step,
        latest.state,
        latest.schema,
        latest.version,
        latest.node,
        latest.next_input,
    ) == (0, {"order": 7}, STATE_SCHEMA, "1.0.0", "start", "refund #7")
    assert latest.created == info.created
    assert store.checkpoints("r1") == [latest]


def test_save_moves_the_run_on_and_keeps_every_checkpoint_in_order(store: Store) -> None:
    store.create_run("r1", "refunds", checkpoint("r1", 0))
    store.save(checkpoint("r1", 1, node="check", next_input={"handoff": [1]}), expected_step=0)
    store.save(checkpoint("r1", 2, node=None), expected_step=1)

    assert [(c.step, c.state, c.node, c.next_input) for c in store.checkpoints("r1")] == [
        (0, {"step": 0}, "next", None),
        (1, {"step": 1}, "check", {"handoff": [1]}),
        (2, {"step": 2}, None, None),
    ]
    latest = store.latest("r1")
    assert latest is not None
    assert latest.step == 2
    info = store.run("r1")
    assert info is not None
    assert (info.step, info.node) == (2, None)
    assert info.updated >= info.created
    assert info.updated == latest.created


def test_a_second_run_with_the_same_id_is_refused_and_the_first_kept(store: Store) -> None:
    store.create_run("r1", "refunds", checkpoint("r1", 0, {"first": True}))

    with pytest.raises(StoreError):
        store.create_run("r1", "other", checkpoint("r1", 0, {"first": False}))

    info = store.run("r1")
    assert info is not None
    assert info.flow == "refunds"
    assert [c.state for c in store.checkpoints("r1")] == [{"first": True}]


def test_save_with_a_stale_expected_step_is_refused_and_writes_nothing(store: Store) -> None:
    store.create_run("r1", "refunds", checkpoint("r1", 0))
    store.save(checkpoint("r1", 1, {"by": "first"}), expected_step=0)

    with pytest.raises(StoreError):
        store.save(checkpoint("r1", 1, {"by": "second"}), expected_step=0)
    with pytest.raises(StoreError):
        store.save(checkpoint("r1", 2, {"by": "second"}), expected_step=0)

    assert [(c.step, c.state) for c in store.checkpoints("r1")] == [
        (0, {"step": 0}),
        (1, {"by": "first"}),
    ]
    info = store.run("r1")
    assert info is not None
    assert info.step == 1


def test_save_ahead_of_the_runs_step_is_refused_and_writes_nothing(store: Store) -> None:
    store.create_run("r1", "refunds", checkpoint("r1", 0))
    store.save(checkpoint("r1", 1), expected_step=0)

    with pytest.raises(StoreError, match="no longer at step 2"):
        store.save(checkpoint("r1", 3), expected_step=2)

    assert [c.step for c in store.checkpoints("r1")] == [0, 1]
    info = store.run("r1")
    assert info is not None
    assert info.step == 1
    store.save(checkpoint("r1", 2), expected_step=1)  # the run goes on from where it is


def test_save_to_a_run_that_does_not_exist_is_refused(store: Store) -> None:
    with pytest.raises(StoreError):
        store.save(checkpoint("missing", 1), expected_step=0)
    assert store.checkpoints("missing") == []


def test_a_run_that_does_not_exist_has_no_info_checkpoints_or_calls(store: Store) -> None:
    assert store.run("missing") is None
    assert store.latest("missing") is None
    assert store.checkpoints("missing") == []
    assert store.journal("missing") == []
    assert store.call("0" * 32) is None


def test_finish_marks_a_run_done_or_failed_with_its_error(store: Store) -> None:
    store.create_run("ok", "refunds", checkpoint("ok", 0))
    store.create_run("bad", "refunds", checkpoint("bad", 0))

    store.finish("ok", "done")
    store.finish("bad", "failed", "the model gave up")

    ok, bad = store.run("ok"), store.run("bad")
    assert ok is not None
    assert bad is not None
    assert (ok.status, ok.error) == ("done", None)
    assert (bad.status, bad.error) == ("failed", "the model gave up")
    assert bad.updated >= bad.created


def test_runs_lists_the_newest_first_by_status_and_up_to_a_limit(store: Store) -> None:
    for run_id in ("r1", "r2", "r3"):
        store.create_run(run_id, "refunds", checkpoint(run_id, 0))
    store.finish("r2", "done")

    assert [r.run_id for r in store.runs()] == ["r3", "r2", "r1"]
    assert [r.run_id for r in store.runs("running")] == ["r3", "r1"]
    assert [r.run_id for r in store.runs("done")] == ["r2"]
    assert store.runs("failed") == []
    assert [r.run_id for r in store.runs(limit=2)] == ["r3", "r2"]
    assert store.runs()[1] == store.run("r2")


def test_states_come_back_as_the_json_they_were(store: Store) -> None:
    state = {
        "text": 'é ☃ \u2028 "quoted"',
        "int": 2**63 - 1,
        "negative": -(2**63),
        "float": 0.1,
        "whole float": 2.0,
        "flags": [True, False, None],
        "nested": {"empty": {}, "list": [], "deep": [[{"a": [1, 2.5]}]]},
    }
    store.create_run("r1", "refunds", checkpoint("r1", 0, state))
    store.save(checkpoint("r1", 1, [1, "two", None]), expected_step=0)
    store.save(checkpoint("r1", 2, "a bare string"), expected_step=1)

    assert [c.state for c in store.checkpoints("r1")] == [state, [1, "two", None], "a bare string"]
    assert isinstance(store.checkpoints("r1")[0].state["whole float"], float)


def test_integers_beyond_64_bits_are_written_and_read_back_exactly(store: Store) -> None:
    big = {"big": 2**64 + 1, "negative": -(10**30) - 7}
    store.create_run("r1", "refunds", checkpoint("r1", 0, big, next_input=[2**70]))
    key = started(store, "r1", 1, "grow", big)
    store.call_ended(key, "completed", {"structuredContent": big})

    first = store.checkpoints("r1")[0]
    assert (first.state, first.next_input) == (big, [2**70])
    entry = store.call(key)
    assert entry is not None
    assert (entry.arguments, entry.result) == (big, {"structuredContent": big})


def test_a_whole_number_makes_one_key_however_it_is_written() -> None:
    assert idempotency_key("r", 1, "t", {"n": 20}) == idempotency_key("r", 1, "t", {"n": 20.0})
    assert idempotency_key("r", 1, "t", {"n": 1}) != idempotency_key("r", 1, "t", {"n": True})


def test_keys_are_the_ones_journals_already_hold() -> None:
    # Written by the previous release (before one canonical text served lint, diffs and keys):
    # a resumed run must still find the calls those journals recorded. Past 2**53 a whole
    # float was kept a float, and still is.
    assert idempotency_key("r", 1, "t", {"n": 20.0, "city": "上海"}) == (
        "870e2024c2b8a1126d3308852738f356"
    )
    assert idempotency_key("r", 1, "t", {"n": 1e20}) == "5abbfca653b21a2e4d45e59000c6c672"


def test_a_checkpoint_comes_back_with_the_time_it_was_written(store: Store) -> None:
    unwritten = checkpoint("r1", 0)
    assert unwritten.created is None

    first = store.create_run("r1", "refunds", unwritten)
    second = store.save(checkpoint("r1", 1), expected_step=0)

    info = store.run("r1")
    assert info is not None
    assert first.created == info.created
    assert second.created == info.updated
    assert store.checkpoints("r1") == [first, second]
    assert first.to_json()["created"] == info.created


# --- finding a run by the start of its id ------------------------------------------------------


def runs_named(store: Store, *run_ids: str) -> None:
    for run_id in run_ids:
        store.create_run(run_id, "refunds", checkpoint(run_id, 0))


def test_the_start_of_one_runs_id_finds_it(store: Store) -> None:
    runs_named(store, "3f2a9c01", "3f2b0000", "a_%_b")

    assert find_run(store, "3f2a").run_id == "3f2a9c01"
    assert find_run(store, "3f2a9c01").run_id == "3f2a9c01"
    assert find_run(store, "a_%_").run_id == "a_%_b"  # no wildcards: _ and % are themselves
    assert [r.run_id for r in store.runs_starting("3f2")] == ["3f2b0000", "3f2a9c01"]


def test_the_start_of_several_ids_names_them_all(store: Store) -> None:
    runs_named(store, "3f2a9c01", "3f2a9c02", "3f2b0000")

    with pytest.raises(RunLookupError) as raised:
        find_run(store, "3f2a")
    assert raised.value.candidates == ("3f2a9c02", "3f2a9c01")
    assert "3f2a9c02, 3f2a9c01" in str(raised.value)


def test_an_unknown_or_too_short_start_finds_nothing(store: Store) -> None:
    runs_named(store, "3f2a9c01", "r1")

    assert find_run(store, "r1").run_id == "r1"  # a whole id, however short
    for given in ("3f2", "ffff", "3f2a9c01x"):
        with pytest.raises(RunLookupError) as raised:
            find_run(store, given)
        assert (raised.value.given, raised.value.candidates) == (given, ())


# --- the journal -------------------------------------------------------------------------------


def test_a_call_is_journaled_before_it_runs_and_again_when_it_ends(store: Store) -> None:
    key = started(store, "r1", 1, "refund", {"order": 7, "amount": 12.5})

    call = store.call(key)
    assert call == JournalEntry(key, "r1", 1, "refund", {"order": 7, "amount": 12.5}, "started")

    store.call_ended(key, "completed", {"refunded": True})
    assert store.call(key) == JournalEntry(
        key, "r1", 1, "refund", {"order": 7, "amount": 12.5}, "completed", {"refunded": True}
    )


def test_the_journal_lists_a_runs_calls_in_the_order_they_started(store: Store) -> None:
    first = started(store, "r1", 1, "lookup", {"order": 7})
    second = started(store, "r1", 1, "refund", {"order": 7})
    other = started(store, "r2", 1, "lookup", {"order": 8})
    store.call_ended(first, "completed", "found")
    store.call_ended(second, "failed", None)

    journal = store.journal("r1")
    assert [(e.key, e.tool, e.status, e.result) for e in journal] == [
        (first, "lookup", "completed", "found"),
        (second, "refund", "failed", None),
    ]
    assert [e.key for e in store.journal("r2")] == [other]


def test_a_call_started_again_is_started_afresh_at_the_end_of_the_journal(store: Store) -> None:
    first = started(store, "r1", 1, "lookup", {"order": 7})
    second = started(store, "r1", 1, "refund", {"order": 7})
    store.call_ended(first, "completed", "found")

    assert started(store, "r1", 1, "lookup", {"order": 7}) == first

    assert [(e.key, e.status, e.result) for e in store.journal("r1")] == [
        (second, "started", None),
        (first, "started", None),
    ]


# --- claims ------------------------------------------------------------------------------------


def test_a_second_worker_cannot_claim_a_run_another_holds(open_stores: OpenStore) -> None:
    first, second = open_stores(), open_stores()

    assert first.claim("r1", "worker-1")
    assert not second.claim("r1", "worker-2")
    assert first.claim("r1", "worker-1"), "the holder may claim again"
    assert not first.claim("r1", "worker-2"), "another worker on the same store may not"
    assert second.claim("r2", "worker-2"), "claims are per run"


def test_a_released_run_can_be_claimed_by_another_worker(open_stores: OpenStore) -> None:
    first, second = open_stores(), open_stores()
    assert first.claim("r1", "worker-1")

    first.release("r1", "worker-1")

    assert second.claim("r1", "worker-2")
    assert not first.claim("r1", "worker-1")


def test_only_the_holder_can_release_a_claim(open_stores: OpenStore) -> None:
    first, second = open_stores(), open_stores()
    assert first.claim("r1", "worker-1")

    first.release("r1", "worker-2")
    second.release("r1", "worker-2")

    assert not second.claim("r1", "worker-2")


def test_releasing_a_run_never_claimed_does_nothing(store: Store) -> None:
    store.release("r1", "worker-1")
    assert store.claim("r1", "worker-1")
