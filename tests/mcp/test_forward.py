"""The gating proxy at the transport level (`Forwarder`), seen from the SDK's own client.

The client reaches the forwarder over in-memory JSON-RPC streams, as a transport hands them
over; the upstream is a real process over stdio: the npm server-everything, or the scripted
misbehaving server. These tests start processes, so they are marked slow.
"""

from __future__ import annotations

import gc
import json
import sys
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCRequest
from pydantic import TypeAdapter

from schemawire.errors import ServerError
from schemawire.mcp import StdioServer
from schemawire.mcp._forward import Forwarder
from schemawire.mcp.launch import ServeOptions, gated_server
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from schemawire.types import Hop
from tests.mcp.helpers import late, peer, raw_call, scripted, sdk_client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

_RAW = TypeAdapter(dict[str, Any])
_WAIT = 20  # seconds any one test's exchange may take


@asynccontextmanager
async def forwarded(
    upstream: StdioServer,
    trace: Trace,
    *,
    root: Path | None = None,
    timeout: float = 10,
    on_message: Callable[[Any], Any] | None = None,
    written: list[Any] | None = None,
) -> AsyncIterator[ClientSession]:
    """A client session through the forwarder in front of ``upstream``, initialized; each
    message the forwarder writes to the client is added to ``written``, as it was written
    (the session drops an answer to a request it no longer awaits)."""
    repository = Repository.load(root) if root is not None else None
    forwarder = Forwarder(
        upstream, repository=repository, trace=trace, name="proxy", version="0", timeout=timeout
    )
    to_proxy, proxy_reads = anyio.create_memory_object_stream[Any](16)
    proxy_writes, relayed = anyio.create_memory_object_stream[Any](16)
    to_client, from_proxy = anyio.create_memory_object_stream[Any](16)

    async def relay() -> None:
        async with relayed, to_client:
            async for message in relayed:
                if written is not None:
                    written.append(message)
                await to_client.send(message)

    async def handled(message: Any) -> None:
        if on_message is not None:
            on_message(message)

    with anyio.fail_after(_WAIT):
        async with to_proxy, from_proxy, anyio.create_task_group() as group:
            group.start_soon(forwarder.run, proxy_reads, proxy_writes)
            group.start_soon(relay)
            async with ClientSession(from_proxy, to_proxy, message_handler=handled) as session:
                await session.initialize()
                yield session
            await to_proxy.aclose()  # the client's side closes: the forwarder ends


@asynccontextmanager
async def direct(upstream: StdioServer) -> AsyncIterator[ClientSession]:
    """A client session straight to ``upstream``, initialized."""
    parameters = StdioServerParameters(command=upstream.command, args=list(upstream.args))
    with anyio.fail_after(_WAIT):
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def raw(session: ClientSession, request: Any) -> dict[str, Any]:
    """A request's result exactly as it came (the SDK's models would hide a difference)."""
    result: dict[str, Any] = await session.send_request(request, _RAW)  # type: ignore[arg-type]
    return result


async def prompts_and_resources(session: ClientSession) -> list[dict[str, Any]]:
    prompts = await raw(session, mcp_types.ListPromptsRequest())
    first = prompts["prompts"][0]["name"]
    prompt = await raw(
        session, mcp_types.GetPromptRequest(params=mcp_types.GetPromptRequestParams(name=first))
    )
    resources = await raw(session, mcp_types.ListResourcesRequest())
    uri = resources["resources"][0]["uri"]
    read = await raw(
        session,
        mcp_types.ReadResourceRequest(params=mcp_types.ReadResourceRequestParams(uri=uri)),
    )
    return [prompts, prompt, resources, read]


def upstream_hops(trace: Trace, method: str) -> list[Hop]:
    """The messages of ``method`` the proxy sent upstream."""
    return [h for h in trace.hops if h.source == "host" and h.payload.get("method") == method]


