"""Spans: a real host run (Python tools, then an MCP server over stdio) traced to a file reads
back as the tree run → turn → model and tool → mcp; parallel calls get a span each; the pairing
rule places MCP responses; a process killed inside a span leaves it open, and the file reads."""

from __future__ import annotations

import contextlib
import dataclasses
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemawire import Host, Repository, ScriptedModel, StdioServer, python_tools
from schemawire.trace import SpanNode, Trace, read_trace, span_tree
from schemawire.types import Hop
from tests.helpers import EXAMPLES, WriteRepo
from tests.host.chat_script import calls, says
from tests.host.test_loop import Desk, desk_repository

pytestmark = pytest.mark.anyio

SUPPORT_DESK = EXAMPLES / "support-desk"


def shape(node: SpanNode) -> Any:
    """A span as (kind, name, status, [its entries: a hop's protocol/direction, or a span])."""
    entries = [
        shape(entry) if isinstance(entry, SpanNode) else f"{entry.protocol}:{entry.direction}"
        for entry in node.entries
    ]
    return (node.kind, node.name, node.status, entries)


def desk_host(write_repo: WriteRepo, script: list[dict[str, Any]], trace: Trace) -> Host:
    desk = Desk()
    functions = {"weather": desk.weather, "fast": desk.fast, "slow": desk.slow}
    model = ScriptedModel("openai.chat", script, name="m")
    return Host(model, python_tools(desk_repository(write_repo), functions), trace=trace)


async def test_a_run_of_python_tools_reads_back_as_its_tree(
    write_repo: WriteRepo, tmp_path: Path
) -> None:
    script = [
        calls(("c1", "weather", {"city": "a", "unit": "kelvin"}), ("c2", "fast", {"city": "b"})),
        says("done"),
    ]
    path = tmp_path / "run.jsonl"
    with Trace("r1", path=path) as trace:
        await desk_host(write_repo, script, trace).run("go")
    tree = span_tree(read_trace(path))
    assert tree.hops == []  # every hop of a run is in its span
    (run,) = tree.roots
    model_span = ("model", "m", "ok", ["openai.chat:send", "openai.chat:receive"])
    assert shape(run) == (
        "run",
        "m",
        "ok",
        [
            "text:receive",
            (
                "turn",
                "turn 1",
                "ok",
                [
                    model_span,
                    ("tool", "weather", "refused", ["gate:check"]),  # kelvin is no unit
                    ("tool", "fast", "ok", ["python:send", "python:receive"]),
                ],
            ),
            ("turn", "turn 2", "ok", [model_span]),
        ],
    )
    assert run.attributes == {"model": "m", "api": "openai.chat"}
    assert all(span.duration is not None and span.duration >= 0 for span in tree.spans.values())
    assert [span.attributes.get("call") for span in run.children[0].children[1:]] == ["c1", "c2"]


async def test_parallel_tool_calls_each_get_their_own_span(write_repo: WriteRepo) -> None:
    # slow waits for fast: their hops interleave, and only the contextvar tells them apart.
    script = [calls(("c1", "slow", {"city": "a"}), ("c2", "fast", {"city": "b"})), says(".")]
    trace = Trace("r2")
    await desk_host(write_repo, script, trace).run("go")
    order = [h.target for h in trace.hops if h.protocol == "python" and h.direction == "send"]
    assert order == ["python:slow", "python:fast"]
    received = [h.source for h in trace.hops if h.protocol == "python" and h.direction == "receive"]
    assert received == ["python:fast", "python:slow"]  # interleaved: fast ended first
    turn = span_tree(trace.hops).roots[0].children[0]
    tools = {span.name: span for span in turn.children if span.kind == "tool"}
    for name in ("slow", "fast"):
        assert [h.source for h in tools[name].hops if h.direction == "receive"] == [
            f"python:{name}"
        ]
        assert tools[name].parent == turn.id
    assert tools["slow"].id != tools["fast"].id


