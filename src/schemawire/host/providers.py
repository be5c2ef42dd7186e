"""`HttpModel`: the same request body to any provider's model API over HTTP.

HTTP models speak OpenAI Chat Completions and Responses, Anthropic Messages, Gemini
``generateContent`` and any OpenAI-compatible server (vLLM, llama.cpp, Ollama), over httpx2,
the HTTP client the MCP SDK already uses. They stream by default: the response arrives as
server-sent events, each read as it comes (`schemawire.wire.stream`), and is put together into
the body the API would have sent whole.

While a model is held open (``async with model:``, which the host does for each run, or for
the block of ``async with host:``), its requests share one pooled HTTP client and reuse its
connections; the client is closed with the model.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
import orjson

from schemawire._json import quoted
from schemawire.errors import ModelError, UsageError, one_line
from schemawire.host.models import DeltaSink
from schemawire.wire import StreamDelta, StreamReader, wire_format
from schemawire.wire.sse import DONE, Event, EventParser

__all__ = ["HttpModel"]

_RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_MAX_RETRY_WAIT = 60.0  # a longer Retry-After is waited for only this long
_BODY_SHOWN = 2000  # characters of a failed response's body kept in the error


@dataclass(frozen=True, slots=True)
class _Endpoint:
    """Where an API listens and how it authenticates."""

    base_url: str
    path: str  # may hold {model}
    stream_path: str  # where it streams (Gemini: another method, SSE asked for in the query)
    key_env: tuple[str, ...]
    key_header: str  # "Authorization" means "Bearer <key>"
    headers: Mapping[str, str] = field(default_factory=dict[str, str])


_GEMINI_PATH = "/v1beta/models/{model}"
_ENDPOINTS = {
    "openai.chat": _Endpoint(
        "https://api.openai.com/v1",
        "/chat/completions",
        "/chat/completions",
        ("OPENAI_API_KEY",),
        "Authorization",
    ),
    "openai.responses": _Endpoint(
        "https://api.openai.com/v1",
        "/responses",
        "/responses",
        ("OPENAI_API_KEY",),
        "Authorization",
    ),
    "anthropic": _Endpoint(
        "https://api.anthropic.com",
        "/v1/messages",
        "/v1/messages",
        ("ANTHROPIC_API_KEY",),
        "x-api-key",
        {"anthropic-version": "2023-06-01"},
    ),
    "gemini": _Endpoint(
        "https://generativelanguage.googleapis.com",
        _GEMINI_PATH + ":generateContent",
        _GEMINI_PATH + ":streamGenerateContent?alt=sse",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "x-goog-api-key",
    ),
}
_BASE_URL_ENV = {
    "openai.chat": "OPENAI_BASE_URL",
    "openai.responses": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "gemini": "GEMINI_BASE_URL",
}


class _RetryableError(Exception):
    """An attempt that failed before any of the answer arrived: it may be retried."""

    def __init__(self, error: ModelError, retry_after: str | None = None) -> None:
        super().__init__(error.message)
        self.error, self.retry_after = error, retry_after


@dataclass
class _Pool:
    """One event loop's pooled client of a model, and the blocks holding it open."""

    users: int = 0
    client: httpx2.AsyncClient | None = None  # opened by the first request


