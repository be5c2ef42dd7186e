"""Flows: handoffs gated and routed by schemas, state checked before every checkpoint, and a
journal that keeps a resumed run from repeating what it has done."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.responses import JSONResponse, Response

from schemawire.flows.definition import load_flow
from schemawire.gates import HandoffGate, Route
from schemawire.host import HttpModel, ModelError
from schemawire.schema.repository import Repository
from schemawire.store import Checkpoint, JournalEntry, SqliteStore, StoreError, idempotency_key
from schemawire.trace import Trace, read_trace
from tests.host.flows import FLOW, REFUND, REQUEST, ledger_lines, refund_runner, use_ledger
from tests.host.test_models import provider

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = SqliteStore(tmp_path / "runs.db")
    yield opened
    opened.close()


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.txt"
    use_ledger(path)
    return path


async def test_the_refund_flow_runs_to_its_end(store: Any, ledger: Path) -> None:
    result = await refund_runner(store).start(REQUEST, run_id="r1")
    assert (result.status, result.steps) == ("done", ["triage", "billing"])
    assert result.state == {
        "intent": "refund",
        "order_id": "A-1042",
        "refund_id": "R-2001",
        "amount": 20.0,
    }
    assert [c.step for c in store.checkpoints("r1")] == [0, 1, 2]
    assert [c.node for c in store.checkpoints("r1")] == ["triage", "billing", None]
    assert [(e.tool, e.status) for e in store.journal("r1")] == [
        ("lookup_order", "completed"),
        ("create_refund", "completed"),
    ]
    assert len(ledger_lines(ledger)) == 1
    assert store.run("r1").status == "done"


def handoff_gate(**changes: Any) -> HandoffGate:
    flow = load_flow(FLOW)
    repository = Repository.load(REFUND)
    agent = replace(flow.agents["triage"], **changes)
    gate = flow.handoff_gate(repository, agent)
    assert gate is not None
    return gate


HANDOFF = {
    "intent": "refund",
    "order_id": "A-1042",
    "confidence": 0.93,
    "from": "triage",
    "to": "billing_agent",
}


def test_routes_are_schemas_and_the_first_match_wins() -> None:
    gate = handoff_gate()
    assert gate.check(HANDOFF).route.to == "billing"  # type: ignore[union-attr]
    unsure = gate.check({**HANDOFF, "confidence": 0.4})
    assert (unsure.route.to, unsure.route.fallback) == ("end", True)  # type: ignore[union-attr]


def test_no_route_and_no_fallback_is_an_error_never_a_guess() -> None:
    routes = (Route("billing", {"properties": {"intent": {"const": "refund"}}}),)
    decision = handoff_gate(routes=routes).check({**HANDOFF, "intent": "exchange"})
    assert decision.route is None
    assert decision.verdict.rejection.code == "handoff_unrouted"  # type: ignore[union-attr]


def test_a_handoff_that_breaks_its_schema_goes_nowhere() -> None:
    decision = handoff_gate().check('{"intent": "refund", "order_id": "A-1042"}')
    assert decision.route is None
    rejection = decision.verdict.rejection
    assert rejection is not None
    assert rejection.code == "handoff_invalid"
    assert {v.pointer for v in rejection.violations} == {"/confidence", "/from", "/to"}


async def test_a_state_that_breaks_its_schema_stops_the_run_uncheckpointed(
    store: Any, ledger: Path, tmp_path: Path
) -> None:
    # The same example, with a state schema that allows refunds of at most 10.
    root = tmp_path / "refund"
    shutil.copytree(REFUND, root)
    state_file = root / "schemas" / "state" / "refund_flow.json"
    state = json.loads(state_file.read_text())
    state["properties"]["amount"] = {"allOf": [state["properties"]["amount"], {"maximum": 10}]}
    state_file.write_text(json.dumps(state))
    result = await refund_runner(store, root=root).start(REQUEST, run_id="r2")
    assert result.status == "failed"
    assert "breaks refund_flow: /amount must be less than or equal to 10" in (result.error or "")
    assert [c.step for c in store.checkpoints("r2")] == [0, 1]  # step 2 was never written
    assert store.run("r2").status == "failed"


async def test_a_completed_call_is_answered_from_the_journal(store: Any, ledger: Path) -> None:
    runner = refund_runner(store)
    await runner.start(REQUEST, run_id="r3")
    # Rewind the run to before billing, as if a worker died after create_refund completed.
    first = store.checkpoints("r3")[1]
    again = SqliteStore(store.path)
    again._db.execute("DELETE FROM checkpoints WHERE run_id = 'r3' AND step = 2")
    again._db.execute(
        "UPDATE runs SET step = 1, node = 'billing', status = 'running' WHERE run_id = 'r3'"
    )
    again.close()
    assert store.latest("r3") == first
    result = await refund_runner(store).resume("r3")
    assert result.status == "done"
    assert len(ledger_lines(ledger)) == 1  # create_refund did not run again
    assert result.state["refund_id"] == "R-2001"  # its journaled result still counts


async def test_an_interrupted_call_is_not_repeated_unless_idempotent(
    store: Any, ledger: Path
) -> None:
    runner = refund_runner(store)
    from schemawire.store import Checkpoint

    store.create_run("r4", "refund", Checkpoint("r4", 0, {}, None, None, "triage", REQUEST))
    handoff = {**HANDOFF}
    store.save(
        Checkpoint(
            "r4", 1, {"intent": "refund", "order_id": "A-1042"}, None, None, "billing", handoff
        ),
        expected_step=0,
    )
    for tool, arguments in [
        ("lookup_order", {"order_id": "A-1042"}),
        ("create_refund", {"order_id": "A-1042", "amount": 20.0, "reason": "duplicate"}),
    ]:
        key = idempotency_key("r4", 2, tool, arguments)
        store.call_started(JournalEntry(key, "r4", 2, tool, arguments, "started"))
    result = await runner.resume("r4")
    assert result.status == "done"
    statuses = {e.tool: e.status for e in store.journal("r4")}
    assert statuses == {"lookup_order": "completed", "create_refund": "started"}
    assert ledger_lines(ledger) == []  # the interrupted refund was not run again
    assert "refund_id" not in result.state


async def test_two_workers_cannot_run_one_run(store: Any, ledger: Path) -> None:
    from schemawire.store import Checkpoint

    store.create_run("r5", "refund", Checkpoint("r5", 0, {}, None, None, "triage", REQUEST))
    assert store.claim("r5", "other-worker")
    with pytest.raises(StoreError, match="another worker"):
        await refund_runner(store, worker="me").resume("r5")
    store.release("r5", "other-worker")
    assert (await refund_runner(store, worker="me").resume("r5")).status == "done"


async def test_a_flow_whose_routes_loop_stops_with_an_error(
    store: Any, ledger: Path, tmp_path: Path
) -> None:
    root = tmp_path / "refund"
    shutil.copytree(REFUND, root)
    flow = json.loads(FLOW.read_text())
    flow["agents"]["triage"]["routes"][0]["to"] = "triage"  # triage hands to itself
    looping = root / "flows" / "loop.json"
    looping.write_text(json.dumps(flow))
    runner = refund_runner(store, load_flow(looping), root=root, max_steps=3)
    result = await runner.start(REQUEST, run_id="r6")
    assert result.status == "failed"
    assert "took 3 steps without reaching its end: check its routes for a loop" in (
        result.error or ""
    )


def test_the_same_arguments_make_the_same_key_however_numbers_are_written() -> None:
    assert idempotency_key("r", 1, "t", {"amount": 20}) == idempotency_key(
        "r", 1, "t", {"amount": 20.0}
    )
    assert idempotency_key("r", 1, "t", {"amount": 20}) != idempotency_key(
        "r", 1, "t", {"amount": 20.5}
    )


async def test_the_same_call_twice_in_one_turn_runs_once(store: Any, ledger: Path) -> None:
    from schemawire.store import Checkpoint
    from tests.host.flows import refund_runner as runner_of

    script_dir = REFUND / "scripts"
    billing = json.loads((script_dir / "billing.json").read_text())
    refund_call = billing["responses"][1]["choices"][0]["message"]["tool_calls"][0]
    twice = {**refund_call, "id": "call_refund_again"}
    billing["responses"][1]["choices"][0]["message"]["tool_calls"].append(twice)
    runner = runner_of(store)
    from schemawire.host import ScriptedModel

    runner.model = lambda agent: ScriptedModel("openai.chat", billing["responses"])
    store.create_run("r7", "refund", Checkpoint("r7", 0, {}, None, None, "triage", REQUEST))
    store.save(
        Checkpoint(
            "r7", 1, {"intent": "refund", "order_id": "A-1042"}, None, None, "billing", HANDOFF
        ),
        expected_step=0,
    )
    result = await runner.resume("r7")
    assert result.status == "done"
    assert len(ledger_lines(ledger)) == 1  # create_refund ran once for the two calls


# --- one id per run, in the store and in the trace -----------------------------------------------


async def test_a_run_has_one_id_in_the_store_and_in_every_hop(store: Any, ledger: Path) -> None:
    trace = Trace()
    runner = refund_runner(store, trace=trace)
    first = await runner.start(REQUEST)
    second = await runner.start(REQUEST, run_id="given")  # one runner, one trace, two runs
    assert first.run_id != second.run_id == "given"
    assert [store.run(r.run_id).status for r in (first, second)] == ["done", "done"]
    by_run: dict[str, list[int]] = {}
    for hop in trace.hops:
        by_run.setdefault(hop.run_id, []).append(hop.seq)
    assert list(by_run) == [first.run_id, "given"]
    assert all(seqs == list(range(1, len(seqs) + 1)) for seqs in by_run.values())


async def test_a_checkpoint_hop_holds_the_time_it_was_written(store: Any, ledger: Path) -> None:
    trace = Trace()
    await refund_runner(store, trace=trace).start(REQUEST, run_id="r8")
    saved = [hop.payload for hop in trace.hops if hop.protocol == "checkpoint"]
    written = [c.to_json() for c in store.checkpoints("r8")[1:]]
    assert saved == written
    assert all(isinstance(c["created"], float) and c["created"] > 0 for c in saved)


def rewind_to_billing(store: Any, run_id: str) -> None:
    """Drop the run's last checkpoint, as if its worker died after create_refund completed."""
    again = SqliteStore(store.path)
    again._db.execute("DELETE FROM checkpoints WHERE run_id = ? AND step = 2", (run_id,))
    again._db.execute(
        "UPDATE runs SET step = 1, node = 'billing', status = 'running' WHERE run_id = ?",
        (run_id,),
    )
    again.close()


