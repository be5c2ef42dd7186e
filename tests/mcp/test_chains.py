"""What crosses chains of our server, proxies and client: a rejection arrives whole, and results
that are not objects arrive as the canonical schema says, whatever each hop's protocol version.

Every server here is real: `schemawire serve` as a process, the same server and the gating proxy
over Streamable HTTP on 127.0.0.1, and the official SDK's `MCPServer` (`servers/sdk_values.py`).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import Client

from schemawire.gates import ArgumentGate, ResultGate, ResultOptions
from schemawire.host import Host, ScriptedModel, mcp_tools
from schemawire.mcp import HttpServer, McpClient, StdioServer
from schemawire.mcp.launch import ServeOptions, gated_server
from schemawire.mcp.server import LocalTools, build_server
from schemawire.schema.repository import Repository
from schemawire.schema.validator import compile_schema
from schemawire.trace import Trace
from tests.helpers import EXAMPLES, WriteRepo, tool_schema
from tests.host.chat_script import calls, says, tool_messages
from tests.mcp.helpers import numbers, raw_call, sdk_client, serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DESK = EXAMPLES / "support-desk"
REFUND = {"order_id": "A-1042", "amount": 5, "reason": "late"}
WRONG_SHAPE = {"status": "ok"}
REJECTION_SCHEMA = Path(__file__).parents[2] / "src/schemawire/gates/rejection.schema.json"
is_rejection = compile_schema(json.loads(REJECTION_SCHEMA.read_text())).is_valid


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    """A repository with no schemas: a proxy of it gates with the upstream's own."""
    root = tmp_path / "empty"
    root.mkdir()
    return root


def the_servers_rejection() -> dict[str, Any]:
    """What the support desk's own result gate says of a refund of the wrong shape."""
    verdict = ResultGate.from_repository(Repository.load(DESK), "create_refund").check(WRONG_SHAPE)
    assert verdict.rejection is not None
    shown: dict[str, Any] = verdict.value.content
    return shown


def wrong_refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
    return WRONG_SHAPE


def weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    return {"city": city, "temp_c": 11.5, "condition": "cloudy"}


@asynccontextmanager
async def desk_server(trace: Trace) -> AsyncIterator[str]:
    """The support desk served over HTTP, its create_refund returning the wrong shape."""
    tools = LocalTools(
        Repository.load(DESK), {"create_refund": wrong_refund, "get_weather": weather}
    )
    async with serving(build_server(tools, name="desk", version="1.0.0", trace=trace)) as url:
        yield url


@asynccontextmanager
async def proxy_of(url: str, root: Path, trace: Trace) -> AsyncIterator[str]:
    """The gating proxy (repository ``root``) in front of the server at ``url``, over HTTP."""
    options = ServeOptions(upstream=HttpServer(url), timeout=10)
    async with gated_server(Repository.load(root), options, trace) as server, serving(server) as at:
        yield at


# --- a rejection arrives whole ------------------------------------------------------------------


async def test_a_rejection_from_schemawire_serve_reaches_the_client_whole(tmp_path: Path) -> None:
    # The reproduction: the example, with create_refund returning {"status": "ok"}.
    desk = tmp_path / "desk"
    shutil.copytree(DESK, desk)
    code = desk / "implementations.py"
    code.write_text(
        code.read_text().replace("    return refund\n", "    return {'status': 'ok'}\n")
    )
    async with McpClient(StdioServer(SCHEMAWIRE, ("serve", str(desk)))) as client:
        call = await client.call("create_refund", REFUND)
    assert call.output.content["error"]["code"] == "result_invalid"
    assert call.output.content == the_servers_rejection()
    assert call.output.is_error
    assert call.rejection is not None
    assert call.rejection.code == "result_invalid"


