"""The traced MCP wire (`WireTap`): recording a large message leaves the event loop, a trace that
keeps nothing builds nothing, and what a peer writes that is not JSON-RPC is kept bounded."""

from __future__ import annotations

import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from schemawire.mcp._offload import OFFLOAD_FROM
from schemawire.mcp._wire import WireTap
from schemawire.trace import Trace, read_trace

pytestmark = pytest.mark.anyio


def call(arguments: dict[str, Any]) -> SessionMessage:
    params = {"name": "lookup", "arguments": arguments}
    return SessionMessage(
        types.JSONRPCRequest(jsonrpc="2.0", id=7, method="tools/call", params=params)
    )


async def longest_stall(work: Any) -> float:
    """The longest the event loop went without running another task while ``work`` ran."""
    longest = 0.0
    done = anyio.Event()

    async def beat() -> None:
        nonlocal longest
        last = time.monotonic()
        while not done.is_set():
            await anyio.lowlevel.checkpoint()
            now = time.monotonic()
            longest, last = max(longest, now - last), now

    async def run() -> None:
        await work
        done.set()

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(beat)
            group.start_soon(run)
    return longest


@pytest.mark.slow
async def test_recording_a_large_message_does_not_stall_the_event_loop(tmp_path: Path) -> None:
    # Ten strings of 100,000 characters, each a run of URL-password look-alikes: redacting them
    # took the proxy's loop 6.5 s, every other client waiting.
    arguments = {f"note{i}": "a://b:c@" * 12_500 for i in range(10)}
    trace = Trace(path=tmp_path / "trace.jsonl", keep=False)
    tap = WireTap(trace, "host", "upstream")
    stall = await longest_stall(tap.sent(call(arguments)))
    trace.close()
    assert stall < 3  # 6.5 s before the fix; loose, for a loaded machine
    [start, hop] = read_trace(tmp_path / "trace.jsonl")  # the request's span opens first
    assert (start.payload["name"], hop.span) == ("tools/call", start.span)
    assert hop.payload["params"]["name"] == "lookup"  # recorded all the same


def result(size: int) -> SessionMessage:
    content = [{"type": "text", "text": "x" * size}]
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"content": content}))


def progress(size: int) -> SessionMessage:
    params = {"progressToken": 1, "progress": 1, "message": "x" * size}
    return SessionMessage(
        types.JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params=params)
    )


@pytest.mark.parametrize("message", [result, progress], ids=["result", "notification"])
async def test_a_message_is_recorded_off_the_event_loop_only_when_its_payload_is_large(
    message: Any,
) -> None:
    recorded_in: list[int] = []
    trace = Trace(on_hop=lambda hop: recorded_in.append(threading.get_ident()))
    tap = WireTap(trace, "host", "upstream")
    await tap.received(message(100))
    await tap.received(message(OFFLOAD_FROM))
    assert recorded_in[0] == threading.get_ident()  # small: here, on the loop
    assert recorded_in[1] != threading.get_ident()  # large: in a worker thread


async def test_a_trace_that_keeps_nothing_builds_nothing() -> None:
    # Without --trace the hop is only numbered: the message is never turned into JSON (that cost
    # a copy of every message, the size of the message).
    message = call({"items": list(range(1_000_000))})
    tap = WireTap(Trace(keep=False), "host", "upstream")
    tracemalloc.start()
    try:
        await tap.sent(message)
        await tap.received(message)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # a JSON copy of the message takes over 8 MB


async def test_what_a_peer_writes_that_is_not_json_rpc_is_kept_bounded() -> None:
    tap = WireTap(Trace(keep=False), "host", "upstream")
    for n in range(1000):
        try:
            types.jsonrpc_message_adapter.validate_json(f"not JSON-RPC, line {n}")
        except ValidationError as error:
            await tap.received(error)
    assert len(tap.unreadable) <= 10
    assert "line 999" in tap.unreadable[-1]  # the last is the one an error quotes
