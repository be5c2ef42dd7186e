"""The gateway: three real npm reference servers (server-everything, server-filesystem,
server-memory) served as one, with the official SDK's client (and the MCP Inspector CLI, in
`test_independent_clients.py`'s way) as the gateway's client.

What runs here is real: every upstream is a process, every gateway either the SDK server in
memory (`gated_server`) or a `schemawire serve` process. That a killed upstream is gone is read
from a pidfd, never from a sleep.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError
from typer.testing import CliRunner

from schemawire.cli._app import app
from schemawire.cli._mcp import split_upstreams
from schemawire.errors import ConfigError, UsageError
from schemawire.mcp import HttpServer, StdioServer, Upstream
from schemawire.mcp._namespaces import PORTABLE, namespaced
from schemawire.mcp.launch import ServeOptions, gated_server
from schemawire.project.checkers import anthropic, gemini, openai
from schemawire.project.checkers import mcp as mcp_rules
from schemawire.schema.config import load_config
from schemawire.schema.repository import Repository
from schemawire.schema.validator import compile_schema
from schemawire.trace import Trace
from tests.helpers import tool_schema
from tests.mcp.helpers import peer, raw_call, scripted, sdk_client, serving
from tests.mcp.test_independent_clients import (
    OK,
    announced_url,
    call_tool,
    list_tools,
    pump,
    rejection,
)

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
PEERS = Path(__file__).parents[1] / "peers" / "node_modules" / ".bin"
CATALOGUE = Path(__file__).parent / "servers" / "catalogue.py"
STALLING = Path(__file__).parent / "servers" / "stalling.py"
HANGING = Path(__file__).parent / "servers" / "hanging.py"
RUN_SECONDS = 60
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


def echo_schema(name: str, message: dict[str, Any]) -> str:
    schema = tool_schema(name, properties={"message": message}, required=["message"])
    return json.dumps(schema)


@SLOW
@pytest.mark.anyio
async def test_a_schema_named_by_the_gateway_name_gates_that_upstream_s_tool_only(
    tmp_path: Path,
) -> None:
    """``everything_echo.json`` is server-everything's echo's schema; ``echo.json`` stays the
    schema of every other upstream's echo."""
    root = tmp_path / "repo"
    (root / "schemas" / "tools").mkdir(parents=True)
    own = {"type": "string", "maxLength": 3, "description": "At most 3 characters."}
    bare = {"type": "string", "pattern": "^[a-z]+$", "description": "Lowercase letters."}
    (root / "schemas" / "tools" / "everything_echo.json").write_text(
        echo_schema("everything_echo", own)
    )
    (root / "schemas" / "tools" / "echo.json").write_text(echo_schema("echo", bare))
    pids = tmp_path / "pids"
    upstreams = (
        Upstream("everything", peer("everything", "stdio")),
        Upstream("other", StdioServer(sys.executable, (str(STALLING), "--pids", str(pids)))),
    )
    with anyio.fail_after(60):
        async with gateway(root, upstreams) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            everything_upper = await raw_call(client, "everything_echo", {"message": "ABC"})
            everything_long = await raw_call(client, "everything_echo", {"message": "abcd"})
            other_upper = await raw_call(client, "other_echo", {"message": "ABC"})
            other_long = await raw_call(client, "other_echo", {"message": "abcd"})
    message = listed["everything_echo"].input_schema["properties"]["message"]
    assert message["maxLength"] == 3
    assert listed["other_echo"].input_schema["properties"]["message"]["pattern"] == "^[a-z]+$"
    assert text(everything_upper) == "Echo: ABC"
    assert refusal(everything_long)["code"] == "arguments_invalid"
    assert refusal(other_upper)["code"] == "arguments_invalid"
    assert text(other_long) == "abcd"


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


@SLOW
@pytest.mark.anyio
async def test_an_http_upstream_named_on_the_command_line_is_served_beside_stdio_ones(
    tmp_path: Path, empty: Path
) -> None:
    # The HTTP upstream: our gating proxy in front of server-memory, on 127.0.0.1.
    memory = peer("memory", env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})
    behind = ServeOptions(upstream=memory, timeout=20)
    everything = [str(PEERS / "mcp-server-everything"), "stdio"]
    with anyio.fail_after(90):
        async with (
            gated_server(Repository.load(empty), behind, Trace()) as remote,
            serving(remote) as url,
        ):
            upstreams = (
                Upstream("local", peer("everything", "stdio")),
                Upstream("remote", HttpServer(url)),
            )
            async with gateway(empty, upstreams) as client:
                listed = await names(client)
                read = await raw_call(client, "remote_read_graph", {})
            serve = [SCHEMAWIRE, "serve", "--repo", str(empty), "--upstream-url", f"remote={url}"]
            serve += ["--upstream", "local", "--", *everything]
            done = await anyio.run_process(
                [SCHEMAWIRE, "tools", "--json", "--", *serve], check=False
            )
    assert {"local_echo", "remote_read_graph", "remote_create_entities"} <= {*listed}
    assert read["isError"] is False, read
    assert done.returncode == 0, done.stderr.decode()
    tools = [tool["name"] for tool in json.loads(done.stdout)["tools"]]
    # The command's upstreams in their order, then the URLs in theirs.
    assert tools.index("local_echo") < tools.index("remote_read_graph")