async def test_two_traces_in_one_task_keep_their_own_current_span() -> None:
    first, second = Trace("a"), Trace("b")
    with first.span("run", "one"):
        assert second.current_span is None
        hop = second.record("host", "x", "text", "send", {})
        with second.span("run", "two"):
            inner = first.record("host", "x", "text", "send", {})
    assert hop is not None
    assert hop.span is None
    assert inner is not None
    assert inner.span == first.hops[0].span


async def test_a_trace_that_keeps_nothing_records_no_span_and_numbers_only_hops() -> None:
    trace = Trace("quiet", keep=False)
    with trace.span("run", "m") as span:
        assert (span.id, trace.current_span) == (None, None)
        assert trace.record("host", "x", "text", "send", {}) is None
    loud = Trace("loud")
    with loud.span("run", "m"):
        hop = loud.record("host", "x", "text", "send", {})
    assert hop is not None
    assert hop.seq == 2  # after its span's start
    assert trace._last_seq == {"quiet": 1}  # the hop only


def mcp_host(trace: Trace) -> Host:
    model = ScriptedModel(
        "openai.chat", [calls(("c1", "get_weather", {"city": "Paris"})), says("11.5")], name="m"
    )
    server = StdioServer(sys.executable, ("-m", "schemawire", "serve", str(SUPPORT_DESK)))
    return Host(model, mcp=[server], repository=Repository.load(SUPPORT_DESK), trace=trace)


@pytest.mark.slow
async def test_a_run_with_an_mcp_server_puts_each_request_in_an_mcp_span(tmp_path: Path) -> None:
    path = tmp_path / "mcp.jsonl"
    with Trace("r3", path=path) as trace:
        with anyio.fail_after(60):
            result = await mcp_host(trace).run("Weather in Paris?")
    assert result.stopped == "answer"
    tree = span_tree(read_trace(path))
    # The connection is made before the run: its handshake and listing are spans at the root.
    handshake = [span.name for span in tree.roots if span.kind == "mcp"]
    assert "initialize" in handshake or "server/discover" in handshake
    (run,) = [span for span in tree.roots if span.kind == "run"]
    (tool,) = [span for turn in run.children for span in turn.children if span.kind == "tool"]
    assert (tool.name, tool.status) == ("get_weather", "ok")
    (call,) = tool.children
    assert (call.kind, call.name, call.status) == ("mcp", "tools/call", "ok")
    assert [(h.direction, "result" in h.payload) for h in call.hops] == [
        ("send", False),
        ("receive", True),
    ]
    # The argument gate's verdict, then the request, then the result gate's verdict.
    assert [e.kind if isinstance(e, SpanNode) else e.protocol for e in tool.entries] == [
        "gate",
        "mcp",
        "gate",
    ]
    assert [h.verdict["gate"] for h in tool.hops] == ["arguments", "results"]


@pytest.mark.slow
async def test_the_pairing_rule_places_a_response_that_names_no_span(tmp_path: Path) -> None:
    path = tmp_path / "mcp.jsonl"
    with Trace("r4", path=path) as trace:
        with anyio.fail_after(60):
            await mcp_host(trace).run("Weather in Paris?")
    written = list(read_trace(path))
    responses = [
        h
        for h in written
        if h.protocol == "mcp" and h.direction == "receive" and "method" not in h.payload
    ]
    assert responses
    assert all(h.span is not None for h in responses)  # the tap paired them
    # A reader meets responses that name no span (a writer on a task with none): it pairs them.
    unnamed = [dataclasses.replace(h, span=None) if h in responses else h for h in written]
    paired, named = span_tree(unnamed), span_tree(written)
    assert paired.hops == named.hops  # only notifications are in no span
    assert all("method" in h.payload and "id" not in h.payload for h in named.hops)
    listen = [s for s in named.spans.values() if s.name == "subscriptions/listen"]
    assert [(s.status, s.error["code"]) for s in listen] == [("error", "cancelled")]
    for span_id, node in named.spans.items():
        assert [h.seq for h in paired.spans[span_id].hops] == [h.seq for h in node.hops]


