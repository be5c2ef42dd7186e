"""The trace file: one id per run, created with the first hop, appended to by a resumed run
(numbered on, a line a crash cut short dropped), and read back whole."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire.errors import ErrorCode, JSONError
from schemawire.gates import Verdict
from schemawire.trace import TRACES, Trace, new_run_id, read_trace, record_verdicts, trace_path


def record(trace: Trace, count: int, text: str = "hop") -> None:
    for number in range(count):
        trace.record("host", "model:openai.chat", "openai.chat", "send", {"n": number, "t": text})


def test_a_runs_id_names_its_hops_and_its_file() -> None:
    run_id = new_run_id()
    assert re.fullmatch(r"[0-9a-f]{16}", run_id)
    assert trace_path(run_id) == TRACES / f"{run_id}.jsonl"
    assert Trace().run_id != Trace().run_id


def test_the_file_is_created_with_the_first_hop(tmp_path: Path) -> None:
    path = tmp_path / "traces" / "r1.jsonl"
    trace = Trace("r1", path=path)
    assert not path.exists()  # a run that never starts leaves no empty trace
    assert not trace.written
    record(trace, 2)
    trace.close()
    assert trace.written
    assert [(h.run_id, h.seq) for h in read_trace(path)] == [("r1", 1), ("r1", 2)]


def test_a_resumed_run_appends_to_its_file_numbered_on(tmp_path: Path) -> None:
    path = tmp_path / "r1.jsonl"
    with Trace("r1", path=path) as first:
        record(first, 2)
    with Trace("r1", path=path) as resumed:
        record(resumed, 1)
    with Trace("r2", path=path) as other:  # another run in the same file starts at 1
        record(other, 1)
    assert [(h.run_id, h.seq) for h in read_trace(path)] == [
        ("r1", 1),
        ("r1", 2),
        ("r1", 3),
        ("r2", 1),
    ]


def test_begin_moves_a_trace_to_another_run(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with Trace("r1", path=path) as first:
        record(first, 2)
    with Trace(path=path) as trace:
        trace.begin("r1")
        record(trace, 1)
    assert [(h.run_id, h.seq) for h in read_trace(path)][-1] == ("r1", 3)


def test_a_line_cut_short_by_a_crash_is_dropped_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "r1.jsonl"
    with Trace("r1", path=path) as first:
        record(first, 2)
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"run":"r1","seq":3,"ti')  # the crash, mid-line
    with Trace("r1", path=path) as resumed:
        record(resumed, 1, "after")
    hops = list(read_trace(path))
    assert [(h.seq, h.payload["t"]) for h in hops] == [(1, "hop"), (2, "hop"), (3, "after")]


def test_a_file_that_is_not_a_trace_is_refused_before_a_hop_is_written(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("not a hop\n{}\n", encoding="utf-8")
    with pytest.raises(JSONError) as raised:
        Trace("r1", path=path)
    assert (raised.value.code, raised.value.line) == (ErrorCode.JSON_SYNTAX, 1)
    assert path.read_text(encoding="utf-8") == "not a hop\n{}\n"


def test_a_trace_can_go_to_a_pipe(tmp_path: Path) -> None:
    read, write = os.pipe()
    with os.fdopen(read, "rb") as reader:
        with Trace("r1", path=f"/dev/fd/{write}") as trace:
            record(trace, 1)
        os.close(write)
        (line,) = reader.read().splitlines()
    assert json.loads(line)["run"] == "r1"
    assert trace.written


def test_after_close_hops_are_kept_in_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "r1.jsonl"
    trace = Trace("r1", path=path)
    record(trace, 1)
    trace.close()
    record(trace, 1)
    assert [h.seq for h in trace.hops] == [1, 2]
    assert [h.seq for h in read_trace(path)] == [1]


@given(before=st.integers(0, 5), after=st.integers(1, 3), cut=st.integers(0, 400))
def test_appending_after_a_crash_at_any_byte_reads_back_in_order(
    tmp_path_factory: pytest.TempPathFactory, before: int, after: int, cut: int
) -> None:
    path = tmp_path_factory.mktemp("trace") / "r1.jsonl"
    with Trace("r1", path=path) as first:
        record(first, before, "é ☃")
    written = path.read_bytes() if path.exists() else b""
    kept = written[: min(cut, len(written))]
    path.write_bytes(kept)
    tail = kept.rsplit(b"\n", 1)[-1]  # the line the crash was writing, if any
    cut_short = int(bool(tail) and written[len(kept) : len(kept) + 1] != b"\n")
    whole = kept.count(b"\n") + int(bool(tail) and not cut_short)  # only the newline lost
    with Trace("r1", path=path) as resumed:
        record(resumed, after, "after")
    cuts: list[int] = []
    hops = list(read_trace(path, on_cut=cuts.append))
    assert [h.seq for h in hops] == list(range(1, whole + after + 1))
    assert [h.payload["t"] for h in hops] == ["é ☃"] * whole + ["after"] * after
    assert len(cuts) == cut_short


def test_each_gates_verdict_is_a_gate_hop_and_none_is_skipped() -> None:
    trace = Trace("r1")
    accepted = Verdict.accept(gate="arguments", tool="get_weather", value={"city": "Paris"})
    refused = Verdict(gate="results", tool="get_weather", accepted=False, value={"error": "no"})
    record_verdicts(trace, "host", accepted, None, refused)
    hops = [(h.source, h.target, h.protocol, h.direction, h.payload) for h in trace.hops]
    assert hops == [("host", "host", "gate", "check", {"tool": "get_weather"})] * 2
    assert [h.verdict for h in trace.hops] == [accepted.to_json(), refused.to_json()]


def test_a_value_a_file_cannot_hold_exactly_is_written_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    deep: object = 0
    for _ in range(300):
        deep = [deep]
    with Trace("r1", path=path) as trace:
        for payload in ({"name": "report-\udcff"}, {"n": 2**70, "s": "\ud800"}, {"d": deep}):
            trace.record("python:ls", "host", "python", "receive", payload)
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert lines[0]["payload"] == {"name": "report-\ufffd"}
    assert lines[1]["payload"] == {"n": 2**70, "s": "\ufffd"}
    assert all("note" in line for line in lines)
    assert [h.seq for h in read_trace(path)] == [1, 2, 3]


def test_a_trace_that_keeps_nothing_builds_no_hop(tmp_path: Path) -> None:
    quiet = Trace("r1", keep=False)
    assert quiet.record("host", "tool", "python", "send", {"n": 1}) is None
    written = Trace("r1", path=tmp_path / "t.jsonl", keep=False)
    record(written, 3)
    written.close()
    assert (quiet.hops, written.hops) == ([], [])
    assert [h.seq for h in read_trace(tmp_path / "t.jsonl")] == [1, 2, 3]


def test_every_field_of_a_hop_is_redacted(tmp_path: Path) -> None:
    key = "sk-proj-" + "Q" * 20 + "T3BlbkFJ" + "x" * 20
    with Trace("r1", path=tmp_path / "t.jsonl") as trace:
        trace.record(f"env KEY={key} cmd", "host", "mcp", "send", {"k": key}, verdict={"got": key})
    assert key not in (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert key not in repr(trace.hops)