async def test_a_resumed_run_appends_to_its_own_trace_numbered_on(
    store: Any, ledger: Path, tmp_path: Path
) -> None:
    path = tmp_path / "traces" / "r9.jsonl"
    with Trace("r9", path=path) as trace:
        await refund_runner(store, trace=trace).start(REQUEST, run_id="r9")
    first = len(list(read_trace(path)))
    rewind_to_billing(store, "r9")
    with Trace(path=path) as trace:  # a fresh worker's trace: the run's id comes from resume
        assert (await refund_runner(store, trace=trace).resume("r9")).status == "done"
    hops = list(read_trace(path))
    assert {hop.run_id for hop in hops} == {"r9"}
    assert [hop.seq for hop in hops] == list(range(1, len(hops) + 1))
    assert (hops[first].protocol, hops[first].payload["kind"]) == ("span", "flow")
    resumed = hops[first + 1]  # the first hop in the resumed flow's span
    assert (resumed.source, resumed.protocol, resumed.direction) == (
        "store",
        "checkpoint",
        "receive",
    )
    assert (resumed.payload["step"], resumed.payload["node"]) == (1, "billing")
    assert len(ledger_lines(ledger)) == 1


async def test_a_model_that_cannot_be_used_fails_the_run_which_can_be_resumed(
    store: Any, ledger: Path
) -> None:
    def refused(attempt: int, body: dict[str, Any]) -> Response:
        return JSONResponse({"error": {"message": "bad key"}}, status_code=401)

    async with provider(refused) as (url, _):
        flow = load_flow(FLOW)
        broken = refund_runner(
            store,
            model=lambda agent: HttpModel(
                "openai.chat", "m", base_url=f"{url}/v1", api_key="sk-test"
            ),
        )
        with anyio.fail_after(30), pytest.raises(ModelError) as raised:
            await broken.start(REQUEST, run_id="r10")
    assert raised.value.status == 401
    run = store.run("r10")
    assert (run.status, run.step) == ("failed", 0)
    assert "HTTP 401" in (run.error or "")
    resumed = await refund_runner(store, flow).resume("r10")
    assert resumed.status == "done"
    assert (store.run("r10").status, store.run("r10").error) == ("done", None)


