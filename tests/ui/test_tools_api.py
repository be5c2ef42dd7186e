"""The Tools page's API over HTTP (no browser): the tool list, one tool's projections as
`schemawire export` computes them, and gated calls streamed as JSON Lines into a trace file."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx

from schemawire.project import TARGETS
from schemawire.project.export import DEFAULT_OPTIONS, export
from schemawire.schema.repository import Repository
from schemawire.trace import read_trace
from schemawire.ui import UiConfig
from schemawire.ui._security import TOKEN_HEADER
from schemawire.ui._tools import PROJECTIONS
from schemawire.ui.server import LocalServer
from tests.mcp.helpers import peer
from tests.ui.tools_repo import calls_made, processes, tools_repo


@contextmanager
def serving(tmp_path: Path, repo: Path | None, **options: Any) -> Iterator[LocalServer]:
    config = UiConfig(traces=tmp_path / "traces", repo=repo, token="", **options)
    with LocalServer(config).running() as server:
        yield server


def get(server: LocalServer, path: str) -> Any:
    answer = httpx.get(server.base + path, headers={TOKEN_HEADER: server.config.token}, timeout=10)
    return answer.status_code, answer.json()


def call(server: LocalServer, tool: str, arguments: str, where: str = "local") -> list[Any]:
    """The call's stream, one JSON object a line."""
    answer = httpx.post(
        server.base + "/api/tools/call",
        headers={TOKEN_HEADER: server.config.token, "content-type": "application/json"},
        content=json.dumps({"tool": tool, "arguments": arguments, "where": where}),
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in answer.text.splitlines()]


def test_the_list_has_every_tool_with_its_file_and_version(tmp_path: Path) -> None:
    repo = tools_repo(tmp_path)
    with serving(tmp_path, repo) as server:
        status, body = get(server, "/api/tools")
    assert status == 200
    assert [t["name"] for t in body["tools"]] == ["create_refund", "get_weather", "ship_order"]
    ship = body["tools"][2]
    assert ship["version"] == "2.1.0"
    assert ship["file"] == "schemas/tools/ship_order.json"
    assert ship["implemented"] is True
    assert body["mcp"] is None


def test_without_a_repository_the_answer_says_how_to_give_one(tmp_path: Path) -> None:
    with serving(tmp_path, None) as server:
        status, body = get(server, "/api/tools")
        missing, error = get(server, "/api/tools/tool/get_weather")
    assert status == 200
    assert body["tools"] == []
    assert "schemawire ui --repo DIR" in body["hint"]
    assert missing == 404
    assert "--repo" in error["error"]["message"]


def test_each_projection_is_the_one_schemawire_export_computes(tmp_path: Path) -> None:
    repo = tools_repo(tmp_path)
    with serving(tmp_path, repo) as server:
        _, tool = get(server, "/api/tools/tool/create_refund")
    repository = Repository.load(repo)
    shown = {
        (p["target"], json.dumps(p["options"], sort_keys=True)): p for p in tool["projections"]
    }
    assert len(shown) == len(PROJECTIONS)
    for view in PROJECTIONS:
        made = export(repository, view.target, **view.options)
        [expected] = [p for p in made.catalogue.projections if p.name == "create_refund"]
        got = shown[(view.target, json.dumps(view.options, sort_keys=True))]
        assert json.loads(got["payload"]) == expected.payload, view.label
        assert got["losses"] == [loss.to_json() for loss in expected.losses], view.label
        assert got["command"] == made.command
    # every target `schemawire export --target all` writes for tools is among them
    tool_targets = {t for t in DEFAULT_OPTIONS if TARGETS[t].kinds == ("tools",)}
    assert tool_targets == {v.target for v in PROJECTIONS}
    form = json.loads(tool["form_schema"])
    assert form["properties"]["order_id"]["pattern"] == "^A-[0-9]{4,}$"  # the $ref inlined


