"""Hops recorded off the hot path (`Trace.deferring`): kept, redacted and written at the block's
end, and yet no reader sees the wait, no secret is ever held, the values are those of the moment
of recording, and a process killed at any point leaves every hop of each finished block."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemawire.gates import ArgumentGate, ResultGate
from schemawire.host import Host, ScriptedModel
from schemawire.trace import Trace, read_trace
from schemawire.trace._lines import hop_line
from schemawire.types import ToolSpec

KEY = "sk-proj-" + "Q" * 20 + "T3BlbkFJ" + "x" * 20
SPEC = ToolSpec(
    "lookup",
    {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"password": {"type": "string"}}},
)

# (source, target, protocol, direction, payload, verdict): clean hops, secrets in each field,
# values JSON cannot copy exactly, and verdicts whose pointers are redacted token by token.
HOPS: list[tuple[str, str, str, str, Any, Any]] = [
    ("user", "host", "text", "receive", {"text": "turn 1", "number": 1}, None),
    ("host", "model:openai.chat", "openai.chat", "send", {"messages": [{"content": "hi"}]}, None),
    ("host", "python:lookup", "python", "send", {"q": KEY, "n": [1, 2.5, None, True]}, None),
    (f"env KEY={KEY}", "host", "mcp", "receive", {"token": "abc", "x": "y"}, None),
    ("host", "tool", "python", "send", {"big": 2**70, "tuple": (1, 2)}, None),
    ("host", "tool", "python", "send", {"lone": "\ud800"}, None),
    ("host", "tool", "python", "send", None, None),
    ("host", "user", "text", "send", {"kind": "turn", "status": "ok"}, None),
]


def verdicts() -> list[dict[str, Any]]:
    """Verdicts' JSON as gates give them: accepted, refused with violations, redacted."""
    arguments = ArgumentGate(SPEC)
    results = ResultGate(SPEC)
    return [
        arguments.check('{"q": "weather"}').to_json(),
        arguments.check({"q": 1, KEY: 2}).to_json(),
        results.check({"structuredContent": {"password": "hunter2"}}).to_json(),
    ]


def record_all(trace: Trace) -> None:
    for source, target, protocol, direction, payload, verdict in HOPS:
        trace.record(source, target, protocol, direction, payload, verdict=verdict)
    for verdict in verdicts():
        trace.record("host", "host", "gate", "check", {"tool": "lookup"}, verdict=verdict)


def test_hops_kept_at_a_blocks_end_are_those_kept_at_once(tmp_path: Path) -> None:
    with Trace("r1", path=tmp_path / "now.jsonl", clock=lambda: 1.0) as at_once:
        record_all(at_once)
    with Trace("r1", path=tmp_path / "later.jsonl", clock=lambda: 1.0) as later, later.deferring():
        record_all(later)
    assert [hop_line(h) for h in later.hops] == [hop_line(h) for h in at_once.hops]
    assert (tmp_path / "later.jsonl").read_bytes() == (tmp_path / "now.jsonl").read_bytes()
    assert KEY not in (tmp_path / "later.jsonl").read_text(encoding="utf-8")
    assert KEY not in repr(later.hops)


def test_reading_hops_inside_a_block_sees_every_hop_recorded_so_far() -> None:
    trace = Trace("r1")
    with trace.deferring():
        trace.record("host", "tool", "python", "send", {"n": 1})
        trace.record("host", "tool", "python", "send", {"q": KEY})
        assert [hop.seq for hop in trace.hops] == [1, 2]
        assert KEY not in repr(trace.hops)
        trace.record("host", "tool", "python", "send", {"n": 3})
    assert [hop.seq for hop in trace.hops] == [1, 2, 3]


def test_a_listener_sees_each_hop_as_it_is_recorded_even_in_a_block() -> None:
    """What prints or exports hops as they happen keeps its order with the rest of the output
    (a model's streamed text, say)."""
    trace = Trace("r1")
    seen: list[int] = []
    trace.listen(lambda hop: seen.append(hop.seq))
    with trace.deferring():
        trace.record("host", "tool", "python", "send", {"n": 1})
        assert seen == [1]
        trace.record("host", "tool", "python", "send", {"q": KEY})
        assert seen == [1, 2]


def test_a_value_changed_after_recording_is_kept_as_it_was_recorded() -> None:
    trace = Trace("r1")
    payload: dict[str, Any] = {"messages": [{"content": "hi"}]}
    with trace.deferring():
        trace.record("host", "model:openai.chat", "openai.chat", "send", payload)
        payload["messages"][0]["content"] = KEY  # a secret added after: never in the trace
        payload["api_key"] = "hunter2"
    assert trace.hops[0].payload == {"messages": [{"content": "hi"}]}


