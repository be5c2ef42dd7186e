"""Model clients: the same request body to any provider over HTTP, or a scripted model offline.

A model takes the JSON body its API wants (built by `schemawire.wire`) and gives back the JSON
body of the response. HTTP models speak OpenAI Chat Completions and Responses, Anthropic
Messages, Gemini ``generateContent`` and any OpenAI-compatible server (vLLM, llama.cpp,
Ollama), over httpx2, the HTTP client the MCP SDK already uses. They stream by default: the
response arrives as server-sent events, each read as it comes (`schemawire.wire.stream`), and
is put together into the body the API would have sent whole. `ScriptedModel` plays a JSON
script of recorded responses and keeps every request it received, for demos, tests and evals.
"""

from __future__ import annotations

import email.utils
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
import httpx2
import orjson

from schemawire._json import load_file, quoted
from schemawire.errors import SchemawireError, UsageError
from schemawire.wire import StreamDelta, StreamReader, wire_format
from schemawire.wire.sse import DONE, Event, EventParser

__all__ = [
    "DeltaSink",
    "HttpModel",
    "Model",
    "ModelError",
    "ScriptedModel",
    "StreamingModel",
    "model_from_spec",
]

_RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_MAX_RETRY_WAIT = 60.0  # a longer Retry-After is waited for only this long
_BODY_SHOWN = 2000  # characters of a failed response's body kept in the error

DeltaSink = Callable[[StreamDelta], None]
"""Called with each piece of a streamed answer as it arrives (text, a call's start, a piece of
its arguments)."""


class ModelError(SchemawireError):
    """A model that could not answer: unreachable, refusing, cut off, or out of script.

    Attributes:
        code: what went wrong, a stable code (compare it, not the message): `UNREACHABLE`
            (no response at all), `HTTP_ERROR` (a 4xx or 5xx), `NOT_JSON` (a body or event
            that is not JSON), `STREAM_CUT` (the stream broke off, or ended before its end),
            `STREAM_ERROR` (the API's own error event in the stream), `OUT_OF_SCRIPT`.
        message: what happened, one line.
        status: the HTTP status, when there was a response.
        body: the start of the response body (or of the event), for the error message.
        attempts: the requests made, retries included.
    """

    UNREACHABLE = "model_unreachable"
    HTTP_ERROR = "model_http_error"
    NOT_JSON = "model_not_json"
    STREAM_CUT = "model_stream_cut"
    STREAM_ERROR = "model_stream_error"
    OUT_OF_SCRIPT = "model_out_of_script"

    def __init__(
        self,
        message: str,
        status: int | None = None,
        body: str = "",
        *,
        code: str = HTTP_ERROR,
        attempts: int = 1,
    ) -> None:
        self.message, self.status, self.body = message, status, body
        self.code, self.attempts = code, attempts
        super().__init__(f"{message}\n{body}" if body else message)

    def to_json(self) -> dict[str, Any]:
        """The failure as JSON, for the trace (which redacts it like every hop)."""
        shown: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.status is not None:
            shown["status"] = self.status
        if self.body:
            shown["body"] = self.body
        return shown | {"attempts": self.attempts}


