"""Capture the real ``tools/list`` results of three MCP reference servers as test data.

A developer tool, run by hand from the repository root, never by the tests::

    .venv/bin/python tests/data/mcp-tools/capture.py

Each server is started over stdio from ``tests/peers/node_modules/.bin`` (``npm ci`` there
first) and spoken to with the official SDK: ``ClientSession``, the classic ``initialize``
handshake, then ``tools/list`` page by page. The JSON-RPC results are copied off the transport
streams, so ``<server>.json`` is the result exactly as it came over the wire (pages merged into
one ``tools`` list). The temporary paths the servers are given are replaced by placeholders
(``<allowed-dir>``, ``<memory-file>``); where the data came from goes to ``PROVENANCE.json``.
Nothing is written unless all three servers answer.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCRequest, JSONRPCResponse, PaginatedRequestParams, RequestId

from schemawire.application.json_toolbox import format_json

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PEERS = ROOT / "tests" / "peers"
TIMEOUT_SECONDS = 30.0  # start, handshake and every page of one server; each takes well under 1 s
PLACEHOLDERS = {
    "<allowed-dir>": "the temporary directory given to server-filesystem as its allowed directory",
    "<memory-file>": "the temporary MEMORY_FILE_PATH given to server-memory",
}


class CaptureError(Exception):
    """A server could not be captured; the message says which and why."""


@dataclass(frozen=True)
class Server:
    """One reference server: the name its data is saved under, and how to start it."""

    name: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def package(self) -> str:
        return f"@modelcontextprotocol/server-{self.name}"

    @property
    def command(self) -> Path:
        return PEERS / "node_modules" / ".bin" / f"mcp-server-{self.name}"


def plan(scratch: Path) -> tuple[list[Server], dict[str, str]]:
    """The servers to start inside ``scratch``, and each machine path mapped to its placeholder.

    Longest paths come first, so a path is never half-replaced by one that it contains.
    """
    allowed, memory = scratch / "allowed", scratch / "memory.jsonl"
    allowed.mkdir()
    servers = [
        Server("everything", ("stdio",)),
        Server("filesystem", (str(allowed),)),
        Server("memory", env={"MEMORY_FILE_PATH": str(memory)}),
    ]
    # server-filesystem resolves symlinks, so the real path may show up instead.
    paths = {str(allowed): "<allowed-dir>", str(memory): "<memory-file>"}
    paths |= {os.path.realpath(path): name for path, name in paths.items()}
    return servers, dict(sorted(paths.items(), key=lambda item: -len(item[0])))


class ResultTap:
    """Keeps a copy of each JSON-RPC request's params and raw result, by method, in wire order."""

    def __init__(self) -> None:
        self._pending: dict[RequestId, str] = {}
        self.params: dict[str, dict[str, Any] | None] = {}
        self.results: dict[str, list[dict[str, Any]]] = {}

    def sent(self, item: SessionMessage) -> None:
        if isinstance(item.message, JSONRPCRequest):
            self._pending[item.message.id] = item.message.method
            self.params.setdefault(item.message.method, copy.deepcopy(item.message.params))

    def received(self, item: SessionMessage | Exception) -> None:
        if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCResponse):
            method = self._pending.pop(item.message.id, None)
            if method is not None:
                # A copy: the session may adjust the dict it is handed.
                self.results.setdefault(method, []).append(copy.deepcopy(item.message.result))


async def forward(source: Any, sink: Any, note: Callable[[Any], None]) -> None:
    """Passes every item from ``source`` to ``sink``, showing each to ``note`` first."""
    # Either side may close first when the session ends; that ends the forwarding, nothing more.
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        async with sink:
            async for item in source:
                note(item)
                await sink.send(item)


@asynccontextmanager
async def tapped(
    read: Any, write: Any, tap: ResultTap
) -> AsyncIterator[tuple[ObjectReceiveStream[Any], ObjectSendStream[SessionMessage]]]:
    """A stream pair for the session that forwards to ``(read, write)`` through ``tap``."""
    to_session, session_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    session_write, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    async with (
        to_session,
        session_read,
        session_write,
        from_session,
        anyio.create_task_group() as group,
    ):
        group.start_soon(forward, read, to_session, tap.received)
        group.start_soon(forward, from_session, write, tap.sent)
        try:
            yield session_read, session_write
        finally:
            group.cancel_scope.cancel()