# --- restarts ------------------------------------------------------------------------------------


def children_running(binary: str, parent: int | None = None) -> list[int]:
    """The pids of the children of ``parent`` (default: this process) whose command line names
    ``binary``."""
    parent = os.getpid() if parent is None else parent
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            stat = (entry / "stat").read_text()
            ppid = int(stat.rpartition(")")[2].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if ppid == parent and binary in command:
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
    read_graph = "memory_read_graph"
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
            if read["isError"]:  # the call that found it gone: not sent again (it may have run)
                found_gone = refusal(read)
                assert (found_gone["code"], found_gone["tool"]) == ("tool_failed", read_graph)
                assert "closed the connection" in found_gone["violations"][0]["message"]
                read = await raw_call(client, "memory_read_graph", {})
            assert read["isError"] is False, read
            assert "before" in text(read)  # the same graph, from its file
            assert children_running("mcp-server-memory") not in ([], [pid])
            assert text(await raw_call(client, "everything_echo", ECHO)).startswith("Echo:")


@SLOW
@pytest.mark.anyio
async def test_an_upstream_that_cannot_start_again_keeps_its_tools_listed_and_refuses_calls(
    tmp_path: Path, empty: Path, three: tuple[Upstream, ...]
) -> None:
    pids = tmp_path / "pids"
    lost = StdioServer(
        sys.executable,
        (str(STALLING), "--pids", str(pids), "--restarts-fail", "fatal: the database is gone"),
    )
    with anyio.fail_after(90):
        async with gateway(empty, (*three, Upstream("db", lost))) as client:
            before = await names(client)
            await raw_call(client, "db_crash", {})
            after = await names(client)  # asks db to start again: it cannot
            echoed = await raw_call(client, "everything_echo", ECHO)
            refused = await raw_call(client, "db_echo", {"message": "anyone?"})
    assert "db_echo" in before
    assert after == before
    assert text(echoed) == "Echo: through the gateway"
    error = refusal(refused)
    assert (error["code"], error["tool"]) == ("tool_unavailable", "db_echo")
    assert "the database is gone" in error["violations"][0]["message"]
    assert len(pids.read_text().splitlines()) == 1  # the one that started; none since


def hanging(flag: Path) -> StdioServer:
    """`servers/hanging.py`: its tools/list hangs on request; started while ``flag`` exists,
    it never answers the handshake."""
    return StdioServer(sys.executable, (str(HANGING), "--hang-handshake-if", str(flag)))


async def timed(work: Any) -> tuple[Any, float]:
    """What awaiting ``work`` gave, and the seconds it took."""
    start = anyio.current_time()
    done = await work
    return done, anyio.current_time() - start


@SLOW
@pytest.mark.anyio
async def test_an_upstream_whose_listing_hangs_holds_no_one_s_listing_past_the_deadline(
    tmp_path: Path, empty: Path
) -> None:
    """tools/list waits for each upstream at most its deadline (2 s), then lists the hung one's
    last tools; a listing meanwhile does not wait again (the first listing's ask goes on)."""
    upstreams = (
        Upstream("everything", peer("everything", "stdio")),
        Upstream("hang", hanging(tmp_path / "f")),
    )
    changes = Changes()
    with anyio.fail_after(60):
        async with listening_gateway(empty, upstreams, changes) as client:  # timeouts: 20 s
            before = await names(client)
            await raw_call(client, "hang_hang_lists", {})  # says its list changed; lists no more
            # The gateway reads the change on a task of its own: until it has (and passed it
            # on), its next listing would still be the kept one.
            await changes.arrived.wait()
            first, first_took = await timed(names(client))
            again, again_took = await timed(names(client))
            echoed, echo_took = await timed(raw_call(client, "everything_echo", ECHO))
    assert {"everything_echo", "hang_echo", "hang_hang_lists"} <= set(before)
    assert first == again == before
    assert first_took < 2 + 1
    assert again_took < 1
    assert text(echoed) == "Echo: through the gateway"
    assert echo_took < 1


@SLOW
@pytest.mark.anyio
async def test_a_restart_that_hangs_in_its_handshake_is_waited_for_once_not_by_every_listing(
    tmp_path: Path, empty: Path
) -> None:
    flag = tmp_path / "restarts-hang"
    upstreams = (
        Upstream("everything", peer("everything", "stdio")),
        Upstream("hang", hanging(flag), timeout=4),
    )
    with anyio.fail_after(90):
        async with gateway(empty, upstreams) as client:
            before = await names(client)
            flag.touch()  # from now on, a new process never answers the handshake
            (pid,) = children_running(str(HANGING))
            os.kill(pid, signal.SIGKILL)
            await gone(pid)
            found_gone = await raw_call(client, "hang_echo", {"message": "anyone?"})
            listings = [await timed(names(client)) for _ in range(3)]  # the restart hangs 4 s
            echoed = await raw_call(client, "everything_echo", ECHO)
            refused = await raw_call(client, "hang_echo", {"message": "anyone?"})  # waits for it
            again, again_took = await timed(raw_call(client, "hang_echo", {"message": "now?"}))
    assert found_gone["isError"] is True
    assert all(listed == before for listed, _ in listings)
    assert listings[0][1] < 2 + 1
    assert all(took < 1 for _, took in listings[1:])
    assert text(echoed) == "Echo: through the gateway"
    assert refusal(refused)["code"] == "tool_unavailable"
    assert refusal(again)["code"] == "tool_unavailable"  # the last restart's error, at once
    assert again_took < 1


@SLOW
@pytest.mark.anyio
async def test_the_upstreams_are_started_all_at_once(empty: Path) -> None:
    slow = ("--handshake-delay", "1.5")
    upstreams = tuple(
        Upstream(name, StdioServer(sys.executable, (str(HANGING), *slow)))
        for name in ("a", "b", "c")
    )
    with anyio.fail_after(60):
        start = anyio.current_time()
        async with gateway(empty, upstreams) as client:
            took = anyio.current_time() - start
            listed = await names(client)
    assert {"a_echo", "b_echo", "c_echo"} <= set(listed)
    assert took < 1.5 * 2  # one after another: 4.5 s at least


# --- list_changed --------------------------------------------------------------------------------


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


@SLOW
@pytest.mark.anyio
@pytest.mark.parametrize("as_gateway", [True, False], ids=["gateway", "proxy"])
async def test_a_2026_07_28_client_listening_hears_an_upstreams_list_changed(
    empty: Path, as_gateway: bool
) -> None:
    """A client of the 2026-07-28 protocol is sent no list_changed notification: it opens a
    ``subscriptions/listen`` stream, and the change arrives there."""
    options = (
        ServeOptions(upstreams=(Upstream("scripted", scripted()),), timeout=20)
        if as_gateway
        else ServeOptions(upstream=scripted(), timeout=20)
    )
    grow = "scripted_grow" if as_gateway else "grow"
    with anyio.fail_after(60):
        async with (
            gated_server(Repository.load(empty), options, Trace()) as server,
            serving(server) as url,
            Client(url, cache=None) as client,
        ):
            assert client.session.protocol_version == "2026-07-28"
            tools = client.session.server_capabilities.tools
            assert tools is not None
            assert tools.list_changed is True
            async with client.listen(tools_list_changed=True) as subscription:
                await raw_call(client, grow, {})
                events = [event async for event in _first(subscription)]
            grown = await names(client)
    assert [type(event).__name__ for event in events] == ["ToolsListChanged"]
    assert ("scripted_grown" if as_gateway else "grown") in grown


async def _first(events: Any) -> AsyncIterator[Any]:
    async for event in events:
        yield event
        return


@SLOW
@pytest.mark.anyio
async def test_an_upstream_started_again_with_other_tools_is_announced(
    tmp_path: Path, empty: Path
) -> None:
    """No upstream says its list changed (its new process lists another tool from the start):
    the gateway does, once it lists the new process's tools."""
    upgraded = tmp_path / "upgraded"
    server = StdioServer(sys.executable, (str(HANGING), "--extra-tool-if", str(upgraded)))
    changes = Changes()
    with anyio.fail_after(60):
        async with listening_gateway(empty, (Upstream("hang", server),), changes) as client:
            before = await names(client)
            upgraded.touch()
            (pid,) = children_running(str(HANGING))
            os.kill(pid, signal.SIGKILL)
            await gone(pid)
            for _ in range(2):  # the call that finds it gone (if any), then one that restarts it
                echoed = await raw_call(client, "hang_echo", {"message": "again"})
                if not echoed["isError"]:
                    break
            await changes.arrived.wait()
            after = await names(client)
    assert text(echoed) == "again"
    assert changes.seen == ["notifications/tools/list_changed"]
    assert [name for name in after if name not in before] == ["hang_extra"]


@SLOW
@pytest.mark.anyio
async def test_call_tool_with_an_upstreams_own_tool_name_points_at_the_gateway_name(
    tmp_path: Path, empty: Path
) -> None:
    upstreams = (Upstream("hang", hanging(tmp_path / "f")),)
    with anyio.fail_after(60):
        async with gateway(empty, upstreams, shortlist=3) as client:
            bare = await raw_call(client, "call_tool", {"name": "echo", "arguments": {}})
            unknown = await raw_call(client, "call_tool", {"name": "nothing", "arguments": {}})
    error = refusal(bare)
    assert (error["code"], error["tool"]) == ("tool_unknown", "echo")
    assert "Call hang_echo" in error["hint"]
    assert "search_tools" in refusal(unknown)["hint"]


@SLOW
@pytest.mark.anyio
async def test_call_tool_of_a_tool_its_upstream_no_longer_has_is_tool_unknown(
    tmp_path: Path, empty: Path
) -> None:
    """The gateway still has echo from its last listing; the upstream says it is gone: the
    model reads tool_unknown, not a JSON-RPC error."""
    upstreams = (Upstream("hang", hanging(tmp_path / "f")),)
    with anyio.fail_after(60):
        async with gateway(empty, upstreams, shortlist=3) as client:
            await raw_call(client, "call_tool", {"name": "hang_forget_echo", "arguments": {}})
            gone_now = await raw_call(
                client, "call_tool", {"name": "hang_echo", "arguments": {"message": "x"}}
            )
    error = refusal(gone_now)
    assert (error["code"], error["tool"]) == ("tool_unknown", "hang_echo")


@SLOW
@pytest.mark.anyio
async def test_a_semantic_gateway_search_ranks_by_meaning_too(
    empty: Path, three: tuple[Upstream, ...]
) -> None:
    from schemawire.gates import semantic_embedder

    query = "jot down that Ada likes tea"  # no tool shares a word with it
    with anyio.fail_after(60):
        async with gateway(empty, three, shortlist=3) as client:
            plain = await raw_call(client, "search_tools", {"query": query})
        async with gateway(empty, three, shortlist=3, embedder=semantic_embedder()) as client:
            fused = await raw_call(client, "search_tools", {"query": query})
    assert "ranker" not in plain["structuredContent"]["shortlist"]
    shortlist = fused["structuredContent"]["shortlist"]
    assert not SHORTLIST.violations(shortlist)
    assert shortlist["ranker"] == "bm25+dense"
    assert len(shortlist["tools"]) == 3


@SLOW
@pytest.mark.anyio
async def test_shortlist_alone_keeps_the_tables_size(tmp_path: Path, empty: Path) -> None:
    (empty / "schemawire.toml").write_text(
        "[repository]\nallow-empty = true\n[gateway]\nshortlist = 1\n"
        f"[gateway.upstreams.hang]\ncommand = {json.dumps([sys.executable, str(HANGING)])}\n",
        encoding="utf-8",
    )
    serve = ServeOptions(shortlisted=True, timeout=20)
    with anyio.fail_after(60):
        async with (
            gated_server(Repository.load(empty), serve, Trace()) as server,
            sdk_client(server) as client,
        ):
            found = await raw_call(client, "search_tools", {"query": "echo lists tools"})
    assert found["structuredContent"]["shortlist"]["returned"] == 1


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
            # The SDK's client checks the answer against the listed output schema.
            checked = await client.call_tool("search_tools", {"query": "read a text file"})
            read = await raw_call(
                client,
                "call_tool",
                {"name": "fs_read_text_file", "arguments": {"path": str(files / "notes.txt")}},
            )
    assert [tool.name for tool in listed] == ["search_tools", "call_tool"]
    assert all("fs_" not in (tool.description or "") for tool in listed)  # no catalogue in it
    answer = found["structuredContent"]
    assert json.loads(text(found)) == answer
    assert checked.structured_content == answer
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
    hops = [hop.payload for hop in trace.hops if hop.protocol == "shortlist"]
    assert hops == [shortlist, shortlist]  # one per search, the same for the same catalogue


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


@SLOW
@pytest.mark.anyio
async def test_a_client_of_a_300_tool_gateway_sees_two_tools_and_finds_and_calls_one(
    empty: Path, three: tuple[Upstream, ...]
) -> None:
    big = Upstream("work", StdioServer(sys.executable, (str(CATALOGUE), "--tools", "300")))
    trace = Trace()
    with anyio.fail_after(60):
        async with gateway(empty, (*three, big), trace, shortlist=5) as client:
            listed = await names(client)
            found = await raw_call(client, "search_tools", {"query": "rename a playlist"})
            answer = found["structuredContent"]
            first = answer["tools"][0]
            called = await raw_call(
                client, "call_tool", {"name": first["name"], "arguments": {"playlist_id": "p1"}}
            )
            refused = await raw_call(
                client, "call_tool", {"name": first["name"], "arguments": {"playlist": "p1"}}
            )
    assert listed == ["search_tools", "call_tool"]
    assert answer["shortlist"]["catalogue"]["size"] == 336
    assert answer["shortlist"]["catalogue"]["sources"]["work"] == 300
    assert answer["shortlist"]["truncated"] is True
    assert first["name"].startswith("work_rename_playlist_")
    assert first["inputSchema"]["required"] == ["playlist_id"]
    assert json.loads(text(called)) == {
        "tool": first["name"].removeprefix("work_"),
        "arguments": {"playlist_id": "p1"},
    }
    assert refusal(refused)["code"] == "arguments_invalid"
    assert [hop.payload["query"] for hop in trace.hops if hop.protocol == "shortlist"] == [
        "rename a playlist"
    ]


# --- schemawire serve: the command line and the [gateway] table ---------------------------------


def three_upstreams(files: Path, memory_file: Path) -> list[str]:
    """``serve``'s arguments for the three reference servers, each ``--upstream NAME -- CMD``."""
    return [
        "--upstream",
        "everything",
        "--",
        str(PEERS / "mcp-server-everything"),
        "stdio",
        "--upstream",
        "fs",
        "--",
        str(PEERS / "mcp-server-filesystem"),
        str(files),
        "--upstream",
        "memory",
        "--",
        "env",
        f"MEMORY_FILE_PATH={memory_file}",
        str(PEERS / "mcp-server-memory"),
    ]


def schemawire(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCHEMAWIRE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
        cwd=cwd,
    )


@SLOW
def test_schemawire_tools_and_call_through_a_gateway_given_on_the_command_line(
    tmp_path: Path, empty: Path, files: Path
) -> None:
    serve = [SCHEMAWIRE, "serve", "--repo", str(empty), *three_upstreams(files, tmp_path / "m")]
    listed = schemawire("tools", "--json", "--", *serve)
    assert listed.returncode == 0, listed.stderr
    tools = [tool["name"] for tool in json.loads(listed.stdout)["tools"]]
    assert {"everything_echo", "fs_read_text_file", "memory_read_graph"} <= {*tools}
    assert json.loads(listed.stdout)["server"]["serverInfo"]["name"] == "empty (gateway)"

    good = schemawire("call", "everything_echo", json.dumps(ECHO), "--json", "--", *serve)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["output"]["content"][0]["text"] == "Echo: through the gateway"

    bad = schemawire("call", "everything_echo", '{"message": 5}', "--json", "--", *serve)
    assert bad.returncode == 1, bad.stderr  # refused by the gateway's gate: a refused call
    assert json.loads(bad.stdout)["output"]["content"]["error"]["code"] == "arguments_invalid"


@SLOW
def test_the_gateway_table_in_schemawire_toml_names_the_upstreams(
    tmp_path: Path, files: Path
) -> None:
    repository = tmp_path / "gateway-repo"
    repository.mkdir()
    (repository / "schemawire.toml").write_text(
        f"""
[repository]
allow-empty = true

[gateway]
shortlist = 4

[gateway.upstreams.everything]
command = [{json.dumps(str(PEERS / "mcp-server-everything"))}, "stdio"]

[gateway.upstreams.fs]
command = [{json.dumps(str(PEERS / "mcp-server-filesystem"))}, "."]
cwd = "data"

[gateway.upstreams.memory]
command = [{json.dumps(str(PEERS / "mcp-server-memory"))}]
env = {{ MEMORY_FILE_PATH = {json.dumps(str(tmp_path / "memory.jsonl"))} }}
timeout = 10
""",
        encoding="utf-8",
    )
    (repository / "data").mkdir()
    (repository / "data" / "notes.txt").write_text("from the table\n", encoding="utf-8")
    serve = [SCHEMAWIRE, "serve", str(repository)]
    listed = schemawire("tools", "--json", "--", *serve)
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == [
        "search_tools",
        "call_tool",
    ]
    found = schemawire(
        "call", "search_tools", '{"query": "list directory"}', "--json", "--", *serve
    )
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)["output"]["structuredContent"]
    assert answer["shortlist"]["k"] == 4
    assert "fs_list_directory" in [tool["name"] for tool in answer["shortlist"]["tools"]]
    read = schemawire(
        "call",
        "call_tool",
        json.dumps({"name": "fs_read_text_file", "arguments": {"path": "notes.txt"}}),
        "--json",
        "--",
        *serve,
    )
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["output"]["content"][0]["text"] == "from the table\n"