@pytest.mark.parametrize("hops", [0, 1, 2], ids=["direct", "one proxy", "two proxies"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_rejection_crosses_any_chain_of_proxies_whole(
    hops: int, mode: Any, empty: Path
) -> None:
    # The proxies hold no repository (the first) and the desk's canonical schemas (the second).
    roots = [empty, DESK]
    trace = Trace()
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(desk_server(trace))
        for root in roots[:hops]:
            url = await stack.enter_async_context(proxy_of(url, root, trace))
        client = await stack.enter_async_context(McpClient(HttpServer(url), mode=mode))
        call = await client.call("create_refund", REFUND)
    assert call.output.content["error"]["code"] == "result_invalid"
    assert call.output.content == the_servers_rejection()
    assert call.rejection is not None
    assert call.rejection.code == "result_invalid"


async def test_a_rejection_by_the_servers_argument_gate_crosses_a_proxy_whole(
    write_repo: WriteRepo,
) -> None:
    # The client's and the proxy's repository take any refund; the server's refuses this one.
    loose = write_repo(
        {
            "schemas/tools/create_refund.json": tool_schema(
                "create_refund", properties={}, required=None, additionalProperties=None
            )
        }
    )
    bad = {**REFUND, "amount": -5}
    original = ArgumentGate.from_repository(Repository.load(DESK), "create_refund").check(bad)
    assert original.rejection is not None
    trace = Trace()
    async with (
        desk_server(trace) as url,
        proxy_of(url, loose, trace) as proxied,
        McpClient(HttpServer(proxied), repository=Repository.load(loose)) as client,
    ):
        call = await client.call("create_refund", bad)
    assert call.sent
    assert call.output.content["error"]["code"] == "arguments_invalid"
    assert call.output.content == original.rejection.to_json()
    assert call.rejection is not None
    assert call.rejection.gate == "arguments"


async def test_a_rejection_over_the_clients_budget_stays_a_rejection() -> None:
    trace = Trace()
    async with (
        desk_server(trace) as url,
        McpClient(HttpServer(url), result_options=ResultOptions(max_bytes=600)) as client,
    ):
        call = await client.call("create_refund", REFUND)
    shown = call.output.content
    assert is_rejection(shown), shown
    assert len(orjson.dumps(shown)) <= 600
    error = shown["error"]
    original = the_servers_rejection()["error"]
    assert error["code"] == "result_invalid"
    assert error["violations"] == original["violations"][: len(error["violations"])]
    assert error["violations_omitted"] == len(original["violations"]) - len(error["violations"])


async def test_what_the_model_reads_through_the_host_is_the_servers_rejection() -> None:
    script = [calls(("c1", "create_refund", REFUND)), says("I could not file it.")]
    model = ScriptedModel("openai.chat", script, name="m")
    trace = Trace()
    desk = Repository.load(DESK)
    async with desk_server(trace) as url, McpClient(HttpServer(url), repository=desk) as client:
        host = Host(model, await mcp_tools(client), trace=trace)
        with anyio.fail_after(30):
            result = await host.run("Refund order A-1042: it came late.")
    assert result.answer == "I could not file it."
    read = json.loads(tool_messages(model.requests[1])["c1"])
    assert read == the_servers_rejection()
    assert read["error"]["code"] == "result_invalid"


# --- results that are not objects ---------------------------------------------------------------


def numbers_repository(write_repo: WriteRepo) -> Repository:
    """Canonical schemas for the SDK server's tools: the outputs are an array and an integer."""
    primes = tool_schema("primes", properties={"limit": {"type": "integer"}}, required=["limit"])
    count = tool_schema("count", properties={"word": {"type": "string"}}, required=["word"])

    def output(name: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "x-version": "1.0.0",
            "$id": f"https://example.com/schemas/tools/{name}.output.json",
            **schema,
        }

    return Repository.load(
        write_repo(
            {
                "schemas/tools/primes.json": primes,
                "schemas/tools/count.json": count,
                "schemas/tools/primes.output.json": output(
                    "primes", {"type": "array", "items": {"type": "integer"}}
                ),
                "schemas/tools/count.output.json": output("count", {"type": "integer"}),
            }
        )
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_client_unwraps_what_an_sdk_server_wraps(
    mode: Any, write_repo: WriteRepo
) -> None:
    repository = numbers_repository(write_repo)
    async with McpClient(numbers(), repository=repository, mode=mode) as client:
        primes = await client.call("primes", {"limit": 10})
        count = await client.call("count", {"word": "schema"})
    assert primes.accepted, primes.rejection
    assert (primes.output.structured, primes.result.conforms) == ([2, 3, 5, 7], True)
    assert count.accepted, count.rejection
    assert count.output.structured == 6


async def test_the_proxy_wraps_what_it_lists_for_each_protocol_version(
    write_repo: WriteRepo,
) -> None:
    repository = numbers_repository(write_repo)
    options = ServeOptions(upstream=numbers(), timeout=10)
    async with gated_server(repository, options, Trace()) as server, serving(server) as url:
        seen = {}
        for mode in ("legacy", "auto"):
            async with McpClient(HttpServer(url), mode=mode) as client:
                (listed,) = [t.listed for t in await client.list_tools() if t.name == "primes"]
                version = client.protocol_version
            async with sdk_client(url, mode=mode) as raw_client:
                await raw_client.list_tools()
                raw = await raw_call(raw_client, "primes", {"limit": 10})
            seen[version] = (listed["outputSchema"], raw["structuredContent"])
        # The official SDK's client checks structuredContent against the listed outputSchema.
        async with Client(url, mode="legacy") as sdk:
            checked = await sdk.call_tool("primes", {"limit": 10})
    (old_schema, old_result), (new_schema, new_result) = seen["2025-11-25"], seen["2026-07-28"]
    assert (old_schema["type"], old_schema["required"]) == ("object", ["result"])
    assert old_schema["properties"]["result"]["type"] == "array"
    assert old_result == {"result": [2, 3, 5, 7]}
    assert (new_schema["type"], new_result) == ("array", [2, 3, 5, 7])
    assert checked.structured_content == {"result": [2, 3, 5, 7]}
    assert not checked.is_error


def four_primes(limit: int) -> list[int]:
    return [2, 3, 5, 7]


async def test_a_proxy_without_the_schema_wraps_an_upstreams_list_for_older_clients(
    write_repo: WriteRepo, empty: Path
) -> None:
    # Our server lists an array output as it is to a 2026-07-28 client (the proxy's own
    # connection); the proxy's 2025-11-25 clients must get it wrapped.
    tools = LocalTools(numbers_repository(write_repo), {"primes": four_primes})
    trace = Trace()
    async with (
        serving(build_server(tools, name="primes", version="1.0.0", trace=trace)) as upstream,
        proxy_of(upstream, empty, trace) as url,
        Client(url, mode="legacy") as sdk,
    ):
        listed = {tool.name: tool for tool in (await sdk.list_tools()).tools}
        checked = await sdk.call_tool("primes", {"limit": 10})
    assert listed["primes"].output_schema is not None
    assert listed["primes"].output_schema["properties"]["result"]["type"] == "array"
    assert checked.structured_content == {"result": [2, 3, 5, 7]}
