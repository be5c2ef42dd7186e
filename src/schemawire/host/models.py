"""Model clients: the same request body to any provider over HTTP, or a scripted model offline.

A model takes the JSON body its API wants (built by `schemawire.wire`) and gives back the JSON
body of the response. HTTP models speak OpenAI Chat Completions and Responses, Anthropic
Messages, Gemini ``generateContent`` and any OpenAI-compatible server (vLLM, llama.cpp,
Ollama), over httpx2, the HTTP client the MCP SDK already uses. `ScriptedModel` plays a JSON
script of recorded responses and keeps every request it received, for demos, tests and evals.
"""

from __future__ import annotations

import email.utils
import os
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx2
import orjson

from schemawire._json import load_file
from schemawire.errors import SchemawireError, UsageError

__all__ = [
    "HttpModel",
    "Model",
    "ModelError",
    "ScriptedModel",
    "model_from_spec",
]

_RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_MAX_RETRY_WAIT = 60.0  # a longer Retry-After is waited for only this long


class ModelError(SchemawireError):
    """A model that could not answer: unreachable, refusing, or out of script.

    Attributes:
        status: the HTTP status, when there was a response.
        body: the start of the response body, for the error message.
    """

    def __init__(self, message: str, status: int | None = None, body: str = "") -> None:
        self.status, self.body = status, body
        super().__init__(f"{message}\n{body}" if body else message)


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
            raise ModelError(f"the script has {len(self.responses)} responses; request "
                             f"{index + 1} has none")  # fmt: skip
        return self.responses[index]


# --- over HTTP ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Endpoint:
    """Where an API listens and how it authenticates."""

    base_url: str
    path: str  # may hold {model}
    key_env: tuple[str, ...]
    key_header: str  # "Authorization" means "Bearer <key>"
    headers: Mapping[str, str] = field(default_factory=dict[str, str])


_ENDPOINTS = {
    "openai.chat": _Endpoint("https://api.openai.com/v1", "/chat/completions",
                             ("OPENAI_API_KEY",), "Authorization"),
    "openai.responses": _Endpoint("https://api.openai.com/v1", "/responses",
                                  ("OPENAI_API_KEY",), "Authorization"),
    "anthropic": _Endpoint("https://api.anthropic.com", "/v1/messages",
                           ("ANTHROPIC_API_KEY",), "x-api-key",
                           {"anthropic-version": "2023-06-01"}),
    "gemini": _Endpoint("https://generativelanguage.googleapis.com", "/v1beta/models/{model}"
                        ":generateContent", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                        "x-goog-api-key"),
}  # fmt: skip
_BASE_URL_ENV = {"openai.chat": "OPENAI_BASE_URL", "openai.responses": "OPENAI_BASE_URL",
                 "anthropic": "ANTHROPIC_BASE_URL", "gemini": "GEMINI_BASE_URL"}  # fmt: skip


class HttpModel:
    """A model behind an HTTP API. Retries 408, 409, 429 and 5xx (and 529, Anthropic's
    "overloaded") with exponential backoff, honouring ``Retry-After``."""

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
    ) -> None:
        """
        Args:
            api: a key of `schemawire.wire.APIS`.
            name: the model's name, such as ``gpt-4.1-mini``.
            base_url: the API's base URL (default: the provider's, or ``OPENAI_BASE_URL``...).
            api_key: the key (default: from the provider's variable, such as
                ``OPENAI_API_KEY``); an OpenAI-compatible local server may need none.
            timeout: seconds for one HTTP request.
            retries: how many times a retryable failure is tried again.
            http: the client to send with (tests pass one bound to a loopback server).

        Raises:
            UsageError: an unknown API.
        """
        endpoint = _ENDPOINTS.get(api)
        if endpoint is None:
            raise UsageError(f"unknown model API {api!r}; known: {', '.join(_ENDPOINTS)}")
        self.api, self.name = api, name
        self.endpoint = endpoint
        self.base_url = base_url or os.environ.get(_BASE_URL_ENV[api]) or endpoint.base_url
        self.api_key = api_key if api_key is not None else _key_from_env(endpoint.key_env)
        self.timeout, self.retries = timeout, retries
        self._http = http

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + self.endpoint.path.format(model=self.name)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self.endpoint.headers}
        if self.api_key:
            header = self.endpoint.key_header
            headers[header] = (
                f"Bearer {self.api_key}" if header == "Authorization" else self.api_key
            )
        return headers

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        content = orjson.dumps(body)
        async with _client(self._http, self.timeout) as http:
            for attempt in range(self.retries + 1):
                try:
                    with anyio.fail_after(self.timeout):  # the whole request, however it trickles
                        response = await http.post(self.url, content=content,
                                                   headers=self._headers())  # fmt: skip
                except (httpx2.TransportError, TimeoutError) as error:
                    if attempt == self.retries:
                        raise ModelError(f"{self.url}: {type(error).__name__}: {error}") from None
                    await anyio.sleep(_backoff(attempt, None))
                    continue
                if response.status_code in _RETRY_STATUSES and attempt < self.retries:
                    await anyio.sleep(_backoff(attempt, response.headers.get("retry-after")))
                    continue
                return _body(response, self.url)
        raise AssertionError("unreachable")  # pragma: no cover


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


def _body(response: httpx2.Response, url: str) -> dict[str, Any]:
    if response.status_code >= 400:
        raise ModelError(f"{url} answered HTTP {response.status_code}", response.status_code,
                         response.text[:2000])  # fmt: skip
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        raise ModelError(f"{url} answered what is not JSON", response.status_code,
                         response.text[:2000]) from None  # fmt: skip
    if not isinstance(body, dict):
        raise ModelError(f"{url} answered JSON that is not an object", response.status_code)
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


def _key_from_env(names: tuple[str, ...]) -> str | None:
    return next((os.environ[name] for name in names if os.environ.get(name)), None)


# --- MODEL strings ------------------------------------------------------------------------------

# A URL (no colon in its path) and a model name, which may hold colons (Ollama's "qwen3:8b").
_URL_AND_NAME = re.compile(r"^(https?://[^/:]+(?::\d+)?(?:/[^:]*)?):(.+)$")
_PREFIXES = {"openai": "openai.chat", "openai-responses": "openai.responses",
             "anthropic": "anthropic", "gemini": "gemini"}  # fmt: skip


def model_from_spec(spec: str) -> Model:
    """The model a ``--model`` value names.

    ``openai:NAME``, ``openai-responses:NAME``, ``anthropic:NAME``, ``gemini:NAME``,
    ``openai-compatible:URL:NAME`` (a server speaking Chat Completions at URL, such as
    ``http://127.0.0.1:11434/v1``) or ``script:FILE``.

    Raises:
        UsageError: the value names no model this way.
    """
    kind, colon, rest = spec.partition(":")
    if not colon or not rest:
        raise UsageError(f"--model {spec!r}: write PROVIDER:NAME, such as openai:gpt-4.1-mini")
    if kind == "script":
        return ScriptedModel.from_file(rest)
    if kind == "openai-compatible":
        found = _URL_AND_NAME.match(rest)
        if found is None:
            raise UsageError(f"--model {spec!r}: write openai-compatible:URL:NAME")
        url, name = found.groups()
        return HttpModel("openai.chat", name, base_url=url,
                         api_key=os.environ.get("OPENAI_API_KEY", ""))  # fmt: skip
    api = _PREFIXES.get(kind)
    if api is None:
        known = ", ".join([*_PREFIXES, "openai-compatible", "script"])
        raise UsageError(f"--model {spec!r}: unknown provider {kind!r}; known: {known}")
    return HttpModel(api, rest)
