"""The client and the gating proxy supervise the stdio servers they start: a server that stops
reading its input is noticed, stopped and replaced; after a crash, concurrent calls share one
restart; and no server outlives the process that started it, however that process ends.

Every server here is a real process (`servers/stalling.py`, which writes its pid and its
parent's pid to a file as it starts), every proxy a real `schemawire serve` or the same server
over HTTP on 127.0.0.1; that a process is gone is read from a pidfd, never from a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path

import anyio
import pytest

from schemawire.gates import ArgumentOptions, ValueLimits
from schemawire.mcp import HttpServer, McpCall, McpClient, StdioServer
from schemawire.mcp.launch import ServeOptions, gated_server
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from tests.mcp.helpers import scripted, serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

STALLING = Path(__file__).parent / "servers" / "stalling.py"
SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
# Past the gate's default limits: a message larger than the pipe's buffer.
LARGE = ArgumentOptions(limits=ValueLimits(max_bytes=2_000_000, max_string=2_000_000))
GONE_WITHIN = 20  # seconds: the SDK's stop takes 2 s of grace, then 2 s after SIGTERM


def stalling(pids: Path, *flags: str) -> StdioServer:
    return StdioServer(sys.executable, (str(STALLING), "--pids", str(pids), *flags))


def started(pids: Path) -> list[tuple[int, int]]:
    """The (pid, parent pid) of every server process started so far, in order."""
    if not pids.exists():
        return []
    return [(int(a), int(b)) for a, b in (line.split() for line in pids.read_text().splitlines())]


async def gone(pid: int) -> None:
    """Return once process ``pid`` has ended (a pidfd turns readable when it does)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with anyio.fail_after(GONE_WITHIN):
            await anyio.wait_readable(fd)
    finally:
        os.close(fd)


@contextmanager
def reaped(pids: Path) -> Iterator[None]:
    """Kill whatever a failing test left running of the servers it started."""
    try:
        yield
    finally:
        for pid, _ in started(pids):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@asynccontextmanager
async def proxy(server: StdioServer, root: Path, timeout: float) -> AsyncIterator[McpClient]:
    """A client of the gating proxy (served over HTTP) in front of ``server``."""
    options = ServeOptions(upstream=server, timeout=timeout)
    async with (
        gated_server(Repository.load(root), options, Trace()) as gated,
        serving(gated) as url,
        McpClient(HttpServer(url), timeout=60) as client,
    ):
        yield client


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    root = tmp_path / "empty"
    root.mkdir()
    return root


def failure_line(call: McpCall) -> str:
    message: str = call.output.content["error"]["violations"][0]["message"]
    return message


# --- a server that stops reading its input ------------------------------------------------------