def test_a_valid_local_call_streams_its_hops_and_writes_the_trace(tmp_path: Path) -> None:
    repo = tools_repo(tmp_path)
    arguments = '{"order_id": "A-1042", "address": {"street": "1 Rue", "city": "Paris"}, '
    arguments += '"items": [{"sku": "X1", "quantity": 2}]}'
    with serving(tmp_path, repo) as server:
        lines = call(server, "ship_order", arguments)
    start, *hops, end = lines
    assert [(h["hop"]["protocol"], h["hop"]["direction"]) for h in hops] == [
        ("gate", "check"),
        ("python", "send"),
        ("python", "receive"),
    ]
    assert hops[0]["hop"]["outcome"] == "accepted"
    done = end["done"]
    assert done["accepted"] is True
    assert done["sent"] is True
    assert [c["kind"] for c in done["changes"]] == ["redacted"]
    assert "ghp_" not in done["output"]
    assert calls_made(repo) == [
        {
            "tool": "ship_order",
            "arguments": {
                "order_id": "A-1042",
                "address": {"street": "1 Rue", "city": "Paris"},
                "items": [{"sku": "X1", "quantity": 2}],
            },
        }
    ]
    trace = Path(start["trace"])
    assert trace == tmp_path / "traces" / f"{start['run']}.jsonl"
    written = list(read_trace(trace))
    inside = [h for h in written if h.protocol != "span"]  # the stream leaves the span out
    assert [h.seq for h in inside] == [h["hop"]["seq"] for h in hops]
    assert [(h.direction, h.payload["kind"]) for h in written if h.protocol == "span"] == [
        ("start", "tool"),
        ("end", "tool"),
    ]
    assert all(h.run_id == start["run"] for h in written)


def test_a_refused_call_never_runs_the_function(tmp_path: Path) -> None:
    repo = tools_repo(tmp_path)
    with serving(tmp_path, repo) as server:
        lines = call(server, "create_refund", '{"order_id": "42", "amount": -1, "reason": "late"}')
    hops = [line["hop"] for line in lines[1:-1]]
    assert [(h["protocol"], h["outcome"]) for h in hops] == [("gate", "rejected")]
    done = lines[-1]["done"]
    assert done["accepted"] is False
    assert done["sent"] is False
    assert done["refused_by"] == "arguments"
    assert {v["pointer"] for v in done["violations"]} == {"/order_id", "/amount"}
    assert calls_made(repo) == []
    written = list(read_trace(Path(lines[0]["trace"])))
    assert written[-1].protocol == "span"
    assert written[-1].payload == {"kind": "tool", "status": "refused"}


def test_what_cannot_be_called_is_a_400_that_says_what_to_do(tmp_path: Path) -> None:
    repo = tools_repo(tmp_path)
    with serving(tmp_path, repo) as server:
        headers = {TOKEN_HEADER: server.config.token, "content-type": "application/json"}
        asked = {"tool": "get_weather", "arguments": "{}", "where": "mcp"}
        answer = httpx.post(server.base + "/api/tools/call", headers=headers, json=asked)
        unknown = {"tool": "nope", "arguments": "{}", "where": "local"}
        missing = httpx.post(server.base + "/api/tools/call", headers=headers, json=unknown)
    assert answer.status_code == 400
    assert "--mcp-url" in answer.json()["error"]["message"]
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == "tool_unknown"


