"""W3C trace context across real MCP servers: our client puts ``traceparent`` in each request's
``params._meta``; ``schemawire serve`` and the gating proxy make their spans children of it, so
the exported spans of the client's, the proxy's and the server's trace files are one tree."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from schemawire import Host, ScriptedModel, StdioServer, Trace
from schemawire.otel import export_file
from tests.helpers import EXAMPLES
from tests.otel.receiver import Receiver
from tests.otel.test_export import calls, says

SUPPORT_DESK = str(EXAMPLES / "support-desk")


def serve(trace: Path) -> tuple[str, ...]:
    return ("-m", "schemawire", "serve", SUPPORT_DESK, "--trace", str(trace))


def run_against(server: StdioServer, client_trace: Path) -> None:
    model = ScriptedModel(
        "openai.chat", [calls("get_weather", {"city": "Paris"}, "w1"), says("ok")]
    )
    with Trace(run_id="ctx-client", path=client_trace) as trace:
        host = Host(model, mcp=[server], trace=trace)
        assert host.run_sync("Weather in Paris?").stopped == "answer"


def tools_calls(receiver: Receiver, service_run: str) -> list[object]:
    return [
        s
        for s in receiver.spans
        if s.span.name == "tools/call get_weather"
        and s.attributes["schemawire.run.id"] == service_run
    ]


@pytest.mark.slow
def test_the_servers_span_is_a_child_of_the_clients_in_one_trace(
    receiver: Receiver, tmp_path: Path
) -> None:
    client, served = tmp_path / "client.jsonl", tmp_path / "server.jsonl"
    run_against(StdioServer(sys.executable, serve(served)), client)
    for path in (client, served):
        export_file(path, receiver.url)
    assert receiver.rejected == 0
    ours = [s for s in receiver.spans if s.span.name == "tools/call get_weather"]
    (sent,) = [s for s in ours if not s.attributes["schemawire.mcp.served"]]
    (answered,) = [s for s in ours if s.attributes["schemawire.mcp.served"]]
    assert answered.trace_id == sent.trace_id
    assert answered.parent_id == sent.span_id
    assert {s.trace_id for s in receiver.spans if s.span.name.startswith("tools/call")} == {
        sent.trace_id
    }


@pytest.mark.slow
def test_through_the_proxy_client_proxy_and_server_spans_are_one_chain(
    receiver: Receiver, tmp_path: Path
) -> None:
    client, proxied, served = (tmp_path / f"{n}.jsonl" for n in ("client", "proxy", "server"))
    proxy = ("-m", "schemawire", "serve", "--upstream", "--trace", str(proxied), "--")
    run_against(StdioServer(sys.executable, (*proxy, sys.executable, *serve(served))), client)
    for path in (client, proxied, served):
        export_file(path, receiver.url)
    assert receiver.rejected == 0
    chain = [s for s in receiver.spans if s.span.name == "tools/call get_weather"]
    assert len(chain) == 4  # client → proxy served → proxy's upstream call → server served
    by_id = {s.span_id: s for s in chain}
    (root,) = [s for s in chain if s.parent_id not in by_id]
    assert not root.attributes["schemawire.mcp.served"]
    links, span = [], root
    while True:
        children = [s for s in chain if s.parent_id == span.span_id]
        if not children:
            break
        (span,) = children
        links.append(span.attributes["schemawire.mcp.served"])
    assert links == [True, False, True]
    assert {s.trace_id for s in chain} == {root.trace_id}


@pytest.mark.slow
def test_serve_otlp_exports_its_spans_live_and_flushes_them_on_exit(
    receiver: Receiver, tmp_path: Path
) -> None:
    client = tmp_path / "client.jsonl"
    command = ("-m", "schemawire", "serve", SUPPORT_DESK, "--otlp", receiver.url)
    run_against(StdioServer(sys.executable, command), client)  # the server exits with stdin
    export_file(client, receiver.url)
    assert receiver.rejected == 0
    ours = [s for s in receiver.spans if s.span.name == "tools/call get_weather"]
    (answered,) = [s for s in ours if s.attributes["schemawire.mcp.served"]]
    (sent,) = [s for s in ours if not s.attributes["schemawire.mcp.served"]]
    assert (answered.trace_id, answered.parent_id) == (sent.trace_id, sent.span_id)
    assert {s.service for s in ours} == {"schemawire"}
