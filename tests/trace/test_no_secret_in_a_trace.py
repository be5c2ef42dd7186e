"""No secret reaches a trace file: each secret of the redaction corpus (tests/data/secrets.json)
is planted in each place a hop takes text from, through the real paths, the trace is written to
a file, and the file's bytes are searched for every planted secret."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemawire.gates import ArgumentGate, Verdict
from schemawire.host.tools import PythonTool
from schemawire.mcp import HttpServer, McpClient, StdioServer
from schemawire.mcp._http import HttpOptions, http_app, running
from schemawire.mcp.server import LocalTools, build_server
from schemawire.schema.repository import Repository
from schemawire.trace import Trace, record_verdicts
from schemawire.types import ToolSpec
from tests.helpers import WriteRepo, tool_schema
from tests.mcp.helpers import SCRIPTED

CORPUS = json.loads((Path(__file__).parents[1] / "data" / "secrets.json").read_text("utf-8"))
CASES: list[dict[str, str]] = CORPUS["secrets"]
URL_PASSWORDS = [case["secret"] for case in CASES if case["kind"] == "url_password"]

SPEC = ToolSpec("lookup", tool_schema("lookup"))  # {"city": string}, nothing else

# A stdio MCP server that answers the handshake and the tool list, then, called, writes its last
# words (LAST_WORDS) on stderr and a line that is not JSON-RPC on stdout, and exits.
LAST_WORDS = """
import json, os, sys
for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        continue
    if method == "tools/call":
        words = os.environ["LAST_WORDS"]
        sys.stderr.write(words + "\\n")
        sys.stderr.flush()
        sys.stdout.write("not json-rpc: " + words.replace("\\n", " ") + "\\n")
        sys.stdout.flush()
        os._exit(1)
    result = {"tools": [{"name": "speak", "inputSchema": {"type": "object"}}]}
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "last-words", "version": "1"}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\\n")
    sys.stdout.flush()
"""


def leaks(path: Path, secrets: list[str]) -> list[str]:
    """The secrets whose text is in the file (each as its first 24 characters)."""
    written = path.read_bytes().decode("utf-8")
    assert written, "nothing was traced: a check that checked nothing"
    return [secret[:24] for secret in secrets if secret in written]


def all_secrets() -> list[str]:
    return [case["secret"] for case in CASES]


def test_refused_arguments_keep_no_secret(tmp_path: Path) -> None:
    gate = ArgumentGate(SPEC)
    with Trace(path=tmp_path / "t.jsonl") as trace:
        for case in CASES:
            record_verdicts(trace, "host", gate.check({"city": 5, "note": case["text"]}))
            record_verdicts(trace, "host", gate.check({"city": [case["text"]]}))
    assert leaks(tmp_path / "t.jsonl", all_secrets()) == []


def test_refused_arguments_whose_keys_are_secrets_keep_no_secret(tmp_path: Path) -> None:
    gate = ArgumentGate(SPEC)
    with Trace(path=tmp_path / "t.jsonl") as trace:
        for case in CASES:
            record_verdicts(trace, "host", gate.check({"city": "Oslo", case["text"]: 1}))
            trace.record("host", "tool", "python", "send", {"nested": {case["text"]: 1}})
    assert leaks(tmp_path / "t.jsonl", all_secrets()) == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_tools_exception_keeps_no_secret(tmp_path: Path, anyio_backend: str) -> None:
    def lookup(city: str) -> dict[str, Any]:
        raise RuntimeError(f"connect failed: {city}")  # docs/gates.md's postgres://app:...@db

    tool = PythonTool(SPEC, lookup)
    with Trace(path=tmp_path / "t.jsonl") as trace:
        for number, case in enumerate(CASES):
            accepted = Verdict.accept(gate="arguments", tool="lookup", value={"city": case["text"]})
            await tool.run(f"call-{number}", accepted, trace)
    assert leaks(tmp_path / "t.jsonl", all_secrets()) == []


def in_batches(cases: list[dict[str, str]], size: int) -> Iterator[list[dict[str, str]]]:
    for start in range(0, len(cases), size):
        yield cases[start : start + size]


async def each(cases: list[dict[str, str]], run: Callable[[dict[str, str]], Any]) -> None:
    """``run`` for every case, a few at a time (each starts a server)."""
    with anyio.fail_after(300):
        for batch in in_batches(cases, 8):
            async with anyio.create_task_group() as group:
                for case in batch:
                    group.start_soon(run, case)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_servers_command_line_keeps_no_secret(tmp_path: Path, anyio_backend: str) -> None:
    """``-- env OPENAI_API_KEY=sk-... cmd``: the command line names every hop of the server."""
    with Trace(path=tmp_path / "t.jsonl") as trace:

        async def run(case: dict[str, str]) -> None:
            argv = ["env", f"SECRET={case['text']}", sys.executable, str(SCRIPTED)]
            async with McpClient(StdioServer.from_argv(argv), trace=trace) as client:
                await client.call("echo", {"message": "hi"})

        await each(CASES, run)
    assert leaks(tmp_path / "t.jsonl", all_secrets()) == []


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_servers_last_words_keep_no_secret(tmp_path: Path, anyio_backend: str) -> None:
    """What a dying server writes on stderr, and a line of its that is not JSON-RPC, are
    quoted in the ``tool_failed`` verdict."""
    with Trace(path=tmp_path / "t.jsonl") as trace:

        async def run(case: dict[str, str]) -> None:
            env = {"LAST_WORDS": case["text"]}
            server = StdioServer(sys.executable, ("-c", LAST_WORDS), env, name="last-words")
            async with McpClient(server, trace=trace) as client:
                call = await client.call("speak", {})
                assert call.argument_verdict.rejection is not None or call.result is not None

        await each(CASES, run)
    assert leaks(tmp_path / "t.jsonl", all_secrets()) == []


@asynccontextmanager
async def serving(repository: Repository) -> AsyncIterator[int]:
    server = build_server(
        LocalTools(repository, {"lookup": lambda city: {"city": city}}),
        name="lookup",
        version="1.0.0",
        trace=Trace(keep=False),
    )
    options = HttpOptions(port=0)
    async with running(http_app(server, options), options) as listening:
        yield listening.port


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_servers_url_keeps_no_password(
    write_repo: WriteRepo, tmp_path: Path, anyio_backend: str
) -> None:
    """``--url http://app:PW@127.0.0.1:P/mcp``: the URL names every hop of the server."""
    repository = Repository.load(write_repo({"schemas/tools/lookup.json": tool_schema("lookup")}))
    with Trace(path=tmp_path / "t.jsonl") as trace:
        async with serving(repository) as port:
            for password in URL_PASSWORDS:
                url = f"http://app:{password}@127.0.0.1:{port}/mcp"
                async with McpClient(HttpServer(url), trace=trace) as client:
                    await client.call("lookup", {"city": "Oslo"})
    assert leaks(tmp_path / "t.jsonl", URL_PASSWORDS) == []