@SLOW
def test_the_inspector_lists_calls_and_sees_the_gate_through_the_gateway(
    tmp_path: Path, empty: Path, files: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    gateway_command: list[str | Path] = [
        SCHEMAWIRE,
        "serve",
        "--repo",
        empty,
        *three_upstreams(files, tmp_path / "m"),
    ]
    listed = list_tools(home, gateway_command)
    assert (listed.rc, listed.error) == (OK, None), listed
    assert {"everything_echo", "fs_read_text_file", "memory_create_entities"} <= {
        tool["name"] for tool in (listed.result or {})["tools"]
    }
    echoed = call_tool(home, gateway_command, "everything_echo", ECHO)
    assert (echoed.rc, echoed.error) == (OK, None), echoed
    assert echoed.text == "Echo: through the gateway"
    error = rejection(call_tool(home, gateway_command, "everything_echo", {"message": 5}))
    assert (error["code"], error["tool"]) == ("arguments_invalid", "everything_echo")


# --- names (no process) --------------------------------------------------------------------------

PROVIDER_NAMES = (openai.NAME, anthropic.NAME, gemini.NAME, mcp_rules.NAME)


def test_a_name_every_provider_takes_is_kept_as_upstream_underscore_tool() -> None:
    names = namespaced({"fs": ["read_file", "list-dir"], "mem": ["read_file"]})
    assert names == {
        "fs_read_file": ("fs", "read_file"),
        "fs_list-dir": ("fs", "list-dir"),
        "mem_read_file": ("mem", "read_file"),
    }


def test_characters_a_provider_refuses_become_underscores_and_the_name_takes_its_digest() -> None:
    assert namespaced({"web": ["search.query", "über"]}) == {
        f"web_search_query_{digest('web_search.query')}": ("web", "search.query"),
        f"web__ber_{digest('web_über')}": ("web", "über"),
    }


def digest(joined: str, digits: int = 8) -> str:
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:digits]


