"""The host's shortlist over real MCP servers: the catalogue re-read when a server's tool list
changes (``notifications/tools/list_changed``), the index rebuilt then and only then."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemawire.host import Host, HostOptions, ScriptedModel, mcp_tools
from schemawire.mcp import McpClient, StdioServer
from schemawire.trace import Trace
from tests.host.chat_script import calls, says, tool_messages
from tests.host.shortlist_catalogue import SHORTLIST_SCHEMA
from tests.mcp.helpers import peer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PRESELECTION = "host:preselection"
GROWING = Path(__file__).parent / "servers" / "growing.py"


def names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def shortlists(host: Host) -> list[tuple[str, dict[str, Any]]]:
    return [(hop.source, hop.payload) for hop in host.trace.hops if hop.protocol == "shortlist"]


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["2026-07-28", "initialize"])
async def test_a_server_that_adds_a_tool_has_it_indexed_before_the_next_request(
    mode: str,
) -> None:
    script = [
        calls(("c1", "open_refunds", {})),
        calls(("s1", "search_tools", {"query": "refund an order"})),
        calls(("c2", "refund_order", {"order_id": "A-1042", "amount": 2.5})),
        says("Refunded."),
    ]
    model = ScriptedModel("openai.chat", script, name="m")
    server = StdioServer(sys.executable, (str(GROWING),), name="growing")
    options = HostOptions(shortlist=1, pinned=("open_refunds",))
    # A 2026-07-28 session learns of changes by subscribing (subscriptions/listen); one that
    # began with the initialize handshake is told unasked.
    with anyio.fail_after(30):
        async with McpClient(server, mode=mode, trace=Trace()) as client:  # type: ignore[arg-type]
            host = Host(model, await mcp_tools(client), options=options)
            result = await host.run("Please refund 2.50 on order A-1042")
            version = client.protocol_version
    assert (version == "2026-07-28") == (mode == "auto")
    assert result.stopped == "answer"
    first, second, third, fourth = model.requests
    assert "refund_order" not in json.dumps(first["tools"])
    hops = shortlists(host)
    # the pre-selection ranked again once the list changed; the search found the new tool
    assert [source for source, _ in hops] == [PRESELECTION, PRESELECTION, "host:search_tools"]
    assert [payload["catalogue"]["size"] for _, payload in hops] == [2, 3, 3]
    assert all(SHORTLIST_SCHEMA.is_valid(payload) for _, payload in hops)
    assert hops[2][1]["tools"][0]["name"] == "refund_order"
    assert "refund_order" in names(second)  # the new pre-selection has it already
    assert tool_messages(fourth)["c2"] == "refunded 2.5 on A-1042"
    # nothing changed after that: the same tools, byte for byte
    assert json.dumps(third["tools"]) == json.dumps(fourth["tools"])


async def test_a_shortlist_over_three_reference_servers_says_where_each_tool_comes_from() -> None:
    servers = [peer("everything"), peer("memory"), peer("filesystem", str(Path.cwd()))]
    model = ScriptedModel("openai.chat", [says("ok")], name="m")
    host = Host(model, mcp=servers, options=HostOptions(shortlist=3), trace=Trace())
    with anyio.fail_after(60):
        async with host:
            await host.run("Create an entity in the knowledge graph for Ada Lovelace")
            offered = len(host.tools)
    ((_, payload),) = shortlists(host)
    sources = payload["catalogue"]["sources"]
    assert len(sources) == 3
    assert sum(sources.values()) == payload["catalogue"]["size"] == offered - 1
    assert payload["tools"][0]["name"] == "create_entities"
    assert len(names(model.requests[0])) == 4  # search_tools and the three


async def test_a_client_on_the_default_protocol_learns_that_the_tools_changed() -> None:
    """The client subscribes (``subscriptions/listen``) on a 2026-07-28 session: the server's
    change reaches ``on_tools_changed``, and the next listing has the new tool."""
    changed = anyio.Event()

    async def on_tools_changed() -> None:
        changed.set()

    server = StdioServer(sys.executable, (str(GROWING),), name="growing")
    with anyio.fail_after(30):
        async with McpClient(server, trace=Trace(), on_tools_changed=on_tools_changed) as client:
            assert client.protocol_version == "2026-07-28"
            before = [tool.name for tool in await client.list_tools()]
            opened = await client.call("open_refunds", {})
            await changed.wait()
            after = [tool.name for tool in await client.list_tools()]
    assert opened.output.content[0]["text"] == "the refund desk is open"
    assert before == ["open_refunds", "order_status"]
    assert after == ["open_refunds", "order_status", "refund_order"]


async def test_a_server_with_its_own_search_tools_says_how_to_turn_the_hosts_off() -> None:
    from schemawire.errors import UsageError

    searching = Path(__file__).parent / "servers" / "searching.py"
    server = StdioServer(sys.executable, (str(searching),), name="searching")
    model = ScriptedModel("openai.chat", [says("ok")], name="m")
    host = Host(model, mcp=[server], options=HostOptions(shortlist=1), trace=Trace())
    with anyio.fail_after(30), pytest.raises(UsageError) as raised:
        async with host:
            pass
    message = str(raised.value)
    assert 'the MCP server "searching" has a tool named search_tools' in message
    assert "--no-search-tools" in message
    # without the host's own search, its search_tools is a tool like any other
    options = HostOptions(shortlist=1, search_tools=False)
    host = Host(model, mcp=[server], options=options, trace=Trace())
    with anyio.fail_after(30):
        async with host:
            assert "search_tools" in host.tools
