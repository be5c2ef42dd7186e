"""Our server under hostile load, over real Streamable HTTP on 127.0.0.1: one client's worst
request does not stall the others, one client cannot use up the sessions, slow connections are
cut, and duplicate keys are refused as the argument gate refuses them."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest

from schemawire.mcp import HttpServer, McpClient
from schemawire.mcp._http import HttpOptions, http_app, running
from schemawire.mcp.server import LocalTools, build_server
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from tests.conftest import WriteRepo, tool_schema
from tests.mcp.rawmcp import HttpSession, tool_call

pytestmark = pytest.mark.anyio


class Spy:
    def __init__(self) -> None:
        self.cities: list[Any] = []

    def lookup(self, city: Any) -> dict[str, Any]:
        self.cities.append(city)
        return {"city": city}


@asynccontextmanager
async def lookup_server(
    write_repo: WriteRepo, spy: Spy, options: HttpOptions | None = None
) -> AsyncIterator[str]:
    root = write_repo({"schemas/tools/lookup.json": tool_schema("lookup")})
    tools = LocalTools(Repository.load(root), {"lookup": spy.lookup})
    server = build_server(tools, name="spy", version="1.0.0", trace=Trace())
    options = options or HttpOptions(port=0)
    async with running(http_app(server, options), options) as listening:
        yield f"http://127.0.0.1:{listening.port}/mcp"


# --- one client's worst request does not stall the others --------------------------------------


async def test_a_huge_request_does_not_stall_the_other_clients(write_repo: WriteRepo) -> None:
    # A 4 MB body holding a 2,000,000-item array: the gates and the trace walk it. On the event
    # loop that stalled every client for seconds; off it, small calls keep being answered.
    huge = tool_call(7, "lookup", '{"city": [' + ",".join(["0"] * 2_000_000) + "]}")
    spy, latencies = Spy(), []
    async with (
        lookup_server(write_repo, spy) as url,
        httpx2.AsyncClient(timeout=120) as http,
        McpClient(HttpServer(url), timeout=120) as small,
    ):
        session = await HttpSession(http, url).open()
        finished = anyio.Event()

        async def send_huge() -> None:
            refused = await session.post(huge)
            assert refused["result"]["isError"] is True
            finished.set()

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                group.start_soon(send_huge)
                while not finished.is_set() or len(latencies) < 5:
                    started = time.perf_counter()
                    done = await small.call_unchecked("lookup", {"city": "Oslo"})
                    latencies.append(time.perf_counter() - started)
                    assert done["isError"] is False
    assert spy.cities.count("Oslo") == len(latencies)
    assert max(latencies) < 1.0, sorted(latencies)[-3:]  # on the loop: 3.8 s


# --- slow connections are cut -------------------------------------------------------------------


async def closed_within(port: int, sent: bytes, seconds: float) -> float:
    """Connect, send ``sent`` and no more; how long until the server closes the connection."""
    started = time.perf_counter()
    with anyio.fail_after(seconds):
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(sent)
            try:
                while await stream.receive():
                    pass  # a response the server sends before closing
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                pass
    return time.perf_counter() - started


@pytest.mark.parametrize(
    "sent",
    [
        b"",  # connected and silent
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",  # headers that never end
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 1000\r\n\r\n{"jsonrpc": ',  # a body that never ends
    ],
    ids=["silent", "slow-headers", "slow-body"],
)
async def test_slow_connections_are_cut(write_repo: WriteRepo, sent: bytes) -> None:
    options = HttpOptions(port=0, header_timeout=0.5, body_timeout=0.5)
    async with lookup_server(write_repo, Spy(), options) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert await closed_within(port, sent, 5.0) >= 0.4


async def trickle_until_closed(stream: anyio.abc.ByteStream) -> None:
    """Send one header byte every 50 ms, as a slowloris client does, until the server closes."""
    try:
        while True:
            await stream.send(b"X")
            with anyio.move_on_after(0.05):
                await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
        return


async def test_headers_trickling_in_do_not_extend_the_deadline(write_repo: WriteRepo) -> None:
    options = HttpOptions(port=0, header_timeout=0.5)
    async with lookup_server(write_repo, Spy(), options) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        started = time.perf_counter()
        with anyio.fail_after(5):
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                await trickle_until_closed(stream)
        assert 0.4 <= time.perf_counter() - started < 5