def test_a_fixed_name_depends_only_on_its_own_tool() -> None:
    """A list change never moves a name to another tool: ``db_a.b``'s name is the same with or
    without a later ``a_b_<digest>`` (which, before, took the short name from it)."""
    alone = namespaced({"db": ["a.b"]})
    taken = f"a_b_{digest('db_a.b')}"  # a tool named like a.b's fixed name
    later = namespaced({"db": ["a.b", "a b", "a_b", taken]})
    assert len(later) == 4
    assert sorted(later.values()) == sorted(("db", tool) for tool in ["a.b", "a b", "a_b", taken])
    assert later[f"db_{taken}"] == ("db", taken)  # a portable name is kept
    (fixed,) = alone
    assert fixed == f"db_a_b_{digest('db_a.b')}"
    assert later.get(fixed) != ("db", "a.b")  # the clash lengthened its digest, never reused it
    assert f"db_a_b_{digest('db_a.b', 16)}" in later
    assert namespaced({"db": ["a.b", "a b"]})[fixed] == ("db", "a.b")


def test_an_overlong_name_is_cut_and_given_its_digest() -> None:
    tool = "x" * 80
    ((name, route),) = namespaced({"svc": [tool]}).items()
    assert route == ("svc", tool)
    assert len(name) == 64
    assert name.startswith("svc_xxxx")
    assert name == PORTABLE.fix(f"svc_{tool}")  # 55 characters, "_", 8 hex digits


