"""Loopback HTTP servers that answer like model providers, for the host's tests: one that
answers each request with a function of it (`Provider`), and one that replays prepared
answers, streams written in the pieces a test chooses, cut off or stalled on demand
(`Replay`). Each binds 127.0.0.1 on a free port, for the block that uses it."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.from_thread
import httpx2
from starlette.requests import Request
from starlette.responses import Response

from schemawire.host import HttpModel
from schemawire.mcp._http import HttpOptions, running

Answer = Callable[[int, dict[str, Any]], Response]


class Provider:
    """An ASGI app that records each request and answers with ``answer(attempt, body)``."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        body = json.loads(await request.body())
        self.requests.append((request.url.path, dict(request.headers), body))
        await self.answer(len(self.requests), body)(scope, receive, send)


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """``app`` on 127.0.0.1 (a free port) while the block runs; its base URL."""
    async with running(app, HttpOptions(port=0)) as listening:
        yield f"http://127.0.0.1:{listening.port}"


@asynccontextmanager
async def provider(answer: Answer) -> AsyncIterator[tuple[str, Provider]]:
    app = Provider(answer)
    async with serving(app) as url:
        yield url, app


@dataclass
class Reply:
    """One answer of `Replay`: its status and headers, and its body in the pieces it is
    written in (each flushed on its own), cut off after them when ``cut``."""

    chunks: list[bytes] = field(default_factory=list[bytes])
    status: int = 200
    content_type: str = "text/event-stream"
    cut: bool = False
    stall: bool = False  # after its chunks, write nothing more until the client goes away
    headers: dict[str, str] = field(default_factory=dict[str, str])


class Replay:
    """An ASGI app that records each request and answers with the next of its replies."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    def play(self, *replies: Reply) -> None:
        self.replies, self.requests = list(replies), []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        body = json.loads(await request.body())
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        self.requests.append((path, dict(request.headers), body))
        reply = self.replies[len(self.requests) - 1]
        headers = [(b"content-type", reply.content_type.encode())]
        headers += [(name.encode(), value.encode()) for name, value in reply.headers.items()]
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        for chunk in reply.chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if reply.stall:
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        if not reply.cut:  # a cut reply returns mid-body: uvicorn drops the connection
            await send({"type": "http.response.body", "body": b"", "more_body": False})


@asynccontextmanager
async def replaying() -> AsyncIterator[tuple[str, Replay]]:
    """A `Replay` server while the block runs: its base URL, and the app."""
    app = Replay()
    async with serving(app) as url:
        yield url, app


@contextmanager
def replay_in_a_thread() -> Iterator[tuple[str, Replay]]:
    """A `Replay` server on its own event loop, in a thread, for tests that are not async
    (hypothesis draws each example synchronously)."""
    app = Replay()
    with (
        anyio.from_thread.start_blocking_portal("asyncio") as portal,
        portal.wrap_async_context_manager(serving(app)) as url,
    ):
        yield url, app


_TLS = ssl.create_default_context()


def loopback_client() -> httpx2.AsyncClient:
    """A client for the loopback server (its TLS context made once: making one per client
    costs more than a replayed stream)."""
    return httpx2.AsyncClient(verify=_TLS)


def stream_model(case_api: str, url: str, **options: Any) -> HttpModel:
    base = url + ("/v1" if case_api.startswith("openai") else "")
    return HttpModel(case_api, "m-1", base_url=base, api_key="k-1", **options)
