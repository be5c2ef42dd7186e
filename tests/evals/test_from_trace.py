"""A case from a recorded run: the responses of agents without their own script are written
into the case, and a failed run is expected to fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from schemawire.errors import UsageError
from schemawire.evals import case_from_trace, load_case, run_case
from schemawire.flows.definition import AgentSpec, load_flow
from schemawire.host import model_from_spec, python_tools
from schemawire.host.workflow import FlowRunner
from schemawire.schema.implementations import load_implementations
from schemawire.schema.repository import Repository
from schemawire.store import SqliteStore
from schemawire.trace import Trace, read_trace
from tests.evals.cases import FLOW, REFUND, REQUEST


def record(tmp_path: Path, triage_script: str) -> Path:
    """A run of the refund flow whose triage plays ``triage_script`` (not the flow's own)."""
    flow = load_flow(FLOW)
    repository = Repository.load(REFUND)
    tools = {r.spec.name: r for r in python_tools(repository, load_implementations(repository))}

    def model(agent: AgentSpec) -> Any:
        own = (FLOW.parent / (agent.model or "").removeprefix("script:")).resolve()
        path = REFUND / "scripts" / triage_script if agent.name == "triage" else own
        return model_from_spec(f"script:{path}")

    path = tmp_path / "run.jsonl"
    store = SqliteStore(tmp_path / "runs.db")
    try:
        with Trace(path=path) as trace:
            runner = FlowRunner(flow, repository, store, tools=tools, model=model, trace=trace)
            anyio.run(runner.start, REQUEST)
    finally:
        store.close()
    return path


def test_of_a_trace_holding_several_runs_the_case_is_the_last(tmp_path: Path) -> None:
    record(tmp_path, "triage.json")  # the happy path: triage, then billing
    trace = record(tmp_path, "triage_unsure.json")  # appended to the same file
    runs = list(dict.fromkeys(hop.run_id for hop in read_trace(trace)))
    assert len(runs) == 2
    recorded = case_from_trace(trace, flow=FLOW, out=tmp_path / "evals" / "case.json")
    expect = recorded.document["expect"]
    assert (expect["status"], expect["steps"], expect["route"], expect["calls"]) == (
        "done",
        ["triage"],
        "end",
        [],
    )
    assert f"the trace holds 2 runs; the case is the last (run {runs[1]})" in recorded.notes
    assert run_case(write(tmp_path, recorded.document)).status == "passed"


def test_a_trace_of_one_run_says_nothing_of_runs(tmp_path: Path) -> None:
    recorded = case_from_trace(record(tmp_path, "triage.json"), flow=FLOW)
    assert not any(note.startswith("the trace holds") for note in recorded.notes)


def write(tmp_path: Path, document: dict[str, Any]) -> Path:
    from schemawire._json import dumps

    path = tmp_path / "evals" / "case.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(dumps(document), encoding="utf-8")
    return path


def test_an_agent_playing_another_script_is_written_inline(tmp_path: Path) -> None:
    trace = record(tmp_path, "triage_unsure.json")
    out = tmp_path / "evals" / "case.json"
    recorded = case_from_trace(trace, flow=FLOW, out=out)
    document = recorded.document
    assert list(document["models"]) == ["triage"]
    assert document["models"]["triage"]["api"] == "openai.chat"
    assert any("agent triage's responses" in note for note in recorded.notes)
    expect = document["expect"]
    assert (expect["route"], expect["steps"], expect["calls"]) == ("end", ["triage"], [])
    assert expect["output"]["equals"]["confidence"] == 0.4
    assert run_case(write(tmp_path, document)).status == "passed"


def test_a_failed_run_is_expected_to_fail_without_its_reason(tmp_path: Path) -> None:
    trace = record(tmp_path, "triage_prose.json")
    recorded = case_from_trace(trace, flow=FLOW, out=tmp_path / "evals" / "case.json")
    expect = recorded.document["expect"]
    assert (expect["status"], expect["steps"], expect["calls"]) == ("failed", ["triage"], [])
    assert "route" not in expect
    assert "output" not in expect
    assert any("does not say why" in note for note in recorded.notes)
    path = write(tmp_path, recorded.document)
    assert load_case(path).name == "run"
    assert run_case(path).status == "passed"


def test_the_flow_is_found_when_the_repository_has_one_that_fits(tmp_path: Path) -> None:
    trace = record(tmp_path, "triage.json")
    recorded = case_from_trace(trace, repo=REFUND, out=tmp_path / "evals" / "case.json")
    assert recorded.document["flow"] == "flows/refund.json"
    assert any("does not name its flow" in note for note in recorded.notes)
    assert run_case(write(tmp_path, recorded.document)).status == "passed"


def test_without_a_flow_that_fits_it_asks_for_one(tmp_path: Path) -> None:
    trace = record(tmp_path, "triage.json")
    with pytest.raises(UsageError, match="give --flow"):
        case_from_trace(trace, repo=tmp_path)


def test_a_resumed_run_reads_as_one_run_with_each_call_once(tmp_path: Path) -> None:
    # The run finishes, then its last checkpoint is lost, as if its worker died after
    # create_refund completed; a second worker resumes it into the same trace file. The
    # interrupted billing step is done again, its calls answered from the journal.
    flow = load_flow(FLOW)
    repository = Repository.load(REFUND)
    tools = {r.spec.name: r for r in python_tools(repository, load_implementations(repository))}

    def model(agent: AgentSpec) -> Any:
        return model_from_spec(
            f"script:{FLOW.parent / (agent.model or '').removeprefix('script:')}"
        )

    path = tmp_path / "r1.jsonl"
    store = SqliteStore(tmp_path / "runs.db")

    def runner(trace: Trace) -> FlowRunner:
        return FlowRunner(flow, repository, store, tools=tools, model=model, trace=trace)

    try:
        with Trace("r1", path=path) as trace:
            anyio.run(runner(trace).start, REQUEST, "r1")
        store._db.execute("DELETE FROM checkpoints WHERE step = 2")
        store._db.execute("UPDATE runs SET step = 1, node = 'billing', status = 'running'")
        with Trace(path=path) as trace:
            anyio.run(runner(trace).resume, "r1")
    finally:
        store.close()
    hops = list(read_trace(path))
    assert sum(hop.protocol == "journal" for hop in hops) == 2  # both calls answered again
    recorded = case_from_trace(path, flow=FLOW, out=tmp_path / "evals" / "case.json")
    assert not any(note.startswith("the trace holds") for note in recorded.notes)
    expect = recorded.document["expect"]
    assert (expect["status"], expect["steps"], expect["route"]) == (
        "done",
        ["triage", "billing"],
        "billing",
    )
    assert [call["tool"] for call in expect["calls"]] == ["lookup_order", "create_refund"]
    assert "models" not in recorded.document  # the responses are the flow's own scripts'
    assert run_case(write(tmp_path, recorded.document)).status == "passed"