async def test_a_server_that_stops_reading_is_stopped_after_its_call_times_out(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    with reaped(pids), anyio.fail_after(60):
        async with McpClient(stalling(pids)) as client:
            stalled = await client.call("stall", {}, timeout=0.5)
            assert not client.connected
            await gone(started(pids)[0][0])
            await client.reconnect()
            again = await client.call("echo", {"message": "back"})
    assert stalled.sent
    assert "ping" in failure_line(stalled)  # why it was stopped
    assert again.accepted
    assert len(started(pids)) == 2


async def test_a_slow_tool_on_a_server_that_still_reads_keeps_its_server() -> None:
    # A tool that takes longer than its timeout is not a stuck server: the server answers the
    # ping that follows, and keeps serving.
    with anyio.fail_after(60):
        async with McpClient(scripted()) as client:
            slow = await client.call("hang", {}, timeout=0.5)
            assert client.connected
            after = await client.call("echo", {"message": "still here"})
    assert "did not answer within 0.5 s" in failure_line(slow)
    assert "ping" not in failure_line(slow)
    assert after.accepted


async def test_the_proxy_replaces_an_upstream_that_stops_reading(
    tmp_path: Path, empty: Path
) -> None:
    pids = tmp_path / "pids"
    with reaped(pids), anyio.fail_after(60):
        async with proxy(stalling(pids), empty, timeout=1) as client:
            stalled = await client.call("stall", {})
            after = await client.call("echo", {"message": "still here"})
            await gone(started(pids)[0][0])
    assert not stalled.accepted
    assert after.accepted, after.rejection
    assert after.output.content == [{"type": "text", "text": "still here"}]
    assert len(started(pids)) == 2


async def test_a_write_the_server_never_reads_is_bounded(tmp_path: Path) -> None:
    # The server stops reading; a message larger than the pipe's buffer then never finishes
    # writing. The SDK's timeout starts only once the write is done: the client bounds it.
    pids = tmp_path / "pids"
    with reaped(pids), anyio.fail_after(60):
        async with McpClient(stalling(pids), argument_options=LARGE) as client:
            deaf = await client.call("deafen", {})
            unread = await client.call("echo", {"message": "x" * 1_000_000}, timeout=1)
            assert not client.connected
        await gone(started(pids)[0][0])
    assert deaf.accepted
    assert (unread.sent, unread.rejection and unread.rejection.code) == (True, "tool_failed")


# --- restarts -----------------------------------------------------------------------------------


async def test_after_a_crash_concurrent_calls_through_the_proxy_share_one_restart(
    tmp_path: Path, empty: Path
) -> None:
    pids = tmp_path / "pids"
    calls = {}

    async def echo(n: int) -> None:
        calls[n] = await client.call("echo", {"message": f"call {n}"})

    with reaped(pids), anyio.fail_after(60):
        async with proxy(stalling(pids), empty, timeout=10) as client:
            crashed = await client.call("crash", {})
            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(echo, n)
    assert not crashed.accepted
    assert all(call.accepted for call in calls.values()), [
        failure_line(c) for c in calls.values() if not c.accepted
    ]
    assert len(calls) == 8
    assert len(started(pids)) == 2  # the first, and one restart


async def test_an_upstream_that_cannot_restart_is_reported_with_its_secrets_redacted(
    tmp_path: Path, empty: Path
) -> None:
    # Its stderr's last words reach the proxy's client in the refusal: they were sent raw.
    pids = tmp_path / "pids"
    last_words = "fatal: cannot reach postgres://app:Hunter2Secret@db:5432/orders"
    with reaped(pids), anyio.fail_after(60):
        async with proxy(stalling(pids, "--restarts-fail", last_words), empty, 10) as client:
            await client.call("crash", {})
            after = await client.call("echo", {"message": "anyone there?"})
    assert not after.accepted
    assert after.output.content["error"]["code"] == "tool_unavailable"
    assert "cannot reach postgres://" in failure_line(after)  # the line is still told
    assert "Hunter2Secret" not in json.dumps(after.to_json())


async def test_concurrent_reconnects_share_one_restart(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    with reaped(pids), anyio.fail_after(60):
        async with McpClient(stalling(pids)) as client:
            await client.call("crash", {})
            async with anyio.create_task_group() as group:
                for _ in range(8):
                    group.start_soon(client.reconnect)
            again = await client.call("echo", {"message": "back"})
    assert again.accepted
    assert len(started(pids)) == 2


# --- no process left behind ---------------------------------------------------------------------


async def test_closing_the_client_stops_a_server_that_ignores_eof_and_sigterm(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    with reaped(pids), anyio.fail_after(60):
        async with McpClient(stalling(pids, "--stubborn")) as client:
            listed = await client.list_tools()
        await gone(started(pids)[0][0])
    assert [tool.name for tool in listed] == ["echo", "stall", "deafen", "crash"]


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
async def test_no_upstream_outlives_a_proxy_process_that_is_killed(
    sent: signal.Signals, tmp_path: Path, empty: Path
) -> None:
    pids = tmp_path / "pids"
    upstream = [sys.executable, str(STALLING), "--pids", str(pids), "--stubborn"]
    command = ("serve", "--repo", str(empty), "--upstream", "--", *upstream)
    with reaped(pids), anyio.fail_after(60):
        async with McpClient(StdioServer(SCHEMAWIRE, command)) as client:
            assert "echo" in {tool.name for tool in await client.list_tools()}
            ((pid, proxy_pid),) = started(pids)
            os.kill(proxy_pid, sent)
            await gone(proxy_pid)
            await gone(pid)