def test_names_that_come_out_the_same_all_take_their_digests() -> None:
    names = namespaced({"db": ["a.b", "a b", "a_b"]})
    assert names["db_a_b"] == ("db", "a_b")  # a portable name is never changed
    hashed = sorted(name for name in names if name != "db_a_b")
    assert len(hashed) == 2
    assert all(name.startswith("db_a_b_") and len(name) == len("db_a_b_") + 8 for name in hashed)
    assert {names[name] for name in hashed} == {("db", "a.b"), ("db", "a b")}


def test_the_gateways_own_tool_names_are_never_an_upstreams() -> None:
    names = namespaced({"search": ["tools"], "call": ["tool"]})
    assert "search_tools" not in names
    assert "call_tool" not in names
    assert sorted(names.values()) == [("call", "tool"), ("search", "tools")]


tool_names = st.text(min_size=1, max_size=90)


@given(st.dictionaries(st.sampled_from(["fs", "mem", "a-b", "x1"]), st.lists(tool_names)))
def test_every_gateway_name_suits_every_provider_whatever_the_order(
    catalogue: dict[str, list[str]],
) -> None:
    names = namespaced(catalogue)
    assert all(rule.fullmatch(name) for name in names for rule in PROVIDER_NAMES)
    assert sorted(names.values()) == sorted({(up, t) for up, ts in catalogue.items() for t in ts})
    reordered = {up: list(reversed(tools)) for up, tools in reversed(catalogue.items())}
    assert namespaced(reordered) == names
    # Names start with their upstream's: each upstream's are made alone, the same.
    alone = [namespaced({up: tools}) for up, tools in catalogue.items()]
    assert {name: route for made in alone for name, route in made.items()} == names