async def call_tool(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    request = mcp_types.CallToolRequest(
        params=mcp_types.CallToolRequestParams(name=name, arguments=arguments)
    )
    return await raw(session, request)


async def cancelled_call(session: ClientSession, name: str, when: anyio.Event) -> None:
    """Call ``name`` and cancel the call once ``when`` is set (the proxy has it)."""
    async with anyio.create_task_group() as group:
        group.start_soon(call_tool, session, name, {})
        await when.wait()
        group.cancel_scope.cancel()


async def test_prompts_and_resources_pass_through_as_a_direct_session_sees_them() -> None:
    everything = peer("everything", "stdio")
    async with direct(everything) as session:
        straight = await prompts_and_resources(session)
    async with forwarded(everything, Trace()) as session:
        through = await prompts_and_resources(session)
    assert through == straight


async def test_a_refused_call_is_answered_by_the_proxy_and_never_reaches_upstream() -> None:
    trace = Trace()
    async with forwarded(peer("everything", "stdio"), trace) as session:
        refused = await call_tool(session, "echo", {"message": 5})
        echoed = await call_tool(session, "echo", {"message": "hi"})
    error = json.loads(refused["content"][0]["text"])["error"]
    assert refused["isError"] is True
    assert refused["_meta"]["dev.schemawire/rejection"]["code"] == "arguments_invalid"
    assert error["violations"][0]["pointer"] == "/message"
    assert echoed["content"][0]["text"] == "Echo: hi"
    sent = [h.payload["params"]["arguments"] for h in upstream_hops(trace, "tools/call")]
    assert sent == [{"message": "hi"}]


async def test_a_refusal_has_the_shape_the_sdk_server_proxy_gives(tmp_path: Path) -> None:
    async with forwarded(scripted(), Trace(), root=tmp_path) as session:
        through = await call_tool(session, "add", {"a": 1, "b": "2"})
    options = ServeOptions(upstream=scripted(), timeout=10)
    with anyio.fail_after(_WAIT):
        async with (
            gated_server(Repository.load(tmp_path), options, Trace()) as server,
            sdk_client(server) as client,
        ):
            served = await raw_call(client, "add", {"a": 1, "b": "2"})
    assert through == served


async def test_a_secret_in_an_upstream_result_is_redacted() -> None:
    async with forwarded(scripted(), Trace()) as session:
        leak = await call_tool(session, "leak", {})
    assert "sk-proj-" not in json.dumps(leak)
    assert "ana" in json.dumps(leak)


async def test_the_upstream_tools_changing_reaches_the_client_and_the_new_tool_is_called() -> None:
    changed = anyio.Event()

    def seen(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.set()

    trace = Trace()
    async with forwarded(scripted("--page-size", "100"), trace, on_message=seen) as session:
        before = {tool.name for tool in (await session.list_tools()).tools}
        await call_tool(session, "grow", {})
        await changed.wait()
        after = {tool.name for tool in (await session.list_tools()).tools}
        await call_tool(session, "grown", {})  # the proxy's listing was renewed: it is sent
    assert after - before == {"grown"}
    called = [h.payload["params"]["name"] for h in upstream_hops(trace, "tools/call")]
    assert called == ["grow", "grown"]


async def test_ping_is_answered_through_the_proxy() -> None:
    trace = Trace()
    async with forwarded(peer("everything", "stdio"), trace) as session:
        await session.send_ping()
    assert len(upstream_hops(trace, "ping")) == 1


async def test_a_request_the_client_cancels_is_cancelled_upstream() -> None:
    sent = anyio.Event()

    def on_hop(hop: Hop) -> None:
        if hop.source == "host" and (hop.payload or {}).get("method") == "tools/call":
            sent.set()

    trace = Trace(on_hop=on_hop)
    async with forwarded(scripted(), trace) as session, anyio.create_task_group() as group:
        group.start_soon(call_tool, session, "hang", {})
        await sent.wait()
        group.cancel_scope.cancel()
    (call,) = upstream_hops(trace, "tools/call")
    (cancelled,) = upstream_hops(trace, "notifications/cancelled")
    assert cancelled.payload["params"]["requestId"] == call.payload["id"]


async def test_a_call_the_upstream_never_answers_is_cancelled_and_answered_in_time() -> None:
    trace = Trace()
    async with forwarded(scripted(), trace, timeout=0.5) as session:
        hung = await call_tool(session, "hang", {})
        back = await call_tool(session, "echo", {"message": "fine"})
    violation = json.loads(hung["content"][0]["text"])["error"]["violations"][0]
    assert "did not answer within 0.5 s" in violation["message"]
    assert back["content"][0]["text"] == "fine"
    assert len(upstream_hops(trace, "notifications/cancelled")) == 1


async def test_a_crashed_upstream_is_started_again_with_the_clients_handshake() -> None:
    trace = Trace()
    async with forwarded(scripted(), trace) as session:
        crashed = await call_tool(session, "crash", {})
        back = await call_tool(session, "echo", {"message": "again"})
    violation = json.loads(crashed["content"][0]["text"])["error"]["violations"][0]
    assert "crashing on purpose" in violation["message"]
    assert back["content"][0]["text"] == "again"
    initializes = upstream_hops(trace, "initialize")
    assert len(initializes) == 2
    first, again = ({**h.payload["params"], "_meta": None} for h in initializes)
    assert first == again  # the client's own, replayed (each with its own trace context)


async def test_an_upstream_that_cannot_start_is_a_server_error() -> None:
    forwarder = Forwarder(
        StdioServer("/no/such/server"),
        repository=None,
        trace=Trace(),
        name="proxy",
        version="0",
        timeout=5,
    )
    to_proxy, proxy_reads = anyio.create_memory_object_stream[Any](1)
    proxy_writes, from_proxy = anyio.create_memory_object_stream[Any](1)
    with anyio.fail_after(_WAIT), pytest.raises(ServerError):
        async with to_proxy, from_proxy:
            await forwarder.run(proxy_reads, proxy_writes)


async def test_serve_over_stdio_pipes_forwards_calls_prompts_and_refusals(tmp_path: Path) -> None:
    everything = peer("everything", "stdio")
    command = Path(sys.executable).with_name("schemawire")
    args = ["serve", "--repo", str(tmp_path), "--upstream", "--", everything.command, "stdio"]
    proxy = StdioServer(str(command), tuple(args))
    async with direct(proxy) as session:
        echoed = await call_tool(session, "echo", {"message": "hi"})
        refused = await call_tool(session, "echo", {"message": 5})
        through = await prompts_and_resources(session)
    async with direct(everything) as session:
        straight = await prompts_and_resources(session)
    assert echoed["content"][0]["text"] == "Echo: hi"
    assert refused["_meta"]["dev.schemawire/rejection"]["code"] == "arguments_invalid"
    assert through == straight


def answers(written: list[Any]) -> list[tuple[Any, str]]:
    """The id and the JSON of each answer the forwarder wrote to the client."""
    messages = [m.message for m in written]
    return [(m.id, m.model_dump_json()) for m in messages if not hasattr(m, "method")]


def sent_when(trace: Trace, method: str, name: str) -> anyio.Event:
    """Set once the proxy sends ``method`` upstream for the tool ``name``."""
    sent = anyio.Event()

    def on_hop(hop: Hop) -> None:
        payload = hop.payload or {}
        called = payload.get("method") == method and payload["params"].get("name") == name
        if hop.source == "host" and called:
            sent.set()

    trace.listen(on_hop)
    return sent


async def test_a_late_result_of_a_call_that_timed_out_is_never_passed_to_the_client() -> None:
    written: list[Any] = []
    async with forwarded(late(), Trace(), timeout=0.5, written=written) as session:
        timed_out = await call_tool(session, "late", {})
        released = await call_tool(session, "release", {})
    ids = [request_id for request_id, _ in answers(written)]
    assert "did not answer within 0.5 s" in json.dumps(timed_out)
    assert released["content"][0]["text"] == '"released"'
    assert len(ids) == len(set(ids))  # each request answered once
    assert not any("sk-proj-" in text for _, text in answers(written))


async def test_a_late_result_of_a_call_the_client_cancelled_is_never_passed_on() -> None:
    trace = Trace()
    written: list[Any] = []
    sent = sent_when(trace, "tools/call", "late")
    async with forwarded(late(), trace, written=written) as session:
        await cancelled_call(session, "late", sent)
        released = await call_tool(session, "release", {})
    assert released["content"][0]["text"] == '"released"'
    assert not any("sk-proj-" in text for _, text in answers(written))


async def test_the_span_of_a_call_the_client_cancelled_ends_when_it_is_cancelled() -> None:
    trace = Trace()
    sent = sent_when(trace, "tools/call", "late")
    async with forwarded(late(), trace) as session:
        await cancelled_call(session, "late", sent)
        await call_tool(session, "release", {})
        ended = {h.span for h in trace.hops if h.direction == "end"}
    (served,) = (
        h
        for h in trace.hops
        if h.source == "client" and (h.payload or {}).get("params", {}).get("name") == "late"
    )
    assert served.span is not None
    assert served.span in ended


async def test_an_upstreams_last_words_are_redacted_when_quoted_to_the_client() -> None:
    async with forwarded(late(), Trace()) as session:
        with pytest.raises(MCPError) as raised:
            await session.read_resource("late://die")
    assert "dying, my key is" in raised.value.error.message
    assert "sk-proj-" not in raised.value.error.message


async def test_a_restart_whose_handshake_failed_is_not_used_until_it_is_retried(
    tmp_path: Path,
) -> None:
    trace = Trace()
    async with forwarded(late("--once", str(tmp_path / "started")), trace) as session:
        with pytest.raises(MCPError):
            await session.read_resource("late://die")
        refused = await call_tool(session, "echo", {"message": "hi"})
        again = await call_tool(session, "echo", {"message": "hi"})
    assert "restarts are refused" in json.dumps(refused)
    assert again == refused  # the failure, within RETRY_AFTER: not the half-started upstream's echo
    assert len(upstream_hops(trace, "initialize")) == 2


async def test_a_client_request_id_like_the_proxys_own_is_answered() -> None:
    forwarder = Forwarder(
        late(), repository=None, trace=Trace(), name="proxy", version="0", timeout=10
    )
    to_proxy, proxy_reads = anyio.create_memory_object_stream[Any](4)
    proxy_writes, from_proxy = anyio.create_memory_object_stream[Any](4)
    ping = JSONRPCRequest(jsonrpc="2.0", id="schemawire-proxy-1", method="ping")
    with anyio.fail_after(_WAIT):
        async with to_proxy, from_proxy, anyio.create_task_group() as group:
            group.start_soon(forwarder.run, proxy_reads, proxy_writes)
            await to_proxy.send(SessionMessage(ping))
            answer = await from_proxy.receive()
            await to_proxy.aclose()
    assert answer.message.id == "schemawire-proxy-1"


async def test_a_call_cancelled_before_the_proxy_sent_it_is_never_sent_upstream() -> None:
    trace = Trace()
    received = anyio.Event()

    def on_hop(hop: Hop) -> None:  # the proxy has the call: it is listing the tools for it
        if hop.source == "client" and (hop.payload or {}).get("method") == "tools/call":
            received.set()

    trace.listen(on_hop)
    async with forwarded(late(), trace) as session:
        await cancelled_call(session, "late", received)
        await call_tool(session, "release", {})
    called = [h.payload["params"]["name"] for h in upstream_hops(trace, "tools/call")]
    assert called == ["release"]


async def test_a_failure_of_the_proxy_while_forwarding_is_told_as_that() -> None:
    def on_hop(hop: Hop) -> None:  # the trace fails on the upstream's answer to the call
        if "Echo: hi" in json.dumps(hop.payload) and hop.target == "host":
            raise OSError("the trace's disk is full")

    async with forwarded(peer("everything", "stdio"), Trace(on_hop=on_hop)) as session:
        failed = await call_tool(session, "echo", {"message": "hi"})
    assert "the proxy failed: OSError: the trace's disk is full" in json.dumps(failed)


async def test_a_forwarder_cancelled_while_it_starts_its_upstream_leaves_no_file_open() -> None:
    forwarder = Forwarder(
        late(), repository=None, trace=Trace(), name="proxy", version="0", timeout=10
    )
    to_proxy, proxy_reads = anyio.create_memory_object_stream[Any](1)
    proxy_writes, from_proxy = anyio.create_memory_object_stream[Any](1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with anyio.fail_after(_WAIT):
            async with to_proxy, from_proxy, anyio.create_task_group() as group:
                group.start_soon(forwarder.run, proxy_reads, proxy_writes)
                group.cancel_scope.cancel()
        gc.collect()  # an unclosed file says so when it is collected
    assert [w.message for w in caught if issubclass(w.category, ResourceWarning)] == []


async def test_what_a_restarted_upstream_was_sent_is_not_answered_for_the_one_that_died() -> None:
    trace = Trace()
    forwarder = Forwarder(
        late(), repository=None, trace=trace, name="proxy", version="0", timeout=10
    )
    to_proxy, proxy_reads = anyio.create_memory_object_stream[Any](4)
    proxy_writes, from_proxy = anyio.create_memory_object_stream[Any](0)  # the proxy waits for us
    answering = anyio.Event()  # the proxy is answering the call the dead upstream owed
    called, asked = sent_when(trace, "tools/call", "late"), anyio.Event()

    def on_hop(hop: Hop) -> None:
        payload = hop.payload or {}
        if hop.target == "client" and payload.get("id") == 1:
            answering.set()
        if hop.source == "host" and payload.get("method") == "prompts/get":
            asked.set()

    trace.listen(on_hop)

    async def send(request_id: int, method: str, params: dict[str, Any] | None) -> None:
        request = JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)
        await to_proxy.send(SessionMessage(request))

    with anyio.fail_after(_WAIT):
        async with to_proxy, from_proxy, anyio.create_task_group() as group:
            group.start_soon(forwarder.run, proxy_reads, proxy_writes)
            try:
                await send(1, "tools/call", {"name": "late", "arguments": {}})
                await called.wait()
                await send(2, "resources/read", {"uri": "late://die"})
                await answering.wait()  # and held there, until we read
                await send(3, "prompts/get", {"name": "never"})  # to the restarted upstream
                await asked.wait()
                first, second = (await from_proxy.receive(), await from_proxy.receive())
                await send(4, "ping", None)
                after = await from_proxy.receive()
            finally:
                await from_proxy.aclose()  # what the proxy still writes (the answer to 3) fails
                await to_proxy.aclose()
    assert [first.message.id, second.message.id] == [1, 2]
    assert after.message.id == 4  # not an answer to 3 from the upstream that died