async def test_a_run_waiting_for_a_locked_store_leaves_the_loop_running(
    store: Any, ledger: Path
) -> None:
    other = sqlite3.connect(store.path, isolation_level=None)  # another worker, mid-write
    other.execute("BEGIN IMMEDIATE")
    results: list[Any] = []

    async def start() -> None:
        results.append(await refund_runner(store).start(REQUEST, run_id="r9"))

    try:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(start)
                await anyio.wait_all_tasks_blocked()  # this task runs while the run waits
                assert other.execute("SELECT count(*) FROM runs").fetchone() == (0,)
                other.execute("COMMIT")
    finally:
        other.close()
    assert [result.status for result in results] == ["done"]
    assert [c.step for c in store.checkpoints("r9")] == [0, 1, 2]


# --- runners sharing one store -------------------------------------------------------------


async def test_runners_sharing_one_store_each_finish_their_own_run(
    store: SqliteStore, ledger: Path
) -> None:
    # Each runner runs its store calls in worker threads; the store lets one in at a time, so
    # their transactions never interleave on its one connection.
    statuses: list[str] = []

    async def run_one(number: int) -> None:
        result = await refund_runner(store).start(REQUEST, run_id=f"run-{number}")
        statuses.append(result.status)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for number in range(8):
                group.start_soon(run_one, number)
    assert statuses == ["done"] * 8