def test_schemawire_ui_takes_an_mcp_server_by_url_or_by_command(
    monkeypatch: Any, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from schemawire.cli._app import app

    launched: list[UiConfig] = []

    def run(self: LocalServer) -> None:  # what would be served, not served
        launched.append(self.config)
        self._socket.close()

    monkeypatch.setattr(LocalServer, "run", run)
    runner = CliRunner()
    traces = str(tmp_path / "traces")
    stdio = runner.invoke(app, ["ui", "--traces", traces, "--", "python", "-m", "server", "-v"])
    assert stdio.exit_code == 0, stdio.output
    assert "MCP server (Tools page): python -m server -v" in stdio.output
    http = runner.invoke(app, ["ui", "--traces", traces, "--mcp-url", "http://127.0.0.1:9/mcp"])
    assert http.exit_code == 0, http.output
    assert [(c.mcp_command, c.mcp_url) for c in launched[:2]] == [
        (("python", "-m", "server", "-v"), None),
        ((), "http://127.0.0.1:9/mcp"),
    ]
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    keyed = runner.invoke(app, ["ui", "--traces", traces, "--", "env", f"KEY={secret}", "srv"])
    assert keyed.exit_code == 0, keyed.output
    assert secret not in keyed.output
    assert launched[-1].mcp_command == ("env", f"KEY={secret}", "srv")  # the server gets it
    both = runner.invoke(app, ["ui", "--mcp-url", "http://127.0.0.1:9/mcp", "--", "python"])
    assert both.exit_code == 2
    assert "one of them" in both.output


def test_the_stream_leaves_span_hops_to_the_trace_file(tmp_path: Path) -> None:
    import anyio

    from schemawire.types import Hop
    from schemawire.ui._tools_call import CallAsked, CallStream

    config = UiConfig(traces=tmp_path, repo=None, token="", call_timeout=1.0)

    async def streamed() -> list[Any]:
        stream = CallStream(config, None, CallAsked("echo", "{}", "mcp"))
        start = {"kind": "tool", "name": "echo", "parent": None}
        stream._on_hop(Hop("r", 1, 1.0, "host", "host", "span", "start", start, None))
        stream._on_hop(Hop("r", 2, 1.0, "host", "mcp:x", "mcp", "send", {"method": "ping"}, None))
        stream._send.close()  # the call's task ends without an outcome
        return [json.loads(line) async for line in stream.lines()]

    with ThreadPoolExecutor(1) as thread:  # a thread of its own: Playwright's loop may run here
        lines = thread.submit(anyio.run, streamed).result(timeout=10)
    assert [line["hop"]["seq"] for line in lines if "hop" in line] == [2]
    assert "no answer" in lines[-1]["done"]["error"]


def mcp_methods(line: dict[str, Any]) -> str | None:
    """A streamed hop's JSON-RPC method, for the MCP hops that are requests."""
    hop = line.get("hop") or {}
    return hop.get("method") if hop.get("protocol") == "mcp" else None


def test_mcp_calls_share_one_server_session_and_reconnect_once_it_died(tmp_path: Path) -> None:
    """One server process for every call (the handshake only in the first call's trace);
    a server that dies is started again by the next call."""
    repo = tools_repo(tmp_path)
    command = (sys.executable, "-m", "schemawire", "serve", str(repo))
    with serving(tmp_path, repo, mcp_command=command) as server:
        first = call(server, "get_weather", '{"city": "Paris"}', "mcp")
        listed = get(server, "/api/tools")[1]  # the list and the calls share the session
        began = time.monotonic()
        second = call(server, "get_weather", '{"city": "Taipei"}', "mcp")
        second_took = time.monotonic() - began
        crashed = call(server, "get_weather", '{"city": "EXIT"}', "mcp")
        again = call(server, "get_weather", '{"city": "Lyon"}', "mcp")
    assert first[-1]["done"]["accepted"] is True
    first_methods = [m for m in map(mcp_methods, first) if m]
    assert first_methods[-1] == "tools/call"
    assert len(first_methods) > 1  # the handshake (and the tools' list) came first
    assert [m for m in map(mcp_methods, second) if m] == ["tools/call"]
    assert second[-1]["done"]["accepted"] is True
    assert second_took < 1.5, second_took  # no server started: one round trip
    assert [t["name"] for t in listed["tools"]] == ["create_refund", "get_weather", "ship_order"]
    assert crashed[-1]["done"]["accepted"] is False  # the server went away mid-call
    assert again[-1]["done"]["accepted"] is True
    assert [m for m in map(mcp_methods, again) if m][-1] == "tools/call"
    ran = processes(repo)
    assert len(ran) == 3
    assert ran[0] == ran[1] != ran[2]  # the same process twice; a new one after the crash
    written = [h.protocol for h in read_trace(Path(second[0]["trace"]))]
    assert written.count("mcp") == 2  # the call and its answer: no handshake in this trace


def test_the_mcp_session_is_closed_when_the_page_stops(tmp_path: Path) -> None:
    repo = tools_repo(tmp_path)
    command = (sys.executable, "-m", "schemawire", "serve", str(repo))
    with serving(tmp_path, repo, mcp_command=command) as server:
        assert call(server, "get_weather", '{"city": "Paris"}', "mcp")[-1]["done"]["accepted"]
        [pid] = processes(repo)
        assert _alive(pid)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/status").read_text().find("zombie") < 0


def test_with_a_repository_the_servers_own_tools_are_listed_as_server_only(
    tmp_path: Path,
) -> None:
    """The npm reference server ``everything`` beside the support desk: its tools, which the
    repository does not have, are listed, shown and called, each marked server-only."""
    repo = tools_repo(tmp_path)
    everything = peer("everything", "stdio")
    command = (everything.command, *everything.args)
    with serving(tmp_path, repo, mcp_command=command) as server:
        status, listed = get(server, "/api/tools")
        shown_status, echo = get(server, "/api/tools/tool/echo")
        lines = call(server, "echo", '{"message": "hi"}', "mcp")
        local = httpx.post(
            server.base + "/api/tools/call",
            headers={TOKEN_HEADER: server.config.token, "content-type": "application/json"},
            json={"tool": "echo", "arguments": "{}", "where": "local"},
        )
    assert status == 200
    by_name = {t["name"]: t for t in listed["tools"]}
    assert {"create_refund", "get_weather", "ship_order", "echo"} <= set(by_name)
    assert by_name["echo"]["server_only"] is True
    assert by_name["echo"]["source"] == "mcp"
    assert "server_only" not in by_name["ship_order"]
    assert [t["name"] for t in listed["tools"]] == sorted(by_name)
    assert shown_status == 200
    assert echo["server_only"] is True
    assert len(echo["projections"]) == len(PROJECTIONS)
    assert lines[-1]["done"]["accepted"] is True
    assert local.status_code == 400
    assert local.json()["error"]["code"] == "tool_unknown"


def test_a_request_that_is_not_json_or_is_ambiguous_is_a_400(tmp_path: Path) -> None:
    repo = tools_repo(tmp_path)
    headers = {"content-type": "application/json"}
    with serving(tmp_path, repo) as server:
        headers[TOKEN_HEADER] = server.config.token
        ambiguous = '{"tool": "get_weather", "tool": "create_refund", "arguments": "{}", '
        ambiguous += '"where": "local"}'
        answers = [
            httpx.post(server.base + "/api/tools/call", headers=headers, content=body)
            for body in ("{nope", ambiguous)
        ]
    assert [a.status_code for a in answers] == [400, 400]
    assert all(a.json()["error"]["code"] == "bad_request" for a in answers)
    assert "duplicate" in answers[1].json()["error"]["message"].lower()
    assert calls_made(repo) == []


def test_the_servers_label_reaches_the_page_redacted(tmp_path: Path) -> None:
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    command = ("env", f"OPENAI_API_KEY={secret}", sys.executable, "-m", "schemawire", "serve")
    with serving(tmp_path, tools_repo(tmp_path), mcp_command=command) as server:
        answer = httpx.get(
            server.base + "/api/tools", headers={TOKEN_HEADER: server.config.token}, timeout=60
        )
    assert secret not in answer.text
    assert "env" in answer.json()["mcp"]["label"]


def test_concurrent_mcp_calls_each_keep_to_their_own_trace(tmp_path: Path) -> None:
    """Two calls at once on the one session: both answered, each trace holding its own call
    (the session is used by one call at a time)."""
    repo = tools_repo(tmp_path)
    command = (sys.executable, "-m", "schemawire", "serve", str(repo))
    cities = ["Paris", "Taipei", "Lyon", "Quito"]
    with (
        serving(tmp_path, repo, mcp_command=command) as server,
        ThreadPoolExecutor(len(cities)) as pool,
    ):
        asked = [
            pool.submit(call, server, "get_weather", json.dumps({"city": c}), "mcp") for c in cities
        ]
        answers = [a.result(timeout=120) for a in asked]
    for city, lines in zip(cities, answers, strict=True):
        assert lines[-1]["done"]["accepted"] is True, lines[-1]
        hops = list(read_trace(Path(lines[0]["trace"])))
        sent = [h.payload for h in hops if h.protocol == "mcp" and h.direction == "send"]
        calls = [p for p in sent if p.get("method") == "tools/call"]
        assert [p["params"]["arguments"]["city"] for p in calls] == [city]
        assert {h.run_id for h in hops} == {lines[0]["run"]}
    assert len(set(processes(repo))) == 1


def test_a_body_without_end_is_refused_after_the_limit() -> None:
    """A call's body is read up to its limit, never further: a client that streams without
    end costs the page about the limit, not all it sends (the old code read it all)."""
    import anyio
    from starlette.requests import Request

    from schemawire.ui._tools import _MAX_ARGUMENTS, _bounded_body

    pulled = 0

    async def receive() -> dict[str, Any]:  # what uvicorn hands the app: chunk after chunk
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": b" " * (1 << 16), "more_body": pulled < 4096}

    scope = {"type": "http", "method": "POST", "headers": [], "path": "/api/tools/call"}

    async def read() -> bytes | None:
        return await _bounded_body(Request(scope, receive), _MAX_ARGUMENTS)

    with ThreadPoolExecutor(1) as thread:  # a thread of its own: Playwright's loop may run here
        body = thread.submit(anyio.run, read).result(timeout=10)
    assert body is None
    assert pulled * (1 << 16) <= _MAX_ARGUMENTS + (1 << 16)


def test_the_form_of_a_schema_without_id_inlines_its_own_definitions() -> None:
    """An MCP server's schema (no ``$id``, in no repository) that points into its own
    ``$defs``: the form gets the definitions, not raw-JSON fields."""
    from schemawire.ui._tools_form import form_schema

    schema = {
        "type": "object",
        "$defs": {"unit": {"type": "string", "enum": ["c", "f"]}},
        "properties": {"unit": {"$ref": "#/$defs/unit", "description": "Degrees."}},
    }
    form = form_schema(schema, {})
    assert form["properties"]["unit"] == {
        "type": "string",
        "enum": ["c", "f"],
        "description": "Degrees.",
    }


def test_a_server_that_cannot_start_leaves_the_page_working(tmp_path: Path) -> None:
    """A server whose process exits at once: the list has the repository's tools and says why
    the server's are missing, each try is answered (none hangs), and local calls still run."""
    repo = tools_repo(tmp_path)
    command = (sys.executable, "-c", "raise SystemExit(3)")
    with serving(tmp_path, repo, mcp_command=command) as server:
        answers = [get(server, "/api/tools") for _ in range(2)]
        on_server = call(server, "get_weather", '{"city": "Paris"}', "mcp")
        local = call(server, "get_weather", '{"city": "Paris"}')
    for status, listed in answers:
        assert status == 200
        assert [t["name"] for t in listed["tools"]] == [
            "create_refund",
            "get_weather",
            "ship_order",
        ]
        assert listed["mcp_problem"]
    assert "MCP server" in on_server[-1]["done"]["error"]
    assert local[-1]["done"]["accepted"] is True
