"""Model clients against a real HTTP server on 127.0.0.1 that answers like each provider."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from schemawire.errors import UsageError
from schemawire.host import HttpModel, ModelError, ScriptedModel, model_from_spec
from schemawire.mcp._http import HttpOptions, running

pytestmark = pytest.mark.anyio

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
async def provider(answer: Answer) -> AsyncIterator[tuple[str, Provider]]:
    app = Provider(answer)
    options = HttpOptions(port=0)
    async with running(app, options) as listening:  # type: ignore[arg-type]
        yield f"http://127.0.0.1:{listening.port}", app


def ok(attempt: int, body: dict[str, Any]) -> Response:
    return JSONResponse({"echo": body, "attempt": attempt})


@pytest.mark.parametrize(
    ("api", "path", "key_header", "key_value"),
    [
        ("openai.chat", "/v1/chat/completions", "authorization", "Bearer k-1"),
        ("openai.responses", "/v1/responses", "authorization", "Bearer k-1"),
        ("anthropic", "/v1/messages", "x-api-key", "k-1"),
        ("gemini", "/v1beta/models/m-1:generateContent", "x-goog-api-key", "k-1"),
    ],
)
async def test_each_api_is_reached_where_and_how_it_expects(
    api: str, path: str, key_header: str, key_value: str
) -> None:
    async with provider(ok) as (url, app):
        base = url + ("/v1" if api.startswith("openai") else "")
        model = HttpModel(api, "m-1", base_url=base, api_key="k-1")
        answer = await model.respond({"hello": "世界"})
    ((seen_path, headers, body),) = app.requests
    assert (seen_path, headers[key_header], body) == (path, key_value, {"hello": "世界"})
    assert answer == {"echo": {"hello": "世界"}, "attempt": 1}
    if api == "anthropic":
        assert headers["anthropic-version"] == "2023-06-01"


async def test_retries_429_and_5xx_honouring_retry_after() -> None:
    def flaky(attempt: int, body: dict[str, Any]) -> Response:
        if attempt == 1:
            return JSONResponse(
                {"error": "slow down"}, status_code=429, headers={"Retry-After": "0"}
            )
        if attempt == 2:
            return JSONResponse({"error": "oops"}, status_code=503)
        return ok(attempt, body)

    async with provider(flaky) as (url, app):
        model = HttpModel("openai.chat", "m", base_url=url, api_key="k", retries=3)
        answer = await model.respond({})
    assert answer["attempt"] == 3
    assert len(app.requests) == 3


async def test_gives_up_after_the_retries_with_the_providers_words() -> None:
    def down(attempt: int, body: dict[str, Any]) -> Response:
        return JSONResponse({"error": {"message": "overloaded"}}, status_code=529,
                            headers={"Retry-After": "0"})  # fmt: skip

    async with provider(down) as (url, app):
        model = HttpModel("anthropic", "m", base_url=url, api_key="k", retries=2)
        with pytest.raises(ModelError, match="HTTP 529") as raised:
            await model.respond({})
    assert raised.value.status == 529
    assert "overloaded" in str(raised.value)
    assert len(app.requests) == 3


async def test_a_client_error_is_not_retried() -> None:
    def bad(attempt: int, body: dict[str, Any]) -> Response:
        return JSONResponse({"error": {"message": "unknown parameter: tools[0].strict"}},
                            status_code=400)  # fmt: skip

    async with provider(bad) as (url, app):
        with pytest.raises(ModelError, match="unknown parameter"):
            await HttpModel("openai.chat", "m", base_url=url, api_key="k").respond({})
    assert len(app.requests) == 1


async def test_an_answer_that_is_not_json_is_an_error() -> None:
    def html(attempt: int, body: dict[str, Any]) -> Response:
        return Response("<html>gateway</html>", media_type="text/html")

    async with provider(html) as (url, _):
        with pytest.raises(ModelError, match="not JSON"):
            await HttpModel("gemini", "m", base_url=url, api_key="k").respond({})


async def test_an_unreachable_server_is_an_error() -> None:
    model = HttpModel("openai.chat", "m", base_url="http://127.0.0.1:9", api_key="k", retries=1,
                      timeout=2)  # fmt: skip
    with pytest.raises(ModelError, match=r"127\.0\.0\.1:9"):
        await model.respond({})


async def test_scripted_model_plays_in_order_and_records(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"api": "openai.chat", "responses": [{"n": 1}, {"n": 2}]}))
    model = ScriptedModel.from_file(script)
    assert [await model.respond({"q": i}) for i in (1, 2)] == [{"n": 1}, {"n": 2}]
    assert model.requests == [{"q": 1}, {"q": 2}]
    with pytest.raises(ModelError, match=r"has 2 responses"):
        await model.respond({})


@pytest.mark.parametrize(
    ("spec", "api", "name", "base"),
    [
        ("openai:gpt-4.1-mini", "openai.chat", "gpt-4.1-mini", "https://api.openai.com/v1"),
        ("openai-responses:o4-mini", "openai.responses", "o4-mini", "https://api.openai.com/v1"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5",
         "https://api.anthropic.com"),
        ("gemini:gemini-2.5-flash", "gemini", "gemini-2.5-flash",
         "https://generativelanguage.googleapis.com"),
        ("openai-compatible:http://127.0.0.1:11434/v1:qwen3:8b", "openai.chat", "qwen3:8b",
         "http://127.0.0.1:11434/v1"),
    ],
)  # fmt: skip
def test_model_specs(spec: str, api: str, name: str, base: str, monkeypatch: Any) -> None:
    for variable in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    model = model_from_spec(spec)
    assert isinstance(model, HttpModel)
    assert (model.api, model.name, model.base_url) == (api, name, base)


@pytest.mark.parametrize("spec", ["gpt-4", "nope:x", "openai-compatible:qwen", "script:"])
def test_bad_model_specs(spec: str) -> None:
    with pytest.raises(UsageError, match="--model"):
        model_from_spec(spec)
