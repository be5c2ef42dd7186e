"""Memory stays flat: `schemawire serve` keeps no hops in memory, with ``--trace`` or without,
so a server that runs for a week does not grow with the calls it answers."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import anyio
import pytest

from schemawire.mcp import HttpServer, McpClient
from schemawire.mcp._http import HttpOptions, http_app, running
from schemawire.mcp.launch import ServeOptions, gated_server
from schemawire.schema.repository import Repository
from schemawire.trace import read_trace
from tests.helpers import EXAMPLES

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CITY = "Paris " + "x" * 20_000  # each call's hops hold this a few times over: 60 KB or more
CALLS = 200


async def growth(options: ServeOptions) -> int:
    """Bytes the process holds after `CALLS` more calls to a tool served as `serve` serves it
    than after a hundred. One session (the handshake): the SDK keeps each stateless request's
    session a while, which is not the trace's to measure."""
    http = HttpOptions(port=0)
    repository = Repository.load(EXAMPLES / "support-desk")
    with options.open_trace() as trace:
        async with (
            gated_server(repository, options, trace) as server,
            running(http_app(server, http), http) as listening,
        ):
            url = f"http://127.0.0.1:{listening.port}/mcp"
            async with McpClient(HttpServer(url), mode="legacy", tracing=False) as client:
                await calls(client, 20)  # connection pools, the gates built
                tracemalloc.start()
                try:
                    await calls(client, 100)  # what fills once (caches) fills here
                    before = held()
                    await calls(client, CALLS)
                    after = held()
                finally:
                    tracemalloc.stop()
    return after - before


def held() -> int:
    """Bytes allocated and still reachable (cycles a request left are collected first)."""
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def calls(client: McpClient, count: int) -> None:
    with anyio.fail_after(120):
        for _ in range(count):
            result = await client.call("get_weather", {"city": CITY})
            assert result.accepted, result.rejection


@pytest.mark.parametrize("traced", [False, True], ids=["without --trace", "with --trace"])
async def test_a_served_tool_does_not_grow_memory_with_the_calls(
    tmp_path: Path, traced: bool
) -> None:
    path = tmp_path / "t.jsonl" if traced else None
    grown = await growth(ServeOptions(trace=path))
    # Keeping the hops held over 12 MB for these calls (60 KB a call); flat is well under 2.
    assert grown < 2_000_000, f"{grown} bytes more after {CALLS} calls"
    if path is not None:
        assert sum(1 for _ in read_trace(path)) >= 4 * (CALLS + 20)  # every hop was written