@pytest.mark.parametrize("name", ["fs_x", "1fs", "", "f" * 25, "a.b", "ü"])
def test_an_upstream_name_that_cannot_prefix_tools_is_refused(name: str) -> None:
    with pytest.raises(UsageError, match="upstream name"):
        Upstream(name, StdioServer("true"))


# --- serve's command line (no process) -----------------------------------------------------------


def test_each_upstream_name_dash_dash_starts_the_next_command() -> None:
    args = ["--http", "--upstream", "fs", "--", "npx", "-y", "fs", ".", "--upstream", "mem"]
    args += ["--", "npx", "mem", "--upstream", "--x", "--"]
    head, groups = split_upstreams(args)
    assert head == ["--http"]
    assert groups == [
        ("fs", ["npx", "-y", "fs", "."]),
        ("mem", ["npx", "mem", "--upstream", "--x", "--"]),
    ]


def test_an_upstream_url_among_the_commands_is_serve_s_own_option() -> None:
    args = ["--upstream", "fs", "--", "npx", "fs", ".", "--upstream-url", "search=http://h/mcp"]
    args += ["--upstream", "mem", "--", "npx", "mem", "--upstream-url", "not-a-url"]
    head, groups = split_upstreams(args)
    assert head == ["--upstream-url", "search=http://h/mcp"]
    assert groups == [
        ("fs", ["npx", "fs", "."]),
        ("mem", ["npx", "mem", "--upstream-url", "not-a-url"]),  # no URL: the command's own
    ]