async def capture(server: Server, errlog: Path) -> ResultTap:
    """Starts ``server``, shakes hands and lists every tool; the server's stderr goes to ``errlog``.

    Raises:
        TimeoutError: the whole exchange took longer than ``TIMEOUT_SECONDS``.
    """
    parameters = StdioServerParameters(
        command=str(server.command), args=list(server.args), env=server.env
    )
    tap = ResultTap()
    with errlog.open("w", encoding="utf-8") as stderr, anyio.fail_after(TIMEOUT_SECONDS):
        async with (
            stdio_client(parameters, errlog=stderr) as (read, write),
            tapped(read, write, tap) as streams,
            ClientSession(*streams) as session,
        ):
            await session.initialize()
            page = await session.list_tools()
            while page.next_cursor is not None:
                cursor = PaginatedRequestParams(cursor=page.next_cursor)
                page = await session.list_tools(params=cursor)
    return tap


async def capture_or_explain(server: Server, scratch: Path) -> ResultTap:
    """:func:`capture`, with every way a server can fail turned into one clear ``CaptureError``."""
    if not server.command.exists():
        raise CaptureError(
            f"{server.command} is missing: run `npm ci --no-audit --no-fund` in {PEERS}"
        )
    errlog = scratch / f"{server.name}.stderr"
    try:
        return await capture(server, errlog)
    except* (OSError, MCPError, RuntimeError) as group:  # OSError includes TimeoutError
        cause = first_leaf(group)
        why = f"silent for {TIMEOUT_SECONDS:g} s" if isinstance(cause, TimeoutError) else cause
        stderr = errlog.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise CaptureError(
            f"{server.package} did not start or answer: {why!s}\n--- its stderr ---\n{stderr}"
        ) from cause


def first_leaf(error: BaseException) -> BaseException:
    """The first exception that is not a group, however deep the task groups nested it."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def tools_list(tap: ResultTap, paths: dict[str, str]) -> dict[str, Any]:
    """The ``tools/list`` result as on the wire: pages merged, machine paths replaced."""
    pages = tap.results["tools/list"]
    merged = {**pages[0], "tools": [tool for page in pages for tool in page["tools"]]}
    merged.pop("nextCursor", None)
    return redact(merged, paths)


def redact(value: Any, paths: dict[str, str]) -> Any:
    """``value`` with every machine path inside its strings replaced by its placeholder."""
    if isinstance(value, str):
        for path, placeholder in paths.items():
            value = value.replace(path, placeholder)
        return value
    if isinstance(value, list):
        return [redact(item, paths) for item in value]
    if isinstance(value, dict):
        return {key: redact(item, paths) for key, item in value.items()}
    return value


def locked_version(package: str) -> str:
    """The exact version of ``package`` that ``tests/peers/package-lock.json`` pins."""
    lock = json.loads((PEERS / "package-lock.json").read_text(encoding="utf-8"))
    pinned: str = lock["packages"][f"node_modules/{package}"]["version"]
    return pinned


def provenance(server: Server, tap: ResultTap) -> dict[str, Any]:
    """Which package and version answered, and what it said about itself in ``initialize``."""
    initialized = tap.results["initialize"][0]
    return {
        "package": server.package,
        "version": locked_version(server.package),
        "serverInfo": initialized["serverInfo"],
        "protocolVersion": initialized["protocolVersion"],
    }


async def capture_all(scratch: Path) -> dict[str, str]:
    """Every file to write, by name, once all three servers have answered."""
    servers, paths = plan(scratch)
    taps = {server.name: await capture_or_explain(server, scratch) for server in servers}
    files = {f"{name}.json": as_json(tools_list(tap, paths)) for name, tap in taps.items()}
    machine_paths = (str(scratch), os.path.realpath(scratch), str(ROOT))
    for name, text in files.items():
        if any(path in text for path in machine_paths):
            raise CaptureError(f"{name} still names a path of this machine; add a placeholder")
    files["PROVENANCE.json"] = as_json(
        {
            "capturedOn": datetime.now(UTC).date().isoformat(),
            "client": {
                "package": "mcp",
                "version": version("mcp"),
                "initializeParams": taps[servers[0].name].params["initialize"],
            },
            "placeholders": PLACEHOLDERS,
            "servers": {server.name: provenance(server, taps[server.name]) for server in servers},
        }
    )
    return files


def as_json(value: Any) -> str:
    """``value`` in the project's own format (``schemawire fmt``), ending with a newline."""
    return format_json(json.dumps(value))


def main() -> int:
    """Captures all three servers, then writes the files; 1 with a message if one fails."""
    with tempfile.TemporaryDirectory(prefix="mcp-tools-") as scratch:
        try:
            files = anyio.run(capture_all, Path(scratch))
        except CaptureError as error:
            print(f"capture.py: {error}", file=sys.stderr)
            return 1
    for name, text in files.items():
        (HERE / name).write_text(text, encoding="utf-8")
        if name != "PROVENANCE.json":
            tools = json.loads(text)["tools"]
            typed = sum("outputSchema" in tool for tool in tools)
            print(f"{name}: {len(tools)} tools, {typed} with outputSchema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