class Model(Protocol):
    """Anything that answers a request body of its API with a response body."""

    api: str
    """The API it speaks: a key of `schemawire.wire.APIS`."""
    name: str
    """The model's name at the provider (for the request body)."""

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        """The response to one request (``body`` shares objects with earlier requests' bodies:
        do not change it).

        Raises:
            ModelError: the model could not answer.
        """
        ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also answer as a stream (`HttpModel`)."""

    streaming: bool
    """Whether the host should ask it for streams (it may be turned off)."""

    async def stream(
        self, body: dict[str, Any], on_delta: DeltaSink | None = None
    ) -> dict[str, Any]:
        """The response to one request that asks for a stream (`WireFormat.stream_body`),
        put together as the API would have sent it whole; each piece goes to ``on_delta`` as
        it arrives.

        Raises:
            ModelError: the model could not answer, or its stream failed.
            InputError: an event of the stream is not one of its API.
        """
        ...


# --- offline ------------------------------------------------------------------------------------


class ScriptedModel:
    """Plays recorded responses in order, whatever it is asked, and records what it was asked.

    A script file is ``{"api": "openai.chat", "model": "...", "responses": [<response body>,
    ...]}``: each response exactly as the API would send it.
    """

    def __init__(self, api: str, responses: Sequence[dict[str, Any]], name: str = "scripted"):
        self.api = api
        self.name = name
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """The model a script file describes.

        Raises:
            InputError: the file is not JSON.
            UsageError: it is not a script (no ``api`` or ``responses``).
        """
        script: Any = load_file(path)
        if not isinstance(script, dict) or not isinstance(script.get("responses"), list):
            raise UsageError(f'{path}: a script is {{"api": ..., "responses": [...]}}')
        api = script.get("api")
        if not isinstance(api, str):
            raise UsageError(f'{path}: the script must name its "api", such as "openai.chat"')
        listed: list[Any] = script["responses"]
        responses = [r for r in listed if isinstance(r, dict)]
        if len(responses) != len(listed):
            raise UsageError(f"{path}: every response must be a JSON object")
        return cls(api, responses, str(script.get("model", "scripted")))

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        index = len(self.requests) - 1
        if index >= len(self.responses):
            message = (
                f"the script has {len(self.responses)} responses; request {index + 1} has none"
            )
            raise ModelError(message, code=ModelError.OUT_OF_SCRIPT)
        return self.responses[index]


# --- over HTTP ----------------------------------------------------------------------------------


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


class HttpModel:
    """A model behind an HTTP API, streamed by default.

    Retries 408, 409, 429 and 5xx (and 529, Anthropic's "overloaded"), and a connection that
    fails, with exponential backoff, honouring ``Retry-After``; a stream only while none of it
    has arrived (what arrived may have been shown). Every wait is bounded: for a response,
    for each piece of a stream, and for a whole stream.
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
            http: the client to send with (tests pass one bound to a loopback server).
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
        self._http = http

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
        async with _client(self._http, self.timeout) as http:
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
        content = orjson.dumps(body)
        sink = on_delta or _ignore
        async with _client(self._http, self.timeout) as http:
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
            raise self._cut(f"{type(error).__name__}: {error}") from None
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


@asynccontextmanager
async def _client(
    given: httpx2.AsyncClient | None, timeout: float
) -> AsyncIterator[httpx2.AsyncClient]:
    """The caller's client as it is, or a fresh one, closed afterwards."""
    if given is not None:
        yield given
        return
    async with httpx2.AsyncClient(timeout=timeout) as own:
        yield own


def _unreachable(url: str, error: Exception, timeout: float) -> ModelError:
    if isinstance(error, TimeoutError):
        return ModelError(f"{url}: no answer within {timeout:g} s", code=ModelError.UNREACHABLE)
    message = f"{url}: {type(error).__name__}: {error}"
    return ModelError(message, code=ModelError.UNREACHABLE)


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


# --- MODEL strings ------------------------------------------------------------------------------

# A URL (no colon in its path) and a model name, which may hold colons (Ollama's "qwen3:8b").
_URL_AND_NAME = re.compile(r"^(https?://[^/:]+(?::\d+)?(?:/[^:]*)?):(.+)$")
_PREFIXES = {
    "openai": "openai.chat",
    "openai-responses": "openai.responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}


def model_from_spec(spec: str, *, stream: bool = True) -> Model:
    """The model a ``--model`` value names.

    ``openai:NAME``, ``openai-responses:NAME``, ``anthropic:NAME``, ``gemini:NAME``,
    ``openai-compatible:URL:NAME`` (a server speaking Chat Completions at URL, such as
    ``http://127.0.0.1:11434/v1``) or ``script:FILE``. ``stream`` says whether an HTTP model
    streams its answers.

    Raises:
        UsageError: the value names no model this way, or the provider's key variable (such
            as ``OPENAI_API_KEY``) is not set; an OpenAI-compatible server needs none.
    """
    kind, colon, rest = spec.partition(":")
    if not colon or not rest:
        raise UsageError(
            f"--model {quoted(spec)}: write PROVIDER:NAME, such as openai:gpt-4.1-mini"
        )
    if kind == "script":
        return ScriptedModel.from_file(rest)
    if kind == "openai-compatible":
        found = _URL_AND_NAME.match(rest)
        if found is None:
            raise UsageError(f"--model {quoted(spec)}: write openai-compatible:URL:NAME")
        url, name = found.groups()
        key = os.environ.get("OPENAI_API_KEY", "")
        return HttpModel("openai.chat", name, base_url=url, api_key=key, stream=stream)
    api = _PREFIXES.get(kind)
    if api is None:
        known = ", ".join([*_PREFIXES, "openai-compatible", "script"])
        raise UsageError(f"--model {quoted(spec)}: unknown provider {quoted(kind)}; known: {known}")
    return HttpModel(api, rest, stream=stream)