def test_the_single_unnamed_upstream_keeps_its_form() -> None:
    assert split_upstreams(["--repo", ".", "--upstream", "--", "npx", "-y", "srv"]) == (
        ["--repo", "."],
        [(None, ["npx", "-y", "srv"])],
    )
    assert split_upstreams(["examples/support-desk", "--http"]) == (
        ["examples/support-desk", "--http"],
        None,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--upstream", "fs", "--", "true", "--upstream", "--", "true"], "name every upstream"),
        (["--upstream-url", "http://127.0.0.1:1/mcp", "--upstream", "fs", "--", "true"], "name"),
        (["--upstream", "fs", "--", "true", "--upstream", "fs", "--", "true"], "two upstreams"),
        (["--upstream", "f_s", "--", "true"], "upstream name"),
        (["--upstream", "fs", "--"], "needs the upstream server's command"),
        (["--top", "3"], "add --shortlist"),
        (["--semantic"], "--semantic ranks a --shortlist search: add --shortlist"),
        (["--shortlist", "--upstream", "--", "true"], "--shortlist is for a gateway"),
        (["--upstream-url", "bad_name=http://127.0.0.1:1/mcp"], "upstream name"),
        (["--upstream-url", "search=127.0.0.1:1/mcp"], "starts with http:// or https://"),
        (
            ["--upstream", "fs", "--upstream", "mem", "--", "true"],
            "each upstream's command follows its own name",
        ),
        (
            ["--upstream", "fs", "--", "true", "--upstream", "mem", "cat", "-n"],
            "--upstream mem is inside the command of upstream fs: did you mean "
            "`--upstream mem -- cat -n`?",
        ),
        (["--upstream", "fs"], "--upstream fs needs the upstream server's command after `--`"),
        (["--upstream", "fs", "true"], "--upstream fs needs the upstream server's command"),
    ],
)
def test_serve_refuses_an_upstream_it_cannot_serve_before_starting_any(
    args: list[str], says: str, empty: Path
) -> None:
    result = CliRunner().invoke(app, ["serve", "--repo", str(empty), *args], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split())


