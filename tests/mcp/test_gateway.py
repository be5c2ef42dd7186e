"""The gateway: three real npm reference servers (server-everything, server-filesystem,
server-memory) served as one, with the official SDK's client (and the MCP Inspector CLI, in
`test_independent_clients.py`'s way) as the gateway's client.

What runs here is real: every upstream is a process, every gateway either the SDK server in
memory (`gated_server`) or a `schemawire serve` process. That a killed upstream is gone is read
from a pidfd, never from a sleep.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from schemawire.mcp import Upstream
from schemawire.mcp.launch import ServeOptions, gated_server
from schemawire.schema.repository import Repository
from schemawire.schema.validator import compile_schema
from schemawire.trace import Trace
from tests.mcp.helpers import peer, raw_call, scripted, sdk_client

SLOW = pytest.mark.slow
SHORTLIST = compile_schema(
    json.loads(resources.files("schemawire.gates").joinpath("shortlist.schema.json").read_text()),
    source="shortlist.schema.json",
)
GONE_WITHIN = 20  # seconds
ECHO = {"message": "through the gateway"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    """A repository with no schemas: each upstream's own schemas gate its tools."""
    root = tmp_path / "empty"
    root.mkdir()
    return root


@pytest.fixture
def files(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    root.mkdir()
    (root / "notes.txt").write_text("gateway notes\n", encoding="utf-8")
    return root


@pytest.fixture
def three(tmp_path: Path, files: Path) -> tuple[Upstream, ...]:
    memory_file = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    return (
        Upstream("everything", peer("everything", "stdio")),
        Upstream("fs", peer("filesystem", str(files))),
        Upstream("memory", peer("memory", env=memory_file)),
    )


@asynccontextmanager
async def gateway(
    root: Path, upstreams: tuple[Upstream, ...], trace: Trace | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The SDK's client of a gateway over ``upstreams`` (served in memory)."""
    serve = ServeOptions(upstreams=upstreams, timeout=20, **options)
    async with (
        gated_server(Repository.load(root), serve, trace or Trace()) as server,
        sdk_client(server) as client,
    ):
        yield client


async def names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


def text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def refusal(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True, result
    error: dict[str, Any] = json.loads(text(result))["error"]
    return error


# --- listing and calls ---------------------------------------------------------------------------


@SLOW
@pytest.mark.anyio
async def test_lists_the_tools_of_three_servers_each_under_its_upstreams_name(
    empty: Path, three: tuple[Upstream, ...]
) -> None:
    with anyio.fail_after(60):
        async with gateway(empty, three) as client:
            listed = await names(client)
    assert {"everything_echo", "everything_get-sum", "fs_read_text_file", "fs_list_directory"} <= {
        *listed
    }
    assert {"memory_create_entities", "memory_read_graph"} <= {*listed}
    assert {name.partition("_")[0] for name in listed} == {"everything", "fs", "memory"}
    assert all(len(name) <= 64 and name.isascii() for name in listed)
    assert len(listed) == len(set(listed))
    # The upstreams' order, each upstream's tools in its own order.
    prefixes = [name.partition("_")[0] for name in listed]
    assert prefixes == sorted(prefixes, key=["everything", "fs", "memory"].index)


@SLOW
@pytest.mark.anyio
async def test_a_good_call_reaches_its_upstream_and_a_bad_one_is_refused_before_it(
    empty: Path, three: tuple[Upstream, ...], files: Path
) -> None:
    trace = Trace()
    with anyio.fail_after(60):
        async with gateway(empty, three, trace) as client:
            echoed = await raw_call(client, "everything_echo", ECHO)
            read = await raw_call(client, "fs_read_text_file", {"path": str(files / "notes.txt")})
            made = await raw_call(
                client,
                "memory_create_entities",
                {"entities": [{"name": "gw", "entityType": "test", "observations": ["one"]}]},
            )
            refused = await raw_call(client, "everything_echo", {"message": 5})
    assert (echoed["isError"], text(echoed)) == (False, "Echo: through the gateway")
    assert (read["isError"], text(read)) == (False, "gateway notes\n")
    assert made["isError"] is False
    assert "gw" in text(made)
    error = refusal(refused)
    assert error["code"] == "arguments_invalid"
    assert error["tool"] == "everything_echo"  # the name the client knows
    assert "everything_echo" in error["hint"]
    assert [v["pointer"] for v in error["violations"]] == ["/message"]
    sent = [
        hop.payload["params"]["arguments"]
        for hop in trace.hops
        if hop.source == "host" and hop.payload.get("method") == "tools/call"
    ]
    assert {"message": 5} not in sent  # the upstream never saw the refused call
    assert ECHO in sent


@SLOW
@pytest.mark.anyio
async def test_a_name_no_upstream_has_is_the_spec_s_unknown_tool_error(
    empty: Path, three: tuple[Upstream, ...]
) -> None:
    with anyio.fail_after(60):
        async with gateway(empty, three) as client:
            with pytest.raises(MCPError) as raised:
                await raw_call(client, "echo", ECHO)  # not namespaced: no such tool
    error: Any = raised.value.error
    assert (error.code, error.data) == (mcp_types.INVALID_PARAMS, {"code": "tool_unknown"})


# --- restarts ------------------------------------------------------------------------------------


def children_running(binary: str) -> list[int]:
    """The pids of this process's children whose command line names ``binary``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            stat = (entry / "stat").read_text()
            parent = int(stat.rpartition(")")[2].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if parent == os.getpid() and binary in command:
                found.append(int(entry.name))
    return found


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


@SLOW
@pytest.mark.anyio
async def test_a_killed_upstream_is_restarted_on_its_own_while_the_others_keep_serving(
    empty: Path, three: tuple[Upstream, ...]
) -> None:
    graph = {"entities": [{"name": "before", "entityType": "test", "observations": []}]}
    with anyio.fail_after(90):
        async with gateway(empty, three) as client:
            before = await names(client)
            assert (await raw_call(client, "memory_create_entities", graph))["isError"] is False
            (pid,) = children_running("mcp-server-memory")
            os.kill(pid, signal.SIGKILL)
            await gone(pid)

            # The others serve on, and the listing still has every upstream's tools.
            assert text(await raw_call(client, "everything_echo", ECHO)).startswith("Echo:")
            assert await names(client) == before

            # The memory server is started again for its next call: a new process.
            read = await raw_call(client, "memory_read_graph", {})
            # The call that finds it gone says so (it may have run: it is not sent again);
            # the next call starts it again.
            found_gone = refusal(read)
            assert (found_gone["code"], found_gone["tool"]) == ("tool_failed", "memory_read_graph")
            assert "closed the connection" in found_gone["violations"][0]["message"]
            read = await raw_call(client, "memory_read_graph", {})
            assert read["isError"] is False, read
            assert "before" in text(read)  # the same graph, from its file
            assert children_running("mcp-server-memory") not in ([], [pid])
            assert text(await raw_call(client, "everything_echo", ECHO)).startswith("Echo:")


# --- list_changed --------------------------------------------------------------------------------


class Changes:
    """The list_changed notifications a client was sent."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.arrived = anyio.Event()


@asynccontextmanager
async def listening_gateway(
    root: Path, upstreams: tuple[Upstream, ...], changes: Changes, **options: Any
) -> AsyncIterator[Client]:
    """As `gateway`, its client noting each ``notifications/tools/list_changed`` it is sent."""

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changes.seen.append(message.method)
            changes.arrived.set()

    serve = ServeOptions(upstreams=upstreams, timeout=20, **options)
    async with (
        gated_server(Repository.load(root), serve, Trace()) as server,
        Client(server, mode="legacy", cache=None, message_handler=on_message) as client,
    ):
        yield client


@SLOW
@pytest.mark.anyio
async def test_an_upstreams_list_changed_reaches_the_gateways_clients(
    empty: Path, three: tuple[Upstream, ...]
) -> None:
    changes = Changes()
    upstreams = (*three, Upstream("scripted", scripted()))
    with anyio.fail_after(60):
        async with listening_gateway(empty, upstreams, changes) as client:
            before = await names(client)
            await raw_call(client, "scripted_grow", {})
            await changes.arrived.wait()
            after = await names(client)
    assert changes.seen == ["notifications/tools/list_changed"]
    assert "scripted_grown" not in before
    assert [name for name in after if name not in before] == ["scripted_grown"]


# --- --shortlist ---------------------------------------------------------------------------------


@SLOW
@pytest.mark.anyio
async def test_with_a_shortlist_two_tools_are_listed_and_a_search_finds_the_rest(
    empty: Path, three: tuple[Upstream, ...], files: Path
) -> None:
    trace = Trace()
    with anyio.fail_after(60):
        async with gateway(empty, three, trace, shortlist=3) as client:
            listed = (await client.list_tools()).tools
            found = await raw_call(client, "search_tools", {"query": "read a text file"})
            read = await raw_call(
                client,
                "call_tool",
                {"name": "fs_read_text_file", "arguments": {"path": str(files / "notes.txt")}},
            )
    assert [tool.name for tool in listed] == ["search_tools", "call_tool"]
    assert all("fs_" not in (tool.description or "") for tool in listed)  # no catalogue in it
    answer = found["structuredContent"]
    assert json.loads(text(found)) == answer
    shortlist = answer["shortlist"]
    assert not SHORTLIST.violations(shortlist)
    assert shortlist["k"] == 3
    assert shortlist["catalogue"]["sources"] == {"everything": 13, "fs": 14, "memory": 9}
    chosen = [tool["name"] for tool in shortlist["tools"]]
    assert chosen[0] == "fs_read_text_file"
    assert len(chosen) == 3
    # Each found tool's definition, as tools/list gives it, in the shortlist's order.
    assert [tool["name"] for tool in answer["tools"]] == chosen
    assert answer["tools"][0]["inputSchema"]["properties"]["path"]["type"] == "string"
    assert (read["isError"], text(read)) == (False, "gateway notes\n")
    # The search is a hop of the trace.
    (hop,) = [hop for hop in trace.hops if hop.protocol == "shortlist"]
    assert hop.payload == shortlist


@SLOW
@pytest.mark.anyio
async def test_call_tool_gates_the_inner_call_with_the_tools_full_schema(
    empty: Path, three: tuple[Upstream, ...]
) -> None:
    trace = Trace()
    with anyio.fail_after(60):
        async with gateway(empty, three, trace, shortlist=5) as client:
            bad = await raw_call(
                client, "call_tool", {"name": "everything_echo", "arguments": {"message": 5}}
            )
            unknown = await raw_call(client, "call_tool", {"name": "teleport", "arguments": {}})
            nested = await raw_call(client, "call_tool", {"name": "search_tools"})
            no_query = await raw_call(client, "search_tools", {"top": 3})
            # A tool never shown to this client is still called, through its own gates.
            direct = await raw_call(client, "everything_echo", ECHO)
    error = refusal(bad)
    assert (error["code"], error["tool"]) == ("arguments_invalid", "everything_echo")
    assert [v["pointer"] for v in error["violations"]] == ["/message"]
    assert refusal(unknown)["code"] == "tool_unknown"
    assert refusal(nested)["code"] == "tool_unknown"
    assert refusal(no_query)["code"] == "arguments_invalid"
    assert text(direct) == "Echo: through the gateway"
    sent = [
        hop.payload["params"]["name"]
        for hop in trace.hops
        if hop.source == "host" and hop.payload.get("method") == "tools/call"
    ]
    assert sent == ["echo"]  # only the good direct call went upstream


@SLOW
@pytest.mark.anyio
async def test_the_search_index_follows_an_upstreams_list_changed(
    empty: Path, three: tuple[Upstream, ...]
) -> None:
    changes = Changes()
    upstreams = (*three, Upstream("scripted", scripted()))
    with anyio.fail_after(60):
        async with listening_gateway(empty, upstreams, changes, shortlist=5) as client:
            assert await names(client) == ["search_tools", "call_tool"]  # as a client starts
            before = await raw_call(client, "search_tools", {"query": "appears after grow"})
            await raw_call(client, "call_tool", {"name": "scripted_grow", "arguments": {}})
            await changes.arrived.wait()
            after = await raw_call(client, "search_tools", {"query": "appears after grow"})
    names_before = [tool["name"] for tool in before["structuredContent"]["shortlist"]["tools"]]
    names_after = [tool["name"] for tool in after["structuredContent"]["shortlist"]["tools"]]
    assert "scripted_grown" not in names_before
    assert names_after[0] == "scripted_grown"
    size = after["structuredContent"]["shortlist"]["catalogue"]["size"]
    assert size == before["structuredContent"]["shortlist"]["catalogue"]["size"] + 1
