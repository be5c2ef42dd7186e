"""The client against real servers: the npm reference servers, and one that misbehaves.

Every assertion about what was (or was not) sent reads the recorded wire: the hops of the trace.
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemawire.mcp import SERVER_PROBLEMS, McpClient, ServerError, StdioServer
from schemawire.mcp._problems import ServerProblem
from schemawire.trace import Trace, read_trace
from tests.mcp.helpers import scripted

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DATA = Path(__file__).parents[1] / "data" / "mcp-tools"


def sent(trace: Trace, method: str) -> list[dict[str, Any]]:
    """The messages of ``method`` the client sent, as they crossed the wire."""
    return [
        h.payload for h in trace.hops if h.direction == "send" and h.payload.get("method") == method
    ]


def calls_of(trace: Trace, tool: str) -> list[dict[str, Any]]:
    return [m for m in sent(trace, "tools/call") if m["params"]["name"] == tool]


def text_of(output: Any) -> str:
    return "".join(block.get("text", "") for block in output.content)


# --- the reference servers ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["everything", "filesystem", "memory"])
async def test_lists_the_same_tools_as_the_captured_listing(name: str, request: Any) -> None:
    server: StdioServer = request.getfixturevalue(name)
    captured = json.loads((DATA / f"{name}.json").read_text())
    async with McpClient(server) as client:
        tools = await client.list_tools()
        assert client.protocol_version == "2025-11-25"  # discovery refused, then the handshake
    assert [t.name for t in tools] == [t["name"] for t in captured["tools"]]
    assert all(t.spec is not None and not t.canonical for t in tools)


async def test_valid_calls_reach_everything_and_come_back_checked(everything: StdioServer) -> None:
    async with McpClient(everything) as client:
        echo = await client.call("echo", '{"message": "hi"}')
        total = await client.call("get-sum", {"a": 2, "b": 40})
        weather = await client.call("get-structured-content", {"location": "New York"})
    assert echo.accepted
    assert text_of(echo.output) == "Echo: hi"
    assert total.accepted
    assert "42" in text_of(total.output)
    assert weather.accepted
    assert weather.result is not None
    assert weather.result.conforms is True
    assert set(weather.output.structured) == {"temperature", "conditions", "humidity"}


async def test_arguments_go_as_an_object_never_a_string(everything: StdioServer) -> None:
    trace = Trace()
    async with McpClient(everything, trace=trace) as client:
        await client.call("get-sum", '"{\\"a\\": 1, \\"b\\": 2}"')  # double-encoded by a model
    (message,) = calls_of(trace, "get-sum")
    assert message["params"]["arguments"] == {"a": 1, "b": 2}


BAD_ARGUMENTS = [
    ("echo", '{"message": 5}', "arguments_invalid", "/message"),
    ("echo", "{}", "arguments_invalid", "/message"),
    ("get-sum", '{"a": 1, "b": "2"}', "arguments_invalid", "/b"),
    ("get-sum", '{"a": 1, "a": 2, "b": 3}', "arguments_malformed", "/a"),
    ("get-sum", '{"a": NaN, "b": 1}', "arguments_malformed", ""),
    ("echo", '{"message": "hi",}', "arguments_malformed", ""),
    ("echo", "[1, 2]", "arguments_invalid", ""),
]


async def test_bad_arguments_never_reach_the_server(everything: StdioServer) -> None:
    trace = Trace()
    async with McpClient(everything, trace=trace) as client:
        calls = [
            (await client.call(tool, text), code, pointer)
            for tool, text, code, pointer in BAD_ARGUMENTS
        ]
    assert sent(trace, "tools/call") == []
    for call, code, pointer in calls:
        assert not call.sent
        assert call.result is None
        rejection = call.output.content["error"]
        assert (rejection["code"], call.output.is_error) == (code, True), call.tool
        assert pointer in [v["pointer"] for v in rejection["violations"]], call.tool


async def test_unknown_tool_is_refused_naming_the_tools(everything: StdioServer) -> None:
    trace = Trace()
    async with McpClient(everything, trace=trace) as client:
        call = await client.call("no-such-tool", {})
    assert sent(trace, "tools/call") == []
    assert call.output.content["error"]["code"] == "tool_unknown"
    assert "its tools: echo" in call.output.content["error"]["violations"][0]["message"]


async def test_filesystem_round_trip_and_server_side_errors(
    filesystem: StdioServer, tmp_path: Path
) -> None:
    root = tmp_path / "files"
    async with McpClient(filesystem) as client:
        wrote = await client.call("write_file", {"path": str(root / "a.txt"), "content": "hello"})
        read = await client.call("read_text_file", {"path": str(root / "a.txt")})
        outside = await client.call("read_text_file", {"path": "/etc/hostname"})
    assert wrote.accepted
    assert (root / "a.txt").read_text() == "hello"
    assert read.accepted
    assert read.output.structured == {"content": "hello"}
    # The server refused: its error comes back as a result the model can read.
    assert outside.sent
    assert not outside.accepted
    error = outside.output.content["error"]
    assert error["code"] == "tool_failed"
    assert "outside allowed directories" in error["violations"][0]["message"]


async def test_memory_server_keeps_what_it_was_given(memory: StdioServer) -> None:
    entity = {"name": "Ana", "entityType": "person", "observations": ["likes tea"]}
    async with McpClient(memory) as client:
        created = await client.call("create_entities", {"entities": [entity]})
        graph = await client.call("read_graph", {})
    assert created.accepted
    assert graph.accepted
    assert graph.output.structured["entities"] == [entity]


# --- protocol: versions, pages, notifications, progress ---------------------------------------


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_agrees_on_the_version_the_server_speaks(version: str) -> None:
    async with McpClient(scripted("--version", version)) as client:
        assert client.protocol_version == version


async def test_reads_every_page_of_tools() -> None:
    trace = Trace()
    async with McpClient(scripted("--page-size", "3"), trace=trace) as client:
        tools = await client.list_tools()
    assert len(tools) == 11
    assert [m.get("params", {}).get("cursor") for m in sent(trace, "tools/list")] == [
        None,
        "3",
        "6",
        "9",
    ]


async def test_a_tool_whose_schema_is_not_a_schema_is_never_called() -> None:
    trace = Trace()
    async with McpClient(scripted(), trace=trace) as client:
        call = await client.call("broken", {"x": 1})
    line = call.output.content["error"]["violations"][0]["message"]
    assert line.startswith("the server's schema for broken cannot be used")
    assert "not valid JSON Schema 2020-12" in line
    assert calls_of(trace, "broken") == []


async def test_list_changed_refreshes_the_tools() -> None:
    changes: list[str] = []

    async def changed() -> None:
        changes.append("tools")

    async with McpClient(scripted(), on_tools_changed=changed) as client:
        before = {t.name for t in await client.list_tools()}
        await client.call("grow", {})
        after = {t.name for t in await client.list_tools()}
    assert changes == ["tools"]
    assert after - before == {"grown"}


async def test_progress_is_reported() -> None:
    seen: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))

    async with McpClient(scripted()) as client:
        call = await client.call("progress", {}, on_progress=progress)
    assert call.accepted
    assert seen == [(1, 3), (2, 3), (3, 3)]


# --- results -----------------------------------------------------------------------------------


async def test_results_are_checked_redacted_and_failures_one_line() -> None:
    trace = Trace()
    async with McpClient(scripted(), trace=trace) as client:
        added = await client.call("add", {"a": 2, "b": 3})
        wrong = await client.call("wrong_total", {})
        leak = await client.call("leak", {})
        stack = await client.call("stack", {})
    assert added.accepted
    assert added.output.structured == {"total": 5}
    error = wrong.output.content["error"]
    assert (error["code"], error["violations"][0]["pointer"]) == ("result_invalid", "/total")
    assert leak.accepted
    assert leak.result is not None
    assert leak.result.redacted
    assert "sk-proj-" not in json.dumps(leak.output.content)
    assert stack.output.content["error"]["violations"][0]["message"] == "KeyError: x"
    # The trace never holds the secret either, even on the raw wire hop.
    assert "sk-proj-" not in json.dumps([h.to_json() for h in trace.hops])


# --- faults ------------------------------------------------------------------------------------


async def test_a_hanging_tool_times_out_and_is_cancelled() -> None:
    trace = Trace()
    async with McpClient(scripted(), trace=trace) as client:
        call = await client.call("hang", {}, timeout=0.5)
        after = await client.call("echo", {"message": "still here"})
    assert call.sent
    assert not call.accepted
    assert "did not answer within 0.5 s" in call.output.content["error"]["violations"][0]["message"]
    (cancel,) = sent(trace, "notifications/cancelled")
    assert cancel["params"]["requestId"] == calls_of(trace, "hang")[0]["id"]
    assert after.accepted


async def test_cancelling_the_caller_cancels_the_call() -> None:
    trace = Trace()
    async with McpClient(scripted(), trace=trace) as client:
        with anyio.move_on_after(0.3) as scope:
            await client.call("hang", {})
        after = await client.call("echo", {"message": "still here"})
    assert scope.cancelled_caught
    (cancel,) = sent(trace, "notifications/cancelled")
    assert cancel["params"]["requestId"] == calls_of(trace, "hang")[0]["id"]
    assert after.accepted


async def test_a_crash_mid_call_is_a_result_and_the_client_reconnects() -> None:
    async with McpClient(scripted()) as client:
        crashed = await client.call("crash", {})
        assert not client.connected
        meanwhile = await client.call("echo", {"message": "x"})
        await client.reconnect()
        again = await client.call("echo", {"message": "back"})
    line = crashed.output.content["error"]["violations"][0]["message"]
    assert "closed the connection" in line
    assert "crashing on purpose" in line
    assert not meanwhile.accepted
    assert not meanwhile.sent
    assert again.accepted
    assert text_of(again.output) == "back"


async def test_garbage_on_stdout_is_named() -> None:
    async with McpClient(scripted()) as client:
        call = await client.call("garbage", {})
    line = call.output.content["error"]["violations"][0]["message"]
    assert 'not JSON-RPC: "this is not json-rpc"' in line


async def test_a_server_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match="No such file") as raised:
        async with McpClient(StdioServer(str(tmp_path / "missing"))):
            pass
    assert raised.value.code == "not_started"


async def test_a_server_that_exits_at_once_is_a_clear_error() -> None:
    server = StdioServer(sys.executable, ("-c", "import sys; sys.stderr.write('bad config\\n')"))
    with pytest.raises(ServerError) as raised:
        async with McpClient(server, timeout=5):
            pass
    assert "bad config" in str(raised.value)
    assert raised.value.code == "exited"


async def test_a_server_error_quotes_no_secret_of_its_command_line_or_last_words() -> None:
    # The error reaches a model (a call that cannot be made), a proxy's client and the trace.
    key, password = "sk-proj-" + "FAKE0123456789ab" * 2, "Hunter2Secret"
    said = f"fatal: cannot reach postgres://app:{password}@db:5432/orders"
    code = f"import sys; sys.stderr.write({said!r}); sys.exit(3)"
    server = StdioServer(sys.executable, ("-c", code, f"OPENAI_API_KEY={key}"))
    with pytest.raises(ServerError) as raised, anyio.fail_after(30):
        async with McpClient(server, timeout=10):
            pass
    error = raised.value
    assert error.code == "exited"
    assert "postgres://app:[REDACTED:url_password]@db" in error.reason
    for text in (str(error), error.reason, error.server, error.stderr):
        assert key not in text
        assert password not in text


def test_every_server_problem_has_a_meaning() -> None:
    assert set(SERVER_PROBLEMS) == set(typing.get_args(ServerProblem))


CRASH_AT_START = """import sys
sys.stderr.write('Traceback (most recent call last):\\n  File "app.py", line 1\\n')
sys.stderr.write('KeyError: DATABASE_URL\\n')
sys.exit(3)
"""


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_server_that_exits_during_start_up_is_named_by_its_last_line(mode: Any) -> None:
    server = StdioServer(sys.executable, ("-c", CRASH_AT_START), name="app")
    with pytest.raises(ServerError) as raised, anyio.fail_after(30):
        async with McpClient(server, mode=mode, timeout=10):
            pass
    error = raised.value
    assert error.code == "exited"
    assert error.reason.endswith("it said: KeyError: DATABASE_URL")
    assert "Group" not in str(error)
    assert "Traceback" not in str(error)


async def test_the_trace_file_holds_every_hop(everything: StdioServer, tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with Trace(path=path) as trace:
        async with McpClient(everything, trace=trace) as client:
            await client.call("echo", {"message": "hi"})
    hops = list(read_trace(path))
    assert [h.seq for h in hops] == list(range(1, len(hops) + 1))
    assert [h.payload for h in hops] == [h.payload for h in trace.hops]
    methods = [h.payload.get("method") for h in hops if h.direction == "send"]
    assert methods[-2:] == ["tools/list", "tools/call"]


async def test_a_call_refused_without_a_repository_names_a_schemawire_servers_schema() -> None:
    desk = Path(__file__).parents[2] / "examples" / "support-desk"
    server = StdioServer(sys.executable, ("-m", "schemawire", "serve", str(desk)))
    async with McpClient(server) as client:  # no repository: the server's listing is all it has
        refused = await client.call("create_refund", {"order_id": "A-1042", "amount": -5})
    assert not refused.sent
    rejection = refused.argument_verdict.rejection
    assert rejection is not None
    assert (rejection.schema_id, rejection.version) == (
        "https://example.com/schemas/tools/create_refund.json",
        "1.0.0",
    )