async def test_two_runners_of_one_process_never_both_drive_one_run(
    store: SqliteStore, ledger: Path
) -> None:
    # Each runner's default worker name is its own, so the store refuses the second claim.
    first, second = refund_runner(store), refund_runner(store)
    start = Checkpoint("run-1", 0, {}, None, None, first.flow.start, REQUEST)
    store.create_run("run-1", first.flow.name, start)
    outcomes: list[str] = []

    async def resume(runner: Any) -> None:
        try:
            outcomes.append((await runner.resume("run-1")).status)
        except StoreError as error:
            outcomes.append(str(error))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(resume, first)
            group.start_soon(resume, second)
    assert sorted(outcomes) == ["done", "run run-1 is being run by another worker"]


class _ClaimHeldBack(SqliteStore):
    """A real SQLite store whose claims wait for the test to let them through, and which says
    when a claim that returned has been released."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.claiming, self.let_through = threading.Event(), threading.Event()
        self.returned, self.released = threading.Event(), threading.Event()

    def claim(self, run_id: str, worker: str) -> bool:
        self.claiming.set()
        assert self.let_through.wait(10)
        claimed = super().claim(run_id, worker)
        self.returned.set()
        return claimed

    def release(self, run_id: str, worker: str) -> None:
        super().release(run_id, worker)
        if self.returned.is_set():
            self.released.set()


async def test_a_run_cancelled_while_it_claims_gives_its_claim_up(
    tmp_path: Path, ledger: Path
) -> None:
    # asyncio's own cancel (wait_for, a web framework) does not wait for the worker thread:
    # the claim is taken after its caller has gone, and must still be released.
    store = _ClaimHeldBack(tmp_path / "runs.db")
    started = asyncio.ensure_future(refund_runner(store).start(REQUEST, run_id="run-1"))
    with anyio.fail_after(30):
        await anyio.to_thread.run_sync(store.claiming.wait, 10)
        started.cancel()
        store.let_through.set()
        with pytest.raises(asyncio.CancelledError):
            await started
        assert await anyio.to_thread.run_sync(store.released.wait, 10)
    assert SqliteStore.claim(store, "run-1", "another-worker")
    store.close()