class HttpModel:
    """A model behind an HTTP API, streamed by default.

    Retries 408, 409, 429 and 5xx (and 529, Anthropic's "overloaded"), and a connection that
    fails, with exponential backoff, honouring ``Retry-After``; a stream only while none of it
    has arrived (what arrived may have been shown). Every wait is bounded: for a response,
    for each piece of a stream, and for a whole stream.

    Inside ``async with model:`` (blocks may nest or overlap), requests share one pooled
    client, opened on first use and closed when the last block ends; a request outside any
    block opens a client for itself and closes it after. Connections belong to the event loop
    that opened them, so each loop that holds the model open has its own pool: one model may
    serve hosts in several threads.
    """

    def __init__(
        self,
        api: str,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        http: httpx2.AsyncClient | None = None,
        stream: bool = True,
        stream_timeout: float = 600.0,
    ) -> None:
        """
        Args:
            api: a key of `schemawire.wire.APIS`.
            name: the model's name, such as ``gpt-4.1-mini``.
            base_url: the API's base URL (default: the provider's, or ``OPENAI_BASE_URL``...).
            api_key: the key (default: from the provider's variable, such as
                ``OPENAI_API_KEY``, which must then be set); ``""`` sends none (a local
                server that needs no key).
            timeout: seconds for one HTTP request, and for each wait of a stream (its
                headers, each next piece).
            retries: how many times a retryable failure is tried again.
            http: the client to send with, which stays the caller's to close (default: the
                model's own).
            stream: whether the host asks for streamed responses (`streaming`).
            stream_timeout: seconds for one whole streamed response.

        Raises:
            UsageError: an unknown API, or no key given and its variable not set.
        """
        endpoint = _ENDPOINTS.get(api)
        if endpoint is None:
            raise UsageError(f"unknown model API {quoted(api)}; known: {', '.join(_ENDPOINTS)}")
        self.api, self.name = api, name
        self.endpoint = endpoint
        self.wire = wire_format(api)
        self.base_url = base_url or os.environ.get(_BASE_URL_ENV[api]) or endpoint.base_url
        self.api_key = api_key if api_key is not None else _required_key(self, endpoint.key_env)
        self.timeout, self.retries = timeout, retries
        self.streaming, self.stream_timeout = stream, stream_timeout
        self._given = http
        self._pools: dict[anyio.lowlevel.EventLoopToken, _Pool] = {}  # by the loop holding it

    async def __aenter__(self) -> HttpModel:
        """Hold the model open: until the block ends, this event loop's requests share one
        pooled client."""
        self._pools.setdefault(anyio.lowlevel.current_token(), _Pool()).users += 1
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pool = self._pools.get(anyio.lowlevel.current_token())
        if pool is not None:
            pool.users -= 1
            if pool.users == 0:
                await self.aclose()

    def held_open(self) -> HttpModel:
        """The model itself, as the block a host holds it open with (see `PoolingModel`)."""
        return self

    async def aclose(self) -> None:
        """Close this event loop's pooled client and its connections (a client the model was
        given stays open; other loops' pools are theirs to close); a request after it opens a
        new one."""
        pool = self._pools.pop(anyio.lowlevel.current_token(), None)
        if pool is not None and pool.client is not None:
            await pool.client.aclose()

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx2.AsyncClient]:
        """The client for one request: the caller's; the pooled one while the model is held
        open (its connections belong to the event loop that opened them, so a request from
        another loop gets its own); else one of its own, closed after it."""
        if self._given is not None:
            yield self._given
            return
        pool = self._pools.get(anyio.lowlevel.current_token())
        if pool is not None:
            if pool.client is None:
                pool.client = httpx2.AsyncClient(timeout=self.timeout)
            yield pool.client
            return
        async with httpx2.AsyncClient(timeout=self.timeout) as own:
            yield own

    @property
    def url(self) -> str:
        """Where a request goes."""
        return self.base_url.rstrip("/") + self.endpoint.path.format(model=self.name)

    @property
    def stream_url(self) -> str:
        """Where a streamed request goes."""
        return self.base_url.rstrip("/") + self.endpoint.stream_path.format(model=self.name)

    def _headers(self, *, stream: bool = False) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self.endpoint.headers}
        if stream:
            headers["Accept"] = "text/event-stream"
        if self.api_key:
            header = self.endpoint.key_header
            headers[header] = (
                f"Bearer {self.api_key}" if header == "Authorization" else self.api_key
            )
        return headers

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        """The response to one request, read whole.

        Raises:
            ModelError: the model could not answer.
        """
        content = orjson.dumps(body)
        async with self._client() as http:
            return await self._with_retries(lambda: self._post(http, content))

    async def stream(
        self, body: dict[str, Any], on_delta: DeltaSink | None = None
    ) -> dict[str, Any]:
        """The response to one request that asks for a stream (`WireFormat.stream_body`),
        read from its server-sent events as they arrive and put together as the API would
        have sent it whole (a server that answers whole anyway is read as it is).

        Args:
            body: the request body.
            on_delta: called with each piece of the answer as it arrives (names as on the
                wire).

        Raises:
            ModelError: the model could not answer, its stream broke off or ended before its
                end (`ModelError.STREAM_CUT`), or carried the API's error
                (`ModelError.STREAM_ERROR`).
            InputError: an event is not one of its API.
        """
        content, sink = orjson.dumps(body), on_delta or _ignore
        async with self._client() as http:
            return await self._with_retries(lambda: self._stream_once(http, content, sink))

    async def _with_retries(
        self, attempt: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        for number in range(1, self.retries + 2):
            try:
                return await attempt()
            except _RetryableError as failed:
                if number > self.retries:
                    failed.error.attempts = number
                    raise failed.error from None
                await anyio.sleep(_backoff(number - 1, failed.retry_after))
            except ModelError as error:
                error.attempts = number
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _post(self, http: httpx2.AsyncClient, content: bytes) -> dict[str, Any]:
        try:
            with anyio.fail_after(self.timeout):  # the whole request, however it trickles
                response = await http.post(self.url, content=content, headers=self._headers())
        except (httpx2.TransportError, TimeoutError) as error:
            raise _RetryableError(_unreachable(self.url, error, self.timeout)) from None
        _refuse_status(response, self.url)
        return _body(response, self.url)

    async def _stream_once(
        self, http: httpx2.AsyncClient, content: bytes, on_delta: DeltaSink
    ) -> dict[str, Any]:
        deadline = anyio.current_time() + self.stream_timeout
        headers = self._headers(stream=True)
        request = http.build_request("POST", self.stream_url, content=content, headers=headers)
        try:
            with anyio.fail_after(_wait(self.timeout, deadline)):
                response = await http.send(request, stream=True)
        except (httpx2.TransportError, TimeoutError) as error:
            raise _RetryableError(_unreachable(self.stream_url, error, self.timeout)) from None
        try:
            return await _StreamedResponse(self, response, deadline).read(on_delta)
        finally:
            with anyio.move_on_after(self.timeout):
                await response.aclose()


class _StreamedResponse:
    """One streamed response as it is read: its events fed to the API's reader."""

    def __init__(self, model: HttpModel, response: httpx2.Response, deadline: float) -> None:
        self.model, self.response, self.deadline = model, response, deadline
        self.url = model.stream_url
        self.reader: StreamReader = model.wire.stream_reader()
        self.events = 0

    async def read(self, on_delta: DeltaSink) -> dict[str, Any]:
        response = self.response
        if response.status_code >= 400 or not _is_event_stream(response):
            with anyio.fail_after(_wait(self.model.timeout, self.deadline)):
                await response.aread()
            _refuse_status(response, self.url)
            return _body(response, self.url)  # a server that answered whole
        chunks = response.aiter_bytes()
        try:
            return await self._read_events(chunks, on_delta)
        except (httpx2.TransportError, TimeoutError) as error:
            raise self._cut(one_line(error)) from None
        finally:
            await chunks.aclose()

    async def _read_events(
        self, chunks: AsyncIterator[bytes], on_delta: DeltaSink
    ) -> dict[str, Any]:
        parser = EventParser(source=self.url)
        while True:
            with anyio.fail_after(_wait(self.model.timeout, self.deadline)):
                chunk = await anext(chunks, None)
            if chunk is None:
                break
            for event in parser.feed(chunk):
                if event.data == DONE:
                    return self.reader.body()
                self._read_event(event, on_delta)
        parser.close()
        if not self.reader.complete:
            raise self._cut("the stream ended before the response did")
        return self.reader.body()

    def _read_event(self, event: Event, on_delta: DeltaSink) -> None:
        try:
            value = orjson.loads(event.data)
        except orjson.JSONDecodeError:
            message = f"{self.url} sent an event that is not JSON"
            raise self._error(message, event, ModelError.NOT_JSON) from None
        api_error = self.reader.api_error(value)
        if api_error is not None:
            message = f"{self.url}: the stream ended with the API's error: {api_error}"
            raise self._error(message, event, ModelError.STREAM_ERROR)
        self.events += 1
        for delta in self.reader.feed(value):
            on_delta(delta)

    def _error(self, message: str, event: Event, code: str) -> ModelError:
        status = self.response.status_code
        return ModelError(message, status, event.data[:_BODY_SHOWN], code=code)

    def _cut(self, why: str) -> ModelError | _RetryableError:
        """The error for a stream that stopped short: retried while none of it was read."""
        message = f"{self.url}: the stream broke off after {self.events} events: {why}"
        error = ModelError(message, self.response.status_code, code=ModelError.STREAM_CUT)
        return _RetryableError(error) if self.events == 0 else error


def _ignore(delta: StreamDelta) -> None:
    """A sink for deltas no one watches."""


def _is_event_stream(response: httpx2.Response) -> bool:
    media_type = response.headers.get("content-type", "").partition(";")[0]
    return media_type.strip().lower() == "text/event-stream"


def _wait(timeout: float, deadline: float) -> float:
    """How long the next wait may take: ``timeout``, or less when the deadline is nearer."""
    return max(0.0, min(timeout, deadline - anyio.current_time()))


def _unreachable(url: str, error: Exception, timeout: float) -> ModelError:
    if isinstance(error, TimeoutError):
        return ModelError(f"{url}: no answer within {timeout:g} s", code=ModelError.UNREACHABLE)
    return ModelError(f"{url}: {one_line(error)}", code=ModelError.UNREACHABLE)


def _refuse_status(response: httpx2.Response, url: str) -> None:
    """Raise for a 4xx or 5xx: `_RetryableError` where a retry may help, else `ModelError`."""
    if response.status_code < 400:
        return
    status = response.status_code
    error = ModelError(f"{url} answered HTTP {status}", status, response.text[:_BODY_SHOWN])
    if response.status_code in _RETRY_STATUSES:
        raise _RetryableError(error, response.headers.get("retry-after"))
    raise error


def _body(response: httpx2.Response, url: str) -> dict[str, Any]:
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        shown = response.text[:_BODY_SHOWN]
        message = f"{url} answered what is not JSON"
        raise ModelError(message, response.status_code, shown, code=ModelError.NOT_JSON) from None
    if not isinstance(body, dict):
        message = f"{url} answered JSON that is not an object"
        raise ModelError(message, response.status_code, code=ModelError.NOT_JSON)
    return body


def _backoff(attempt: int, retry_after: str | None) -> float:
    """Seconds to wait before the next attempt: what ``Retry-After`` says (seconds or an HTTP
    date), else 0.5 s doubling."""
    seconds = _retry_after(retry_after) if retry_after else None
    if seconds is None:
        seconds = 0.5 * 2.0**attempt
    return min(max(seconds, 0.0), _MAX_RETRY_WAIT)


def _retry_after(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None  # neither seconds nor a date: back off as usual


def _required_key(model: HttpModel, names: tuple[str, ...]) -> str:
    """The key from the first of ``names`` that is set.

    Raises:
        UsageError: none is set: the request would go without a key and be refused.
    """
    key = next((os.environ[name] for name in names if os.environ.get(name)), None)
    if key is None:
        variables = " or ".join(names)
        raise UsageError(
            f"{variables} is not set: {model.api} at {model.base_url} needs a key. Set it "
            f"(export {names[0]}=...), or for a local server that needs none use "
            "openai-compatible:URL:NAME"
        )
    return key