def test_a_blocks_hops_are_on_disk_when_it_ends_even_when_it_raises(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"

    def failing_turn(trace: Trace) -> None:
        with trace.deferring():
            trace.record("host", "tool", "python", "send", {"n": 1})
            _ = 1 / 0

    with Trace("r1", path=path) as trace, pytest.raises(ZeroDivisionError):
        failing_turn(trace)
    assert [hop.payload for hop in read_trace(path)] == [{"n": 1}]


def test_closing_a_trace_writes_every_hop_recorded(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    trace = Trace("r1", path=path)
    block = trace.deferring()
    block.__enter__()
    trace.record("host", "tool", "python", "send", {"n": 1})
    trace.close()
    assert [hop.seq for hop in read_trace(path)] == [1]


class BrokenFile:
    """A trace file whose disk is full."""

    def write(self, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        raise OSError("no descriptor")

    def close(self) -> None:
        pass


def test_a_file_that_cannot_be_written_raises_at_the_barrier_with_the_hops_kept(
    tmp_path: Path,
) -> None:
    trace = Trace("r1", path=tmp_path / "t.jsonl")
    trace.record("host", "tool", "python", "send", {"n": 1})
    assert trace._file is not None
    trace._file.close()
    trace._file = BrokenFile()  # type: ignore[assignment]
    block = trace.deferring()
    block.__enter__()
    trace.record("host", "tool", "python", "send", {"n": 2})  # recording does not fail
    with pytest.raises(OSError, match="No space"):
        block.__exit__(None, None, None)
    assert [hop.seq for hop in trace.hops] == [1, 2]


# Records turns of hops, each in a deferring block; after each turn it says "turn <n>" and,
# when told "mid", records half of the next turn and says "mid". It waits on stdin each time.
TURNS = """
import sys
from schemawire.trace import Trace

trace = Trace("killed", path=sys.argv[1])
for turn in range(1, 100):
    with trace.deferring():
        for n in range(5):
            trace.record("host", "tool", "python", "send", {"turn": turn, "n": n})
            if n == 2 and sys.stdin.readline().strip() == "mid":
                print("mid", flush=True)
                sys.stdin.readline()
    print(f"turn {turn}", flush=True)
"""


async def kill_after(path: Path, turns: int, mid: bool) -> None:
    """Run `TURNS` for ``turns`` finished turns (and half of the next when ``mid``), then
    SIGKILL it."""
    command = [sys.executable, "-c", TURNS, str(path)]
    async with await anyio.open_process(command, stderr=subprocess.DEVNULL) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        with anyio.fail_after(60):
            said = b""
            for turn in range(1, turns + 1):
                await process.stdin.send(b"go\n")
                while f"turn {turn}\n".encode() not in said:
                    said += await process.stdout.receive()
            if mid:
                await process.stdin.send(b"mid\n")
                while b"mid\n" not in said:
                    said += await process.stdout.receive()
            process.send_signal(signal.SIGKILL)
            assert await process.wait() == -signal.SIGKILL


@pytest.mark.anyio
@pytest.mark.parametrize(("turns", "mid"), [(0, True), (1, False), (1, True), (3, True)])
async def test_a_process_killed_at_any_point_leaves_every_hop_of_its_finished_turns(
    tmp_path: Path, turns: int, mid: bool
) -> None:
    path = tmp_path / "t.jsonl"
    await kill_after(path, turns, mid)
    hops = list(read_trace(path)) if path.exists() else []
    finished = [(turn, n) for turn in range(1, turns + 1) for n in range(5)]
    got = [(hop.payload["turn"], hop.payload["n"]) for hop in hops]
    assert got[: len(finished)] == finished  # in order, none missing
    assert [hop.seq for hop in hops] == list(range(1, len(hops) + 1))  # no gaps


def test_a_large_payload_is_kept_where_it_is_recorded_even_in_a_block() -> None:
    """A large hop's redaction stays where it is recorded (a server's worker thread), never
    handed to the block's end on the event loop."""
    trace = Trace("r1")
    with trace.deferring():
        small = trace.record("host", "tool", "python", "send", {"n": 1})
        large = trace.record("host", "tool", "python", "send", {"text": "x" * 20_000, "k": KEY})
        assert small is None
        assert large is not None
        assert KEY not in repr(large.payload)
        assert trace._pending == []
    assert [hop.seq for hop in trace.hops] == [1, 2]


class PeekingModel(ScriptedModel):
    """Reads the trace file at the moment it is asked: what a viewer (or a crash) would find."""

    def __init__(self, path: Path) -> None:
        super().__init__("openai.chat", [ANSWER])
        self.path = path
        self.seen: list[tuple[str, str]] = []

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        self.seen = [(hop.target, hop.direction) for hop in read_trace(self.path)]
        return await super().respond(body)


ANSWER = {
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "4"}}
    ]
}


def test_a_model_request_is_in_the_file_before_the_model_is_asked(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    model, trace = PeekingModel(path), Trace("r1", path=path)
    try:
        Host(model, trace=trace).run_sync("What is 2 + 2?")
    finally:
        trace.close()
    assert model.seen[-1] == ("model:openai.chat", "send")