# Opens a run span and a tool span, records a hop in it, and kills itself: no end hop is written.
CRASH = """
import os, signal, sys
from schemawire.trace import Trace
trace = Trace("crashed", path=sys.argv[1])
with trace.span("run", "m"):
    with trace.span("tool", "get_weather"):
        trace.record("host", "python:get_weather", "python", "send", {"arguments": {}})
        os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_process_killed_inside_a_span_leaves_it_open_and_the_file_reads(tmp_path: Path) -> None:
    path = tmp_path / "crashed.jsonl"
    done = subprocess.run([sys.executable, "-c", CRASH, str(path)], timeout=60, check=False)
    assert done.returncode == -9
    tree = span_tree(read_trace(path))
    (run,) = tree.roots
    (tool,) = run.children
    assert [(s.kind, s.status, s.end, s.duration) for s in (run, tool)] == [
        ("run", "open", None, None),
        ("tool", "open", None, None),
    ]
    assert [h.protocol for h in tool.hops] == ["python"]
    # A later run appends to the same file: its spans close, the open ones stay open.
    with Trace("crashed", path=path) as trace, trace.span("run", "again"):
        pass
    again = span_tree(read_trace(path))
    assert [(s.name, s.status) for s in again.roots] == [("m", "open"), ("again", "ok")]


async def test_a_span_that_raises_ends_as_an_error_with_the_errors_json() -> None:
    from schemawire.errors import ModelError

    trace = Trace("r5")
    with pytest.raises(ModelError), trace.span("model", "m"):
        raise ModelError("the model is gone")
    end = trace.hops[-1].payload
    assert (end["kind"], end["status"]) == ("model", "error")
    assert end["error"] == ModelError("the model is gone").to_json()


async def test_run_prints_no_line_for_a_span_hop(write_repo: WriteRepo) -> None:
    from rich.console import Console

    from schemawire.cli._hops import HopPrinter

    console = Console(record=True, width=200)
    trace = Trace("r6", on_hop=HopPrinter(console))
    await desk_host(write_repo, [calls(("c1", "fast", {"city": "b"})), says(".")], trace).run("go")
    lines = console.export_text().splitlines()
    shown = [h for h in trace.hops if h.protocol != "span"]
    assert len(lines) == len(shown) < len(trace.hops)
    assert [line.split()[0] for line in lines] == [str(h.seq) for h in shown]


def weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    return {"city": city, "temp_c": 11.5, "condition": "cloudy"}


@pytest.mark.slow
async def test_a_server_and_a_proxy_in_front_of_it_each_hold_a_span_per_request_served(
    tmp_path: Path,
) -> None:
    from schemawire.mcp import HttpServer, McpClient
    from schemawire.mcp.launch import ServeOptions, gated_server
    from schemawire.mcp.server import LocalTools, build_server
    from tests.mcp.helpers import serving

    served, proxied = Trace("server"), Trace("proxy")
    tools = LocalTools(Repository.load(SUPPORT_DESK), {"get_weather": weather})
    with anyio.fail_after(60):
        async with serving(build_server(tools, name="desk", version="1", trace=served)) as url:
            options = ServeOptions(upstream=HttpServer(url), timeout=10)
            async with (
                gated_server(Repository.load(SUPPORT_DESK), options, proxied) as proxy,
                serving(proxy) as at,
                McpClient(HttpServer(at)) as client,
            ):
                call = await client.call("get_weather", {"city": "Paris"})
    assert call.result is not None
    assert call.result.accepted

    def served_calls(trace: Trace) -> list[SpanNode]:
        roots = span_tree(trace.hops).roots
        return [s for s in roots if s.name == "tools/call" and s.attributes.get("served")]

    (at_server,) = served_calls(served)
    assert at_server.status == "ok"
    assert [(h.protocol, h.direction) for h in at_server.hops] == [
        ("mcp", "receive"),
        ("gate", "check"),  # arguments
        ("gate", "check"),  # result
        ("mcp", "send"),
    ]
    (at_proxy,) = served_calls(proxied)
    (upstream,) = at_proxy.children  # the proxy's own request upstream, in the span it serves
    assert (upstream.kind, upstream.name, upstream.status) == ("mcp", "tools/call", "ok")
    assert [h.direction for h in upstream.hops] == ["send", "receive"]
    assert [h.verdict["gate"] for h in at_proxy.hops if h.protocol == "gate"] == [
        "arguments",
        "results",
    ]


def request(request_id: int, method: str = "tools/call") -> Any:
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCRequest

    return SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method))


@contextlib.asynccontextmanager
async def memory_transport() -> Any:
    """A client transport over anyio memory streams: what the client writes, the test reads."""
    to_server, from_client = anyio.create_memory_object_stream[Any](8)
    to_client, from_server = anyio.create_memory_object_stream[Any](8)
    async with to_server, from_client, to_client, from_server:
        yield from_server, to_server


def ends(trace: Trace) -> list[tuple[str, Any]]:
    return [
        (h.payload["status"], h.payload.get("error", {}).get("code"))
        for h in trace.hops
        if h.protocol == "span" and h.direction == "end"
    ]


async def test_an_mcp_request_still_awaited_when_the_connection_ends_ends_its_span() -> None:
    from schemawire.mcp._wire import WireTap, traced

    trace = Trace("r7")
    tap = WireTap(trace, "host", "mcp:gone")
    async with traced(memory_transport(), tap) as (_, write):
        await write.send(request(1))  # the server dies before it answers
    assert ends(trace) == [("error", "no_response")]
    (call,) = span_tree(trace.hops).roots
    assert (call.name, call.status, [h.direction for h in call.hops]) == (
        "tools/call",
        "error",
        ["send"],
    )


async def test_an_mcp_request_that_cannot_be_written_ends_its_span() -> None:
    from schemawire.mcp._wire import WireTap, traced

    trace = Trace("r8")
    tap = WireTap(trace, "host", "mcp:gone")
    async with traced(memory_transport(), tap) as (_, write):
        await write._inner.aclose()
        with pytest.raises(anyio.ClosedResourceError):
            await write.send(request(1))
        assert ends(trace) == [("error", "not_sent")]
    assert len(ends(trace)) == 1  # ended once


async def test_an_mcp_request_forgotten_or_whose_id_is_minted_again_ends_its_span() -> None:
    from schemawire.mcp import _wire
    from schemawire.mcp._wire import WireTap

    trace = Trace("r9")
    tap = WireTap(trace, "host", "mcp:busy")
    await tap.sent(request(1))
    await tap.sent(request(1))  # the SDK mints an id again once its request is over
    assert ends(trace) == [("error", "no_response")]
    for request_id in range(2, _wire._PENDING + 2):
        await tap.sent(request(request_id))
    assert len(ends(trace)) == 2  # the oldest, given up
    assert len(tap._pending) == _wire._PENDING


def span_hop(seq: int, span: str, direction: str, payload: dict[str, Any]) -> Hop:
    return Hop("h", seq, float(seq), "host", "host", "span", direction, payload, None, span)


def start(seq: int, span: str, parent: str | None, kind: str = "tool") -> Hop:
    return span_hop(seq, span, "start", {"kind": kind, "name": span, "parent": parent})


def end(seq: int, span: str, status: str = "ok") -> Hop:
    return span_hop(seq, span, "end", {"kind": "tool", "status": status})


def hop_in(seq: int, span: str | None) -> Hop:
    return Hop("h", seq, float(seq), "host", "python:t", "python", "send", {}, None, span)


def walk_up(tree: Any, node: SpanNode) -> int:
    """How many ancestors ``node`` has, following ``parent`` (fails on a loop)."""
    seen = 0
    while node.parent is not None:
        node = tree.spans[node.parent]
        seen += 1
        assert seen <= len(tree.spans), "the parents loop"
    return seen


def test_a_span_that_names_itself_as_its_parent_is_a_root_not_a_loop() -> None:
    tree = span_tree([start(1, "a" * 16, "a" * 16), hop_in(2, "a" * 16), end(3, "a" * 16)])
    (node,) = tree.roots
    assert (node.children, node.parent, node.status) == ([], None, "ok")
    assert tree.to_json()["entries"][0]["entries"][0]["seq"] == 2


def test_two_spans_that_name_each_other_as_parents_do_not_loop() -> None:
    a, b = "a" * 16, "b" * 16
    tree = span_tree([start(1, a, b), start(2, b, a), hop_in(3, b)])
    assert [s.id for s in tree.roots] == [a]  # b's parent had started: b is in it
    assert [walk_up(tree, tree.spans[s]) for s in (a, b)] == [0, 1]


def test_a_span_started_twice_or_ended_before_its_start_is_one_span_and_keeps_every_hop() -> None:
    a, b = "a" * 16, "b" * 16
    hops = [start(1, a, None), hop_in(2, a), start(3, a, None), hop_in(4, a), end(5, a)]
    hops += [end(6, b, "refused"), start(7, b, None), end(8, b)]
    tree = span_tree(hops)
    assert [(s.id, s.status, s.end) for s in tree.roots] == [(a, "ok", 5.0), (b, "refused", 6.0)]
    assert [h.seq for h in tree.spans[a].hops] == [2, 3, 4]  # the second start is a hop of it
    assert [h.seq for h in tree.spans[b].hops] == [7, 8]
    assert tree.spans[b].kind == "unknown"  # made by the first hop that named it: its end


def test_a_hundred_thousand_nested_spans_build_and_show_without_recursion() -> None:
    count = 100_000
    ids = [f"{i:016x}" for i in range(count)]
    hops = [start(i + 1, ids[i], ids[i - 1] if i else None) for i in range(count)]
    hops += [end(count + 1 + i, ids[count - 1 - i]) for i in range(count)]
    began = time.perf_counter()
    tree = span_tree(hops)
    shown = tree.to_json()
    seconds = time.perf_counter() - began
    (root,) = tree.roots
    depth, node = 0, shown["entries"][0]
    while node["entries"]:
        (node,) = node["entries"]
        depth += 1
    assert depth == count - 1
    assert node["status"] == "ok"
    assert repr(root).startswith("SpanNode(id='0000000000000000'")
    assert seconds < 60  # linear (a quadratic walk takes minutes), loose for a loaded machine


def test_a_span_left_in_another_context_keeps_that_contexts_current_span() -> None:
    import contextvars

    trace = Trace("r10")
    entered, closer = contextvars.copy_context(), contextvars.copy_context()
    span = trace.span("tool", "inside a generator")
    entered.run(span.__enter__)
    # The closer (say, the loop's finaliser of an async generator) is inside a span of its
    # own when it ends the generator's: its own stays current.
    own = closer.run(trace.span("run", "the closer's").__enter__)
    closer.run(span.__exit__, None, None, None)
    assert closer.run(lambda: trace.current_span) == own.id
    assert [h.direction for h in trace.hops if h.span == span.id] == ["start", "end"]


def test_a_span_given_a_parent_opened_elsewhere_is_its_child_and_current_inside() -> None:
    trace = Trace("r11")
    run = trace.open_span("run", "a framework's run", parent=None)  # by its callback
    with trace.span("run", "open here"), trace.span("tool", "get_weather", parent=run) as tool:
        assert trace.current_span == tool.id
        trace.record("host", "python:get_weather", "python", "send", {})
    trace.close_span(run, "run")
    roots = span_tree(trace.hops).roots
    assert [shape(root) for root in roots] == [
        ("run", "a framework's run", "ok", [("tool", "get_weather", "ok", ["python:send"])]),
        ("run", "open here", "ok", []),
    ]


def test_a_verdict_that_cannot_be_redacted_is_written_as_the_schema_says(tmp_path: Path) -> None:
    # A verdict's violation without its pointer cannot be redacted: the hop keeps a note in its
    # place, and the line still passes the format's schema (the autouse fixture checks it).
    path = tmp_path / "verdict.jsonl"
    broken = {"gate": "arguments", "rejection": {"violations": [{"keyword": "type"}]}}
    with Trace("r11", path=path) as trace:
        trace.record("host", "host", "gate", "check", {"tool": "t"}, verdict=broken)
    (hop,) = read_trace(path)
    assert isinstance(hop.verdict, str)
    assert hop.verdict.startswith("[NOT KEPT")