@SLOW
def test_an_upstream_that_cannot_start_is_named_with_what_to_check(empty: Path) -> None:
    args = ["serve", "--repo", str(empty), "--upstream-url", "search=http://127.0.0.1:1/mcp"]
    args += ["--upstream", "ok", "--", sys.executable, str(HANGING)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    said = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "MCP server search (http://127.0.0.1:1/mcp)" in said
    assert "the URL of --upstream-url search=URL" in said
    assert "--url" not in said


@SLOW
def test_a_table_command_that_cannot_start_names_its_key(tmp_path: Path) -> None:
    (tmp_path / "schemawire.toml").write_text(
        '[repository]\nallow-empty = true\n[gateway.upstreams.gone]\ncommand = ["no-such-h4"]\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["serve", str(tmp_path)], catch_exceptions=False)
    said = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "MCP server gone (" in said
    assert "check the command of [gateway.upstreams.gone] in schemawire.toml" in said
    assert "after `--`" not in said


# --- the [gateway] table (no process) ------------------------------------------------------------


FS = "[gateway.upstreams.fs]\n"
AT = "/gateway/upstreams"


@pytest.mark.parametrize(
    ("table", "pointer", "says"),
    [
        ("[gateway]\nshortlist = 3\n", "/gateway", 'missing required property "upstreams"'),
        ('[gateway.upstreams.f_s]\ncommand = ["x"]\n', f"{AT}/f_s", "no '_'"),
        (FS + 'command = ["x"]\nurl = "http://h/mcp"\n', f"{AT}/fs", "one"),
        (FS + 'cwd = "."\n', f"{AT}/fs", "command"),
        (FS + 'url = "http://h/mcp"\nenv = {A = "b"}\n', f"{AT}/fs/env", "command"),
        (FS + 'command = ["x"]\nheaders = {A = "b"}\n', f"{AT}/fs/headers", "url"),
        (FS + 'command = ["x"]\ncwd = "../out"\n', f"{AT}/fs/cwd", "inside"),
        (FS + "command = []\n", f"{AT}/fs/command", ""),
        (FS + 'command = ["x"]\ntimeout = 0\n', f"{AT}/fs/timeout", ""),
        (FS + 'comand = ["x"]\n', f"{AT}/fs/comand", 'did you mean "command"'),
        ("[gateway]\nshortlist = 0\n" + FS + 'command = ["x"]\n', "/gateway/shortlist", ""),
        ("[gateway]\nshortlist = 51\n" + FS + 'command = ["x"]\n', "/gateway/shortlist", "50"),
    ],
)
def test_a_gateway_table_that_cannot_be_used_is_an_error_naming_its_key(
    tmp_path: Path, table: str, pointer: str, says: str
) -> None:
    (tmp_path / "schemawire.toml").write_text(table, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert raised.value.pointer == pointer
    assert says in raised.value.message
    assert str(raised.value).startswith(f"{tmp_path / 'schemawire.toml'}#{pointer}: ")


def test_a_gateway_table_is_read_in_its_order(tmp_path: Path) -> None:
    (tmp_path / "schemawire.toml").write_text(
        "[gateway]\nshortlist = 7\n"
        '[gateway.upstreams.zeta]\ncommand = ["z", "--flag"]\nenv = {K = "v"}\ncwd = "sub"\n'
        '[gateway.upstreams.alpha]\nurl = "http://127.0.0.1:9/mcp"\nheaders = {X = "y"}\n',
        encoding="utf-8",
    )
    gateway = load_config(tmp_path).gateway
    assert gateway.shortlist == 7
    zeta, alpha = gateway.upstreams
    assert (zeta.name, zeta.command, zeta.env, zeta.cwd) == (
        "zeta",
        ("z", "--flag"),
        {"K": "v"},
        "sub",
    )
    assert (alpha.name, alpha.url, alpha.headers, alpha.timeout) == (
        "alpha",
        "http://127.0.0.1:9/mcp",
        {"X": "y"},
        None,
    )


@contextmanager
def gateway_over_http(empty: Path, upstreams: list[str]) -> Iterator[tuple[str, int]]:
    """``schemawire serve --http`` as a gateway on 127.0.0.1 (any port): its URL and its pid,
    until the block ends (then SIGTERM, and SIGKILL if it must)."""
    argv = [SCHEMAWIRE, "serve", "--http", "--host", "127.0.0.1", "--port", "0"]
    argv += ["--repo", str(empty), *upstreams]
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as process:
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=pump, args=(process.stderr, lines), daemon=True)
        reader.start()
        try:
            yield announced_url(lines, list(argv)), process.pid
        finally:
            process.terminate()
            try:
                process.wait(timeout=GONE_WITHIN)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=GONE_WITHIN)
            reader.join(timeout=GONE_WITHIN)


@SLOW
def test_the_inspector_sees_one_upstream_killed_and_restarted_while_the_others_serve(
    tmp_path: Path, empty: Path, files: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with gateway_over_http(empty, three_upstreams(files, tmp_path / "memory.jsonl")) as (url, pid):
        target: list[str | Path] = [url]
        assert call_tool(home, target, "memory_read_graph", {}).rc == OK
        (memory,) = children_running("mcp-server-memory", parent=pid)
        os.kill(memory, signal.SIGKILL)
        anyio.run(gone, memory)

        echoed = call_tool(home, target, "everything_echo", ECHO)
        assert (echoed.rc, echoed.text) == (OK, "Echo: through the gateway"), echoed
        listed = list_tools(home, target)
        assert "memory_read_graph" in {tool["name"] for tool in (listed.result or {})["tools"]}

        again = call_tool(home, target, "memory_read_graph", {})
        if again.rc != OK:  # the call that found it gone says so; the next one starts it again
            found_gone = rejection(again)
            assert (found_gone["code"], found_gone["tool"]) == ("tool_failed", "memory_read_graph")
            again = call_tool(home, target, "memory_read_graph", {})
        assert again.rc == OK, again
        assert children_running("mcp-server-memory", parent=pid) not in ([], [memory])
        listed_dir = call_tool(home, target, "fs_list_directory", {"path": str(files)})
        assert (listed_dir.rc, "notes.txt" in listed_dir.text) == (OK, True), listed_dir
