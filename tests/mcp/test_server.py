"""Our server and our proxy, seen from a client: every call gated both ways, HTTP locked down.

What the server does with a call is tested in memory: the SDK's own client reaches the server
inside the test's event loop (so a spy can see what ran), over in-memory JSON-RPC streams or, in
a 2026-07-28 mode, handing it each request directly. The real paths run too:
`schemawire serve` as a process over stdio, the server over Streamable HTTP on 127.0.0.1, and
the proxy in front of a scripted stdio upstream (those are marked slow).
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import StdioServerParameters
from mcp.server.lowlevel import Server

from schemawire.errors import ConfigError, ErrorCode, UsageError
from schemawire.mcp import HttpServer, McpClient, ServerError, StdioServer
from schemawire.mcp._http import HttpOptions
from schemawire.mcp.launch import ServeOptions, gated_server
from schemawire.mcp.server import LocalTools, Sessions, build_server
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from tests.helpers import EXAMPLES, WriteRepo, tool_schema
from tests.mcp.helpers import raw_call, scripted, sdk_client, serving

pytestmark = pytest.mark.anyio

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DESK = EXAMPLES / "support-desk"


def error_of(result: dict[str, Any]) -> dict[str, Any]:
    """The gate's error object inside an MCP error result."""
    assert result["isError"] is True
    return json.loads(result["content"][0]["text"])["error"]


