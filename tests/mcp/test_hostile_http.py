"""Our server under hostile load, over real Streamable HTTP on 127.0.0.1: one client's worst
request does not stall the others, one client cannot use up the sessions, slow connections are
cut, and duplicate keys are refused as the argument gate refuses them."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire.gates import ArgumentGate
from schemawire.mcp import HttpServer, McpClient
from schemawire.mcp._http import HttpOptions, SessionBounds, http_app, running
from schemawire.mcp._sent import SentLines, arguments_to_check, stdin_lines
from schemawire.mcp.server import LocalTools, build_server
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from tests.helpers import EXAMPLES, WriteRepo, tool_schema
from tests.mcp.rawmcp import ACCEPT, INITIALIZE, HttpSession, StdioSession, tool_call

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DESK = EXAMPLES / "support-desk"

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


@asynccontextmanager
async def lookup_session(write_repo: WriteRepo, spy: Spy) -> AsyncIterator[HttpSession]:
    """An open MCP session over HTTP with the `lookup_server` of ``spy``."""
    async with lookup_server(write_repo, spy) as url, httpx2.AsyncClient(timeout=30) as http:
        yield await HttpSession(http, url).open()


# --- one client's worst request does not stall the others --------------------------------------


@pytest.mark.slow
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
                    done = await small.call("lookup", {"city": "Oslo"})
                    latencies.append(time.perf_counter() - started)
                    assert done.accepted, done.rejection
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --- one client cannot use up the sessions ------------------------------------------------------


async def session_status(http: httpx2.AsyncClient, url: str, session: HttpSession) -> int:
    """The status of a ping within ``session``: 200 while it lives, 404 once it has ended."""
    ping = b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}'
    response = await http.post(url, content=ping, headers=session.headers)
    return response.status_code


async def test_past_its_bound_a_client_loses_its_longest_idle_session(
    write_repo: WriteRepo,
) -> None:
    options = HttpOptions(port=0, sessions=SessionBounds(per_client=3, total=10))
    async with lookup_server(write_repo, Spy(), options) as url, httpx2.AsyncClient() as http:
        with anyio.fail_after(30):
            sessions = [await HttpSession(http, url).open() for _ in range(5)]
            statuses = [await session_status(http, url, s) for s in sessions]
            assert statuses == [404, 404, 200, 200, 200]
            # The client of an ended session opens a new one, at the cost of the longest idle.
            async with McpClient(HttpServer(url), mode="legacy") as client:
                assert [t.name for t in await client.list_tools()] == ["lookup"]
            assert [await session_status(http, url, s) for s in sessions[2:]] == [404, 200, 200]


async def test_past_the_total_bound_the_longest_idle_session_of_anyone_ends(
    write_repo: WriteRepo,
) -> None:
    options = HttpOptions(port=0, sessions=SessionBounds(per_client=3, total=4))
    other = httpx2.AsyncHTTPTransport(local_address="127.0.0.2")
    async with (
        lookup_server(write_repo, Spy(), options) as url,
        httpx2.AsyncClient() as http,
        httpx2.AsyncClient(transport=other) as elsewhere,
    ):
        with anyio.fail_after(30):
            first = [await HttpSession(http, url).open() for _ in range(3)]
            second = [await HttpSession(elsewhere, url).open() for _ in range(2)]
            assert [await session_status(http, url, s) for s in first] == [404, 200, 200]
            assert [await session_status(elsewhere, url, s) for s in second] == [200, 200]


async def test_when_every_session_is_busy_a_new_one_is_refused_for_now(
    write_repo: WriteRepo,
) -> None:
    options = HttpOptions(port=0, sessions=SessionBounds(per_client=1, total=10))
    async with lookup_server(write_repo, Spy(), options) as url, httpx2.AsyncClient() as http:
        with anyio.fail_after(30):
            busy = await HttpSession(http, url).open()
            headers = {**busy.headers, "Accept": "text/event-stream"}
            async with http.stream("GET", url, headers=headers) as stream:  # held open
                assert stream.status_code == 200
                refused = await http.post(url, json=INITIALIZE, headers=ACCEPT)
                assert refused.status_code == 503
                assert refused.headers["retry-after"] == "5"
            assert await session_status(http, url, busy) == 200


async def test_a_stream_opened_while_its_session_is_being_opened_counts_as_busy(
    write_repo: WriteRepo,
) -> None:
    # The session was tracked only once its initialize answer was done: a GET stream opened on
    # the new id in between reached the SDK uncounted, so the session looked idle while its
    # stream was open, and the next session of the client ended it.
    root = write_repo({"schemas/tools/lookup.json": tool_schema("lookup")})
    tools = LocalTools(Repository.load(root), {"lookup": Spy().lookup})
    server = build_server(tools, name="spy", version="1.0.0", trace=Trace())
    options = HttpOptions(port=0, sessions=SessionBounds(per_client=1, total=10))
    app = http_app(server, options)
    release = anyio.Event()
    async with (
        running(app, options) as listening,
        httpx2.AsyncClient(timeout=30) as http,
        anyio.create_task_group() as group,
    ):
        url = f"http://127.0.0.1:{listening.port}/mcp"

        async def hold_stream(session_id: str, *, task_status: anyio.abc.TaskStatus[int]) -> None:
            headers = {
                "Accept": "text/event-stream",
                "mcp-session-id": session_id,
                "mcp-protocol-version": "2025-11-25",
            }
            async with http.stream("GET", url, headers=headers) as stream:
                task_status.started(stream.status_code)
                await release.wait()

        async def send(message: Any) -> None:
            if message["type"] == "http.response.start":  # the initialize answer has begun
                session_id = dict(message["headers"])[b"mcp-session-id"].decode()
                assert await group.start(hold_stream, session_id) == 200

        body = json.dumps(INITIALIZE).encode()
        sent = iter([{"type": "http.request", "body": body, "more_body": False}])

        async def receive() -> Any:
            return next(sent, None) or await anyio.sleep_forever()

        with anyio.fail_after(30):
            await app(initialize_scope(listening.port, body), receive, send)
            second = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        release.set()
    assert second.status_code == 503  # the first session is busy with its stream: not ended


def initialize_scope(port: int, body: bytes) -> dict[str, Any]:
    """The ASGI scope of an initialize POST from 127.0.0.1, as uvicorn would build it."""
    headers = [(k.lower().encode(), v.encode()) for k, v in ACCEPT.items()]
    headers += [(b"host", f"127.0.0.1:{port}".encode()), (b"content-length", b"%d" % len(body))]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", port),
    }


@pytest.mark.slow
async def test_an_idle_session_ends_after_the_idle_time(write_repo: WriteRepo) -> None:
    options = HttpOptions(port=0, sessions=SessionBounds(idle=0.5))
    async with lookup_server(write_repo, Spy(), options) as url, httpx2.AsyncClient() as http:
        session = await HttpSession(http, url).open()
        started = time.perf_counter()
        with anyio.fail_after(10):
            while await session_status(http, url, session) == 200:
                await anyio.sleep(0.6)  # each ping restarts the idle clock: wait past it
        assert time.perf_counter() - started < 10


@pytest.mark.slow
@pytest.mark.parametrize(
    "flag",
    [
        "--header-timeout=0",
        "--body-timeout=-1",
        "--session-idle=0",
        "--max-sessions=0",
        "--client-sessions=-3",
    ],
)
def test_serve_refuses_bounds_that_are_not_positive(flag: str) -> None:
    done = subprocess.run(
        [SCHEMAWIRE, "serve", str(DESK), "--http", "--port", "0", flag],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert flag.partition("=")[0] in done.stderr


# --- duplicate keys are refused as the argument gate refuses them --------------------------------

DUPLICATED = '{"city": "Oslo", "nested": {"a": 1, "a": 2}, "city": "Paris"}'


def gate_error(repository: Repository, tool: str, text: str) -> dict[str, Any]:
    """What `ArgumentGate.check` says of ``text``, as the model reads it."""
    verdict = ArgumentGate.from_repository(repository, tool).check(text)
    assert verdict.rejection is not None
    error: dict[str, Any] = verdict.rejection.to_json()["error"]
    return error


def refusal(answer: dict[str, Any]) -> dict[str, Any]:
    result = answer["result"]
    assert result["isError"] is True
    error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return error


async def test_duplicate_keys_over_http_are_refused_before_the_tool_runs(
    write_repo: WriteRepo,
) -> None:
    spy = Spy()
    async with lookup_session(write_repo, spy) as session:
        with anyio.fail_after(30):
            refused = await session.post(tool_call(3, "lookup", DUPLICATED))
            plain = await session.post(tool_call(4, "lookup", '{"city": "Oslo"}'))
    repository = Repository.load(write_repo({"schemas/tools/lookup.json": tool_schema("lookup")}))
    assert refusal(refused) == gate_error(repository, "lookup", DUPLICATED)
    assert refusal(refused)["code"] == "arguments_malformed"
    assert refusal(refused)["violations"][0]["pointer"] == "/nested/a"
    assert plain["result"]["isError"] is False
    assert spy.cities == ["Oslo"]  # only the plain call ran


@pytest.mark.slow
@pytest.mark.parametrize("proxied", [False, True], ids=["server", "proxy"])
async def test_duplicate_keys_over_stdio_are_refused_as_the_gate_refuses_them(
    proxied: bool,
) -> None:
    text = '{"city": "Oslo", "city": "Paris"}'
    with anyio.fail_after(60):
        async with desk_over_stdio(proxied) as session:
            await session.send(tool_call(5, "get_weather", text))
            refused = await session.receive()
            await session.send(tool_call(6, "get_weather", '{"city": "Paris"}'))
            plain = await session.receive()
    error = refusal(refused)
    assert error == gate_error(Repository.load(DESK), "get_weather", text)
    assert (error["code"], error["violations"][0]["pointer"]) == ("arguments_malformed", "/city")
    assert plain["result"]["structuredContent"]["city"] == "Paris"


def test_only_arguments_that_repeat_a_key_are_taken_as_text() -> None:
    assert arguments_to_check(tool_call(1, "t", '{"a": 1}')) is None
    assert arguments_to_check(b'{"id": 1, "id": 2, "params": {"arguments": {"a": 1}}}') is None
    assert arguments_to_check(b"not json") is None
    sent = '{"a": [{"b": 1, "b": 2}]}'
    assert arguments_to_check(tool_call(1, "t", sent)) == sent


# A number the SDK's parser takes and ours refuses, outside the arguments, skipped the check.
HIDDEN = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"lookup",'
    b'"arguments":{"city":"Oslo","city":"Paris"}},"x":%s}'
)


@pytest.mark.parametrize("number", [b"1e999", b"NaN", b"-Infinity", b"1" * 30])
def test_a_number_outside_the_arguments_does_not_hide_a_repeated_key(number: bytes) -> None:
    assert arguments_to_check(HIDDEN % (1, number)) == '{"city":"Oslo","city":"Paris"}'


def test_arguments_the_sdk_reads_as_numbers_json_lacks_are_taken_as_text() -> None:
    sent = '{"city": NaN}'
    assert arguments_to_check(tool_call(1, "t", sent)) == sent
    assert (
        arguments_to_check(HIDDEN.replace(b'"city":"Paris"', b'"town":"Paris"') % (1, b"NaN"))
        is None
    )


def test_arguments_nested_past_what_orjson_writes_are_taken_as_text() -> None:
    sent = '{"n": ' + "[" * 300 + "]" * 300 + "}"  # read by orjson, too deep for it to write
    assert arguments_to_check(tool_call(1, "t", sent)) == sent
    deeper = '{"n": ' + '{"a":' * 3000 + "0" + "}" * 3000 + "}"  # deeper than the C scanner
    assert arguments_to_check(tool_call(1, "t", deeper)) is None  # the SDK refuses it too


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200).map(str.encode),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
            max_leaves=20,
        ).map(lambda value: json.dumps({"id": 1, "params": {"arguments": value}}).encode()),
    )
)
def test_no_line_makes_reading_the_arguments_raise(line: bytes) -> None:
    # One line that raised here stopped the stdio server: whatever a client sends, it is noted
    # or not, and the SDK answers it.
    arguments_to_check(line)
    SentLines(None)._note(line.decode("utf-8", "replace"))


@pytest.mark.anyio
async def test_a_stdio_call_gets_the_text_its_own_line_held() -> None:
    lines = SentLines(None)
    lines._note((HIDDEN % (5, b"NaN")).decode())
    lines._note(tool_call(6, "t", '{"n": NaN}').decode())
    lines._note(tool_call(7, "t", '{"a": 1, "a": 2}').decode())
    assert await lines.take(5, {"city": "Paris"}) == '{"city":"Oslo","city":"Paris"}'
    assert await lines.take(6, {"n": math.nan}) == '{"n": NaN}'
    assert await lines.take(7, {"a": 3}) is None  # a later call that reused the id
    assert await lines.take(5, {"city": "Paris"}) is None  # taken once


async def test_a_repeated_key_behind_a_non_finite_number_is_refused_over_http(
    write_repo: WriteRepo,
) -> None:
    spy = Spy()
    async with lookup_session(write_repo, spy) as session:
        with anyio.fail_after(30):
            refused = await session.post(HIDDEN % (3, b"1e999"))
    assert (refusal(refused)["code"], refusal(refused)["violations"][0]["pointer"]) == (
        "arguments_malformed",
        "/city",
    )
    assert spy.cities == []


@pytest.mark.slow
def test_finding_the_arguments_of_a_large_message_is_fast() -> None:
    # 7.7 MB, its repeated key at the end: the pure-Python scans took 16 s (on the event loop
    # over stdio, in a worker over HTTP).
    items = b",".join(b'{"k":%d}' % i for i in range(600_000))
    message = tool_call(1, "t", '{"xs": [' + items.decode() + '], "a": 1, "a": 2}')
    started = time.perf_counter()
    found = arguments_to_check(message)
    assert time.perf_counter() - started < 4.0
    assert found is not None
    assert found.endswith('"a": 1, "a": 2}')


@pytest.mark.slow
@pytest.mark.parametrize("proxied", [False, True], ids=["server", "proxy"])
async def test_a_line_no_parser_can_read_exactly_does_not_stop_the_stdio_server(
    proxied: bool,
) -> None:
    # A repeated key in the arguments and an integer of 5,000 digits elsewhere: reading the
    # line's id raised out of stdin's reader, and the server exited.
    line = tool_call(5, "get_weather", '{"city": "Oslo", "city": "Paris"}')
    line = line[:-1] + b', "x": ' + b"7" * 5000 + b"}"
    with anyio.fail_after(60):
        async with desk_over_stdio(proxied) as session:
            await session.send(line)
            await session.send(tool_call(6, "get_weather", '{"city": "Paris"}'))
            answer = await session.receive()
            while answer.get("id") != 6:
                answer = await session.receive()
    assert answer["result"]["structuredContent"]["city"] == "Paris"


@asynccontextmanager
async def desk_over_stdio(proxied: bool) -> AsyncIterator[StdioSession]:
    """A session with ``schemawire serve`` of the support desk over stdio (behind ``serve
    --upstream`` when ``proxied``); the server's stdin closes on the way out."""
    command = [SCHEMAWIRE, "serve", str(DESK)]
    if proxied:
        command = [SCHEMAWIRE, "serve", "--upstream", "--", *command]
    async with await anyio.open_process(command) as process:
        yield await StdioSession(process).open()
        assert process.stdin is not None
        await process.stdin.aclose()


def lowest_free_descriptor() -> int:
    probe = os.dup(0)
    os.close(probe)
    return probe


@pytest.mark.anyio
async def test_reading_stdin_for_the_server_leaves_no_descriptor_open() -> None:
    before = lowest_free_descriptor()
    async with stdin_lines() as lines:
        assert lowest_free_descriptor() != before  # stdin's private copy
    assert lowest_free_descriptor() == before
    assert lines.closed  # nothing reads it any more


def test_the_http_bounds_default_to_what_the_docs_say() -> None:
    options = HttpOptions()
    assert (options.header_timeout, options.body_timeout) == (10.0, 30.0)
    assert options.sessions == SessionBounds(idle=300.0, per_client=100, total=1000)
