"""A trace survives a crash: a process killed with SIGKILL in the middle of writing a large hop
leaves a cut line; the writers after it start a line of their own, and the reader reports the
cut line and reads every hop around it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from schemawire.trace import Trace, read_trace

pytestmark = pytest.mark.anyio

BIG = 9 * 1024 * 1024  # characters of the hop the crash cuts

# Writes one hop, then a big one; a slow disk halfway through that one: it says "cut" on stdout
# once half the line is on disk, and waits there (for stdin, which never comes) to be killed.
WRITER = """
import sys
from schemawire.trace import Trace

class HalfwayFile:
    def __init__(self, file):
        self.file = file
    def write(self, data):
        if len(data) < 1024 * 1024:
            return self.file.write(data)
        self.file.write(data[: len(data) // 2])
        self.file.flush()
        print("cut", flush=True)
        sys.stdin.read()
    def __getattr__(self, name):
        return getattr(self.file, name)

trace = Trace("crashed", path=sys.argv[1])
trace.record("host", "tool", "python", "send", {"n": 1})
trace._file = HalfwayFile(trace._file)
trace.record("host", "tool", "python", "send", {"text": "x" * int(sys.argv[2])})
"""


async def crash_mid_hop(path: Path) -> None:
    """Run the writer until it is halfway through its big hop, then SIGKILL it."""
    command = [sys.executable, "-c", WRITER, str(path), str(BIG)]
    async with await anyio.open_process(command, stderr=subprocess.DEVNULL) as process:
        assert process.stdout is not None
        with anyio.fail_after(60):
            said = await process.stdout.receive()
            assert said.strip() == b"cut"
            process.send_signal(signal.SIGKILL)
            assert await process.wait() == -signal.SIGKILL


def record(trace: Trace, text: str) -> None:
    trace.record("host", "tool", "python", "send", {"text": text})


def two_hops(path: Path) -> tuple[bytes, bytes]:
    """A trace at ``path`` of two hops, ``one`` and ``two``; their lines."""
    with Trace("r1", path=path) as trace:
        record(trace, "one")
        record(trace, "two")
    one, two = path.read_bytes().splitlines()
    return one, two


async def test_a_process_that_appends_after_a_crash_starts_a_line_of_its_own(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    await crash_mid_hop(path)
    assert not path.read_bytes().endswith(b"\n")  # the crash cut the big hop
    with Trace("next", path=path) as after:
        record(after, "after the crash")
    cuts: list[int] = []
    hops = [(h.run_id, h.seq) for h in read_trace(path, on_cut=cuts.append)]
    assert hops == [("crashed", 1), ("next", 1)]
    assert cuts == [2]


@pytest.mark.slow
async def test_a_writer_open_before_the_crash_starts_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    with Trace("beside", path=path) as beside:  # another process's trace, open all along
        record(beside, "before the crash")
        await crash_mid_hop(path)
        record(beside, "after the crash")
    cuts: list[int] = []
    hops = [(h.run_id, h.seq) for h in read_trace(path, on_cut=cuts.append)]
    assert hops == [("beside", 1), ("crashed", 1), ("beside", 2)]
    assert cuts == [3]
    assert sum(1 for _ in read_trace(path)) == 3  # and without asking about cuts


def test_a_resumed_run_numbers_on_past_a_cut_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with Trace("r1", path=path) as first:
        record(first, "one")
    path.write_bytes(path.read_bytes() + b'{"run":"r1","seq":2,"time":1,"fr')  # the crash
    with Trace("r1", path=path) as resumed:
        record(resumed, "three")
    assert [(h.seq, h.payload["text"]) for h in read_trace(path)] == [(1, "one"), (2, "three")]


def test_a_cut_line_an_older_writer_appended_to_is_read_past(tmp_path: Path) -> None:
    # What a writer that did not start a fresh line left: the cut hop, and one joined to it.
    path = tmp_path / "t.jsonl"
    one, two = two_hops(path)
    path.write_bytes(one[:40] + two + b"\n")
    cuts: list[int] = []
    assert [h.payload["text"] for h in read_trace(path, on_cut=cuts.append)] == ["two"]
    assert cuts == [1]


def test_a_cut_line_full_of_hop_like_objects_is_read_past_in_linear_time(tmp_path: Path) -> None:
    # A payload of many {"run": ...} objects, cut by a crash, then a hop joined to it: the old
    # reader sliced the line and parsed from each of them (50,000: 10 s and more).
    path = tmp_path / "t.jsonl"
    one, two = two_hops(path)
    head = one[: one.index(b'"payload":') + len(b'"payload":')]
    path.write_bytes(head + b"[" + b'{"run":1,"seq":2},' * 50_000 + two + b"\n")
    cuts: list[int] = []
    start = time.perf_counter()
    hops = [h.payload["text"] for h in read_trace(path, on_cut=cuts.append)]
    assert time.perf_counter() - start < 2
    assert hops == ["two"]
    assert cuts == [1]


def test_a_hop_joined_to_a_cut_line_keeps_its_integers_exact(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with Trace("r1", path=path) as first:
        first.record("a", "b", "mcp", "request", {"n": 2**70, "inner": {"run": 1}})
    line = path.read_bytes().rstrip(b"\n")
    path.write_bytes(line[:60] + line + b"\n")
    assert [h.payload["n"] for h in read_trace(path)] == [2**70]
