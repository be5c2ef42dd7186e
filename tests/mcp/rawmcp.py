"""A raw JSON-RPC client for the hostile tests: it sends exactly the bytes a test gives, which no
SDK client would (duplicate keys, bodies of megabytes), over Streamable HTTP or a stdio pipe."""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.abc
import httpx2

ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def tool_call(request_id: int, name: str, arguments: str) -> bytes:
    """A ``tools/call`` request whose ``arguments`` is the JSON text given, as it is."""
    params = f'{{"name": {json.dumps(name)}, "arguments": {arguments}}}'
    head = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call"'
    return f'{head}, "params": {params}}}'.encode()


def answer(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response: its JSON body, or its one server-sent event."""
    if response.headers.get("content-type", "").startswith("application/json"):
        parsed: dict[str, Any] = response.json()
        return parsed
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            found: dict[str, Any] = json.loads(line[5:])
            if "id" in found:
                return found
    raise AssertionError(f"no JSON-RPC answer in {response.text[:200]!r}")


class HttpSession:
    """One Streamable HTTP session opened by hand: ``post`` sends raw bytes within it."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.headers = dict(ACCEPT)

    async def open(self) -> HttpSession:
        opened = await self.http.post(self.url, json=INITIALIZE, headers=self.headers)
        assert opened.status_code == 200, opened.text
        self.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = "2025-11-25"
        done = await self.http.post(self.url, json=INITIALIZED, headers=self.headers)
        assert done.status_code == 202, done.text
        return self

    async def post(self, body: bytes) -> dict[str, Any]:
        return answer(await self.http.post(self.url, content=body, headers=self.headers))


class StdioSession:
    """A server process spoken to line by line over its stdin and stdout."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self._buffer = b""

    async def open(self) -> StdioSession:
        await self.send(json.dumps(INITIALIZE).encode())
        assert (await self.receive())["id"] == 0
        await self.send(json.dumps(INITIALIZED).encode())
        return self

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(line + b"\n")

    async def receive(self) -> dict[str, Any]:
        """The next message that answers a request (notifications are skipped)."""
        assert self.process.stdout is not None
        while True:
            while b"\n" not in self._buffer:
                self._buffer += await self.process.stdout.receive()
            line, self._buffer = self._buffer.split(b"\n", 1)
            message: dict[str, Any] = json.loads(line)
            if "id" in message:
                return message