# --- `schemawire serve` over stdio --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_serve_speaks_both_eras(mode: Any, version: str) -> None:
    server = StdioServerParameters(command=SCHEMAWIRE, args=["serve", str(DESK)])
    async with sdk_client(server, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        done = await raw_call(client, "get_weather", {"city": "Paris"})
        refused = await raw_call(
            client, "create_refund", {"order_id": "A-1042", "amount": -5, "reason": "late"}
        )
        assert client.protocol_version == version
    assert tools["create_refund"].input_schema["properties"]["amount"]["exclusiveMinimum"] == 0
    assert done["structuredContent"] == {"city": "Paris", "temp_c": 11.5, "condition": "cloudy"}
    error = error_of(refused)
    assert error["code"] == "arguments_invalid"
    assert [v["pointer"] for v in error["violations"]] == ["/amount"]


# --- the server in memory, and over HTTP in process ---------------------------------------------


class Spy:
    """Implementations that record every call that reached them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def lookup(self, city: str) -> dict[str, Any]:
        self.calls.append(("lookup", {"city": city}))
        if city == "boom":
            raise RuntimeError("database password=hunter2 at /srv/db.py line 3")
        if city == "leak":
            return {"city": city, "note": "key sk-ant-api03-" + "A" * 40}
        return {"city": city, "population": "many" if city == "wrong" else 3}


def spy_repository(write_repo: WriteRepo) -> Repository:
    output = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/schemas/tools/lookup.output.json",
        "x-version": "1.0.0",
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "population": {"type": "integer"},
            "note": {"type": "string"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    root = write_repo(
        {
            "schemas/tools/lookup.json": tool_schema("lookup"),
            "schemas/tools/lookup.output.json": output,
        }
    )
    return Repository.load(root)


def spy_server(repository: Repository, spy: Spy, trace: Trace) -> Server[Any]:
    tools = LocalTools(repository, {"lookup": spy.lookup})
    return build_server(tools, name="spy", version="1.0.0", trace=trace)


@asynccontextmanager
async def http_server(
    repository: Repository, spy: Spy, options: HttpOptions, trace: Trace
) -> AsyncIterator[str]:
    async with serving(spy_server(repository, spy, trace), options) as url:
        yield url


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_call_is_gated_both_ways(write_repo: WriteRepo, mode: str) -> None:
    spy, trace = Spy(), Trace()
    server = spy_server(spy_repository(write_repo), spy, trace)
    async with sdk_client(server, mode=mode) as client:
        bad = await raw_call(client, "lookup", {"city": 5, "extra": True})
        good = await raw_call(client, "lookup", {"city": "Oslo"})
        wrong = await raw_call(client, "lookup", {"city": "wrong"})
        boom = await raw_call(client, "lookup", {"city": "boom"})
        leak = await raw_call(client, "lookup", {"city": "leak"})
    assert [city for _, call in spy.calls for city in call.values()] == [
        "Oslo",
        "wrong",
        "boom",
        "leak",
    ]  # the bad call never ran
    pointers = {v["pointer"] for v in error_of(bad)["violations"]}
    assert pointers == {"/city", "/extra"}
    assert good["structuredContent"] == {"city": "Oslo", "population": 3}
    assert error_of(wrong)["code"] == "result_invalid"
    boom_error = error_of(boom)
    assert boom_error["code"] == "tool_failed"
    line = boom_error["violations"][0]["message"]  # one line: no stack trace, no password
    assert line.startswith("RuntimeError: database password=[REDACTED:")
    assert "hunter2" not in json.dumps(boom)
    assert "Traceback" not in json.dumps(boom)
    assert "sk-ant-" not in json.dumps(leak)
    assert leak["structuredContent"]["note"].startswith("key [REDACTED:")
    verdicts = [h.verdict["outcome"] for h in trace.hops if h.protocol == "gate"]
    assert verdicts == [
        "rejected",
        "accepted",
        "accepted",
        "accepted",
        "rejected",
        "accepted",
        "rejected",
        "accepted",
        "redacted",
    ]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_server_without_a_trace_answers_alike_and_numbers_the_same_hops(
    write_repo: WriteRepo, mode: str
) -> None:
    repository = spy_repository(write_repo)
    kept, quiet = Trace(), Trace(keep=False)  # quiet: no file, no listener, keeps nothing
    answers = []
    for trace in (kept, quiet):
        async with sdk_client(spy_server(repository, Spy(), trace), mode=mode) as client:
            calls = ({"city": 5}, {"city": "Oslo"}, {"city": "boom"}, {"city": "leak"})
            answers.append([await raw_call(client, "lookup", arguments) for arguments in calls])
    assert answers[0] == answers[1]
    numbered: list[Any] = []
    quiet.listen(numbered.append)  # from now on it keeps: the next hop shows the count
    quiet.record("test", "test", "test", "check", {})
    # Spans are not numbered when nothing keeps them; every message and verdict is.
    assert numbered[0].seq == 1 + sum(1 for hop in kept.hops if hop.protocol != "span")


async def test_http_refuses_foreign_hosts_and_origins(write_repo: WriteRepo) -> None:
    options = HttpOptions(port=0, allowed_origins=("https://app.example.com",))
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with (
        http_server(spy_repository(write_repo), Spy(), options, Trace()) as url,
        httpx2.AsyncClient(timeout=10) as http,
    ):

        async def status(**extra: str) -> int:
            response = await http.post(url, json=ping, headers={**headers, **extra})
            return response.status_code

        assert await status(Host="evil.example.com") == 421
        assert await status(Origin="http://evil.example.com") == 403
        assert await status(Origin="https://app.example.com") != 403
        assert await status(Origin="http://localhost:5173") != 403


async def test_http_bearer_token(write_repo: WriteRepo) -> None:
    options = HttpOptions(port=0, token="s3cret")
    async with http_server(spy_repository(write_repo), Spy(), options, Trace()) as url:
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert response.status_code == 401
            assert response.headers["www-authenticate"] == "Bearer"
        async with McpClient(HttpServer(url, token="s3cret")) as client:
            assert [t.name for t in await client.list_tools()] == ["lookup"]


async def test_http_errors_at_the_handshake_say_what_happened(write_repo: WriteRepo) -> None:
    options = HttpOptions(port=0, token="s3cret")
    async with http_server(spy_repository(write_repo), Spy(), options, Trace()) as url:
        problems = {}
        for name, server in {
            "no token": HttpServer(url),
            "wrong token": HttpServer(url, token="guess"),
            "wrong path": HttpServer(url.replace("/mcp", "/api"), token="s3cret"),
        }.items():
            with pytest.raises(ServerError) as raised, anyio.fail_after(30):
                async with McpClient(server, timeout=10):
                    pass
            problems[name] = (raised.value.code, raised.value.reason)
    with pytest.raises(ServerError) as refused, anyio.fail_after(30):
        async with McpClient(HttpServer(url), timeout=10):  # the server has stopped
            pass
    assert {name: code for name, (code, _) in problems.items()} == {
        "no token": "unauthorized",
        "wrong token": "unauthorized",
        "wrong path": "not_found",
    }
    assert problems["no token"][1].startswith("HTTP 401 Unauthorized")
    assert refused.value.code == "unreachable"
    assert "Group" not in refused.value.reason


async def test_only_loopback_unless_asked() -> None:
    with pytest.raises(UsageError, match="--allow-remote"):
        HttpOptions(host="0.0.0.0").check()
    HttpOptions(host="::1").check()
    HttpOptions(host="0.0.0.0", allow_remote=True).check()


# --- the gating proxy ---------------------------------------------------------------------------


@asynccontextmanager
async def proxy(
    upstream: StdioServer, trace: Trace, root: Path, timeout: float = 5
) -> AsyncIterator[Server[Any]]:
    """The gating proxy in front of ``upstream`` (a process: these tests are slow)."""
    options = ServeOptions(upstream=upstream, timeout=timeout)
    async with gated_server(Repository.load(root), options, trace) as server:
        yield server


def upstream_calls(trace: Trace) -> list[str]:
    """The tools the proxy called upstream, read off the upstream wire."""
    return [
        h.payload["params"]["name"]
        for h in trace.hops
        if h.source == "host" and h.payload.get("method") == "tools/call"
    ]


@pytest.mark.slow
async def test_proxy_gates_what_the_upstream_would_not(tmp_path: Path) -> None:
    trace = Trace()
    async with proxy(scripted(), trace, tmp_path) as server, sdk_client(server) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        bad = await raw_call(client, "add", {"a": 1, "b": "2"})
        good = await raw_call(client, "add", {"a": 1, "b": 2})
        invalid = await raw_call(client, "wrong_total", {})
        leak = await raw_call(client, "leak", {})
    assert "add" in listed
    assert error_of(bad)["violations"][0]["pointer"] == "/b"
    assert good["structuredContent"] == {"total": 3}
    assert error_of(invalid)["code"] == "result_invalid"
    assert "sk-proj-" not in json.dumps(leak)
    assert upstream_calls(trace) == ["add", "wrong_total", "leak"]  # never the bad add


@pytest.mark.slow
async def test_proxy_passes_on_that_the_upstream_tools_changed(tmp_path: Path) -> None:
    changed = anyio.Event()

    async def on_change() -> None:
        changed.set()

    async with (
        proxy(scripted(), Trace(), tmp_path) as server,
        serving(server) as url,
        McpClient(HttpServer(url), mode="legacy", on_tools_changed=on_change) as client,
    ):
        before = {t.name for t in await client.list_tools()}
        await client.call("grow", {})
        with anyio.fail_after(10):
            await changed.wait()
        after = {t.name for t in await client.list_tools()}
    assert after - before == {"grown"}


@pytest.mark.slow
async def test_proxy_restarts_a_crashed_upstream(tmp_path: Path) -> None:
    trace = Trace()
    async with proxy(scripted(), trace, tmp_path) as server, sdk_client(server) as client:
        await client.list_tools()
        crashed = await raw_call(client, "crash", {})
        back = await raw_call(client, "echo", {"message": "again"})
    assert "crashing on purpose" in error_of(crashed)["violations"][0]["message"]
    assert back["content"][0]["text"] == "again"
    upstream = [h for h in trace.hops if h.source == "host"]  # the proxy's side of the upstream
    assert [h.payload.get("method") for h in upstream].count("initialize") == 2


@pytest.mark.slow
async def test_proxy_answers_for_a_hanging_or_garbled_upstream(tmp_path: Path) -> None:
    trace = Trace()
    async with (
        proxy(scripted(), trace, tmp_path, timeout=0.5) as server,
        sdk_client(server) as client,
    ):
        hung = await raw_call(client, "hang", {})
        garbled = await raw_call(client, "garbage", {})
        back = await raw_call(client, "echo", {"message": "fine"})
    assert "did not answer within 0.5 s" in error_of(hung)["violations"][0]["message"]
    assert 'not JSON-RPC: "this is not json-rpc"' in error_of(garbled)["violations"][0]["message"]
    assert back["content"][0]["text"] == "fine"
    assert any(h.payload.get("method") == "notifications/cancelled" for h in trace.hops)


@pytest.mark.slow
async def test_proxy_applies_the_repository_schema_over_the_upstream_one(
    write_repo: WriteRepo,
) -> None:
    # The upstream's echo takes any string; the repository's says at most 5 characters.
    canonical = tool_schema(
        "echo", properties={"message": {"type": "string", "maxLength": 5}}, required=["message"]
    )
    root = write_repo({"schemas/tools/echo.json": canonical})
    trace = Trace()
    async with proxy(scripted(), trace, root) as server, sdk_client(server) as client:
        (echo,) = [t for t in (await client.list_tools()).tools if t.name == "echo"]
        long = await raw_call(client, "echo", {"message": "far too long"})
        short = await raw_call(client, "echo", {"message": "hi"})
    assert echo.input_schema["properties"]["message"]["maxLength"] == 5
    assert error_of(long)["violations"][0]["keyword"] == "maxLength"
    assert short["content"][0]["text"] == "hi"
    assert upstream_calls(trace) == ["echo"]


# --- a served tool that overruns its time --------------------------------------------------------

SLOW_TOOLS = """
import anyio


async def lookup(city: str) -> dict:
    await anyio.Event().wait()  # never answers
    return {"city": city}
"""


def slow_config(timeout: str) -> str:
    return f'[serve]\n{timeout}\n[serve.tools]\nlookup = "slow_tools_i11:lookup"\n'


@pytest.mark.parametrize(
    ("setting", "options"),
    [("timeout = 0.2", ServeOptions()), ("", ServeOptions(timeout=0.2))],
    ids=["[serve] timeout", "--timeout"],
)
async def test_a_served_tool_that_overruns_its_timeout_is_a_tool_failure(
    write_repo: WriteRepo, setting: str, options: ServeOptions
) -> None:
    root = write_repo(
        {
            "schemas/tools/lookup.json": tool_schema("lookup"),
            "schemawire.toml": slow_config(setting),
            "slow_tools_i11.py": SLOW_TOOLS,
        }
    )
    with anyio.fail_after(30):
        async with (
            gated_server(Repository.load(root), options, Trace()) as server,
            sdk_client(server) as client,
        ):
            error = error_of(await raw_call(client, "lookup", {"city": "Oslo"}))
    assert error["code"] == "tool_failed"
    assert error["violations"][0]["message"] == (
        "TimeoutError: the tool did not finish within 0.2 s"
    )


@pytest.mark.parametrize("timeout", ["0", "-1", '"60"'])
def test_the_serve_timeout_must_be_a_positive_number(write_repo: WriteRepo, timeout: str) -> None:
    root = write_repo({"schemawire.toml": f"[serve]\ntimeout = {timeout}\n"})
    with pytest.raises(ConfigError) as raised:
        Repository.load(root)
    assert raised.value.code == ErrorCode.CONFIG_INVALID
    assert raised.value.pointer == "/serve/timeout"


def test_the_serve_timeout_defaults_to_a_minute(write_repo: WriteRepo) -> None:
    assert Repository.load(write_repo({})).config.serve.timeout == 60.0


def test_sessions_are_held_weakly_and_at_most_the_newest_limit() -> None:
    # The SDK says nothing when an HTTP session ends: a connection it let go of must not be kept
    # alive here (a server that sees a new client every second would grow for as long as it
    # runs), nor the per-request session a handler is given.
    class Connection:
        async def send_tool_list_changed(self) -> None:
            pass

    class Session:  # as the SDK's: one per request, naming its client's connection
        def __init__(self, connection: Connection) -> None:
            self._connection = connection

    sessions = Sessions()
    connections = [Connection() for _ in range(Sessions.LIMIT + 5)]
    for connection in connections:
        sessions.add(Session(connection))
        sessions.add(Session(connection))  # a second request of the same client
    assert len(sessions) == Sessions.LIMIT
    del connections[:500]
    gc.collect()
    assert len(sessions) == Sessions.LIMIT - 495
