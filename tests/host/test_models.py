"""Model clients against a real HTTP server on 127.0.0.1 that answers like each provider: whole
responses, and streams replayed from the provider-response corpus, written as server-sent
events split at arbitrary byte boundaries."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.responses import JSONResponse, Response

from schemawire.errors import UsageError
from schemawire.host import HttpModel, ModelError, ScriptedModel, model_from_spec
from schemawire.wire import StreamDelta, wire_format
from tests.host.loopback import (
    Replay,
    Reply,
    loopback_client,
    provider,
    replay_in_a_thread,
    replaying,
    stream_model,
)
from tests.wire.provider_responses import (
    CASES,
    api,
    case_id,
    disagreements,
    split_at,
    sse_text,
    tool_refs,
)
from tests.wire.test_provider_responses import live_view, shown

pytestmark = pytest.mark.anyio

Answer = Callable[[int, dict[str, Any]], Response]
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
BASE_URL_VARIABLES = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL")


def ok(attempt: int, body: dict[str, Any]) -> Response:
    return JSONResponse({"echo": body, "attempt": attempt})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("api_name", "path", "key_header", "key_value"),
    [
        ("openai.chat", "/v1/chat/completions", "authorization", "Bearer k-1"),
        ("openai.responses", "/v1/responses", "authorization", "Bearer k-1"),
        ("anthropic", "/v1/messages", "x-api-key", "k-1"),
        ("gemini", "/v1beta/models/m-1:generateContent", "x-goog-api-key", "k-1"),
    ],
)
async def test_each_api_is_reached_where_and_how_it_expects(
    api_name: str, path: str, key_header: str, key_value: str
) -> None:
    async with provider(ok) as (url, app):
        base = url + ("/v1" if api_name.startswith("openai") else "")
        model = HttpModel(api_name, "m-1", base_url=base, api_key="k-1")
        answer = await model.respond({"hello": "世界"})
    ((seen_path, headers, body),) = app.requests
    assert (seen_path, headers[key_header], body) == (path, key_value, {"hello": "世界"})
    assert answer == {"echo": {"hello": "世界"}, "attempt": 1}
    if api_name == "anthropic":
        assert headers["anthropic-version"] == "2023-06-01"


async def test_retries_429_and_5xx_honouring_retry_after() -> None:
    def flaky(attempt: int, body: dict[str, Any]) -> Response:
        if attempt == 1:
            return JSONResponse(
                {"error": "slow down"}, status_code=429, headers={"Retry-After": "0"}
            )
        if attempt == 2:
            return JSONResponse({"error": "oops"}, status_code=503, headers={"Retry-After": "0"})
        return ok(attempt, body)

    async with provider(flaky) as (url, app):
        model = HttpModel("openai.chat", "m", base_url=url, api_key="k", retries=3)
        answer = await model.respond({})
    assert answer["attempt"] == 3
    assert len(app.requests) == 3


async def test_gives_up_after_the_retries_with_the_providers_words() -> None:
    def down(attempt: int, body: dict[str, Any]) -> Response:
        error = {"error": {"message": "overloaded"}}
        return JSONResponse(error, status_code=529, headers={"Retry-After": "0"})

    async with provider(down) as (url, app):
        model = HttpModel("anthropic", "m", base_url=url, api_key="k", retries=2)
        with pytest.raises(ModelError) as raised:
            await model.respond({})
    error = raised.value
    assert (error.code, error.status, error.attempts) == (ModelError.HTTP_ERROR, 529, 3)
    assert "overloaded" in error.body
    assert len(app.requests) == 3


async def test_a_client_error_is_not_retried() -> None:
    def bad(attempt: int, body: dict[str, Any]) -> Response:
        error = {"error": {"message": "unknown parameter: tools[0].strict"}}
        return JSONResponse(error, status_code=400)

    async with provider(bad) as (url, app):
        with pytest.raises(ModelError) as raised:
            await HttpModel("openai.chat", "m", base_url=url, api_key="k").respond({})
    assert (raised.value.status, raised.value.attempts) == (400, 1)
    assert "unknown parameter" in raised.value.body
    assert len(app.requests) == 1


async def test_an_answer_that_is_not_json_is_an_error() -> None:
    def html(attempt: int, body: dict[str, Any]) -> Response:
        return Response("<html>gateway</html>", media_type="text/html")

    async with provider(html) as (url, _):
        with pytest.raises(ModelError) as raised:
            await HttpModel("gemini", "m", base_url=url, api_key="k").respond({})
    assert (raised.value.code, raised.value.body) == (ModelError.NOT_JSON, "<html>gateway</html>")


@pytest.mark.slow
async def test_an_unreachable_server_is_an_error() -> None:
    model = HttpModel(
        "openai.chat", "m", base_url="http://127.0.0.1:9", api_key="k", retries=1, timeout=2
    )
    with pytest.raises(ModelError, match=r"127\.0\.0\.1:9") as raised:
        await model.respond({})
    assert (raised.value.code, raised.value.attempts) == (ModelError.UNREACHABLE, 2)


async def test_scripted_model_plays_in_order_and_records(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"api": "openai.chat", "responses": [{"n": 1}, {"n": 2}]}))
    model = ScriptedModel.from_file(script)
    assert [await model.respond({"q": i}) for i in (1, 2)] == [{"n": 1}, {"n": 2}]
    assert model.requests == [{"q": 1}, {"q": 2}]
    with pytest.raises(ModelError) as raised:
        await model.respond({})
    assert raised.value.code == ModelError.OUT_OF_SCRIPT


# --- --model values and keys ---------------------------------------------------------------------


@pytest.fixture
def no_provider_variables(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for variable in (*KEY_VARIABLES, *BASE_URL_VARIABLES):
        monkeypatch.delenv(variable, raising=False)
    return monkeypatch


# --model value -> (API, model name, base URL, the key variable it reads)
SPECS: dict[str, tuple[str, str, str, str | None]] = {
    "openai:gpt-4.1-mini": (
        "openai.chat",
        "gpt-4.1-mini",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
    ),
    "openai-responses:o4-mini": (
        "openai.responses",
        "o4-mini",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
    ),
    "anthropic:claude-sonnet-4-5": (
        "anthropic",
        "claude-sonnet-4-5",
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
    ),
    "gemini:gemini-2.5-flash": (
        "gemini",
        "gemini-2.5-flash",
        "https://generativelanguage.googleapis.com",
        "GOOGLE_API_KEY",
    ),
    "openai-compatible:http://127.0.0.1:11434/v1:qwen3:8b": (
        "openai.chat",
        "qwen3:8b",
        "http://127.0.0.1:11434/v1",
        None,
    ),
}


@pytest.mark.parametrize("spec", list(SPECS))
def test_model_specs(spec: str, no_provider_variables: pytest.MonkeyPatch) -> None:
    api_name, name, base, key = SPECS[spec]
    if key is not None:
        no_provider_variables.setenv(key, "k-from-env")
    model = model_from_spec(spec)
    assert isinstance(model, HttpModel)
    assert (model.api, model.name, model.base_url) == (api_name, name, base)
    assert model.api_key == ("k-from-env" if key else "")
    assert model.streaming
    assert not model_from_spec(spec, stream=False).streaming  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spec", "variables"),
    [
        ("openai:gpt-4.1-mini", "OPENAI_API_KEY"),
        ("openai-responses:o4-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini:gemini-2.5-flash", "GEMINI_API_KEY or GOOGLE_API_KEY"),
    ],
)
def test_a_provider_without_its_key_fails_before_any_request(
    spec: str, variables: str, no_provider_variables: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError) as raised:
        model_from_spec(spec)
    assert str(raised.value).startswith(f"{variables} is not set")


async def test_an_openai_compatible_server_is_sent_no_key_when_none_is_set(
    no_provider_variables: pytest.MonkeyPatch,
) -> None:
    async with provider(ok) as (url, app):
        model = model_from_spec(f"openai-compatible:{url}/v1:qwen3:8b", stream=False)
        await model.respond({"model": "qwen3:8b"})
    ((_, headers, _),) = app.requests
    assert "authorization" not in headers


@pytest.mark.parametrize("spec", ["gpt-4", "nope:x", "openai-compatible:qwen", "script:"])
def test_bad_model_specs(spec: str) -> None:
    with pytest.raises(UsageError, match="--model"):
        model_from_spec(spec)


# --- streams -------------------------------------------------------------------------------------


@pytest.fixture
async def replay() -> AsyncIterator[tuple[str, Replay]]:
    async with replaying() as served:
        yield served


async def replayed(
    case: dict[str, Any], url: str, http: httpx2.AsyncClient | None = None
) -> tuple[dict[str, Any], list[StreamDelta]]:
    """The body a model puts together from the case's stream, as the server at ``url``
    writes it, and the deltas it reported as they arrived."""
    model = stream_model(api(case), url, http=http)
    deltas: list[StreamDelta] = []
    with anyio.fail_after(10):
        body = await model.stream(model.wire.stream_body({"model": "m-1"}), deltas.append)
    return body, deltas


def agreement(case: dict[str, Any], body: dict[str, Any], deltas: list[StreamDelta]) -> list[str]:
    """Where a replayed stream's body and deltas differ from what the case expects."""
    tools = tool_refs(case, renamed=True)
    turn = wire_format(api(case)).turn(body, tools)
    found = disagreements(turn, case, renamed=True)
    wire_names = {tool.name: tool.projected_name for tool in tools}
    calls = [(i, wire_names[n], a) for i, n, a in map(shown, turn.tool_calls)]
    if live_view(deltas) != (turn.text or None, calls):
        found.append("the deltas do not show the turn")
    return found


STREAMS = [case for case in CASES if case["streamed"]]


@pytest.mark.slow
async def test_every_recorded_stream_replayed_over_http_reads_as_expected(
    replay: tuple[str, Replay],
) -> None:
    url, app = replay
    failures: dict[str, list[str]] = {}
    async with loopback_client() as http:
        for case in STREAMS:
            written = sse_text(case).encode()
            pieces = random.Random(case_id(case))  # the same split every run
            cuts = [pieces.randrange(len(written)) for _ in range(min(len(written) // 40, 300))]
            app.play(Reply(split_at(written, cuts)))
            body, deltas = await replayed(case, url, http)
            if found := agreement(case, body, deltas):
                failures[case_id(case)] = found
    assert failures == {}


async def replayed_in_pieces(
    case: dict[str, Any], chunks: list[bytes], url: str, app: Replay
) -> list[str]:
    app.play(Reply(chunks))
    async with loopback_client() as http:
        body, deltas = await replayed(case, url, http)
    return agreement(case, body, deltas)


@pytest.fixture
def threaded_replay() -> Iterator[tuple[str, Replay]]:
    with replay_in_a_thread() as served:
        yield served


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(STREAMS), st.data())
def test_a_recorded_stream_split_at_any_bytes_reads_as_expected(
    threaded_replay: tuple[str, Replay], case: dict[str, Any], data: st.DataObject
) -> None:
    url, app = threaded_replay
    written = sse_text(case).encode()
    cuts = data.draw(st.lists(st.integers(0, len(written)), max_size=60), label="cuts")
    found = anyio.run(
        replayed_in_pieces, case, split_at(written, cuts), url, app, backend="asyncio"
    )
    assert found == []


@pytest.mark.parametrize(
    ("api_name", "path", "streamed"),
    [
        (
            "openai.chat",
            "/v1/chat/completions",
            {"stream": True, "stream_options": {"include_usage": True}},
        ),
        ("openai.responses", "/v1/responses", {"stream": True}),
        ("anthropic", "/v1/messages", {"stream": True}),
        ("gemini", "/v1beta/models/m-1:streamGenerateContent?alt=sse", {}),
    ],
)
async def test_each_api_is_asked_for_a_stream_its_own_way(
    replay: tuple[str, Replay], api_name: str, path: str, streamed: dict[str, Any]
) -> None:
    url, app = replay
    case = next(case for case in STREAMS if api(case) == api_name)
    app.play(Reply([sse_text(case).encode()]))
    model = stream_model(api_name, url)
    await model.stream(model.wire.stream_body({"model": "m-1"}))
    ((seen_path, headers, body),) = app.requests
    assert (seen_path, headers["accept"], body) == (
        path,
        "text/event-stream",
        {"model": "m-1", **streamed},
    )


def chat_stream() -> bytes:
    case = next(case for case in STREAMS if api(case) == "openai.chat" and len(case["events"]) > 4)
    return sse_text(case).encode()


async def test_a_stream_refused_with_503_is_retried_before_any_of_it_arrives(
    replay: tuple[str, Replay],
) -> None:
    url, app = replay
    overloaded = b'{"error": {"message": "overloaded"}}'
    refused = Reply([overloaded], 503, "application/json", headers={"Retry-After": "0"})
    app.play(refused, Reply([chat_stream()]))
    model = stream_model("openai.chat", url, retries=1)
    body = await model.stream(model.wire.stream_body({}))
    assert len(app.requests) == 2
    assert model.wire.turn(body, ()).tool_calls


@pytest.mark.slow
async def test_a_stream_cut_before_its_first_event_is_retried(replay: tuple[str, Replay]) -> None:
    url, app = replay
    app.play(Reply([b': connected\n\ndata: {"cho'], cut=True), Reply([chat_stream()]))
    model = stream_model("openai.chat", url, retries=1)
    deltas: list[StreamDelta] = []
    body = await model.stream(model.wire.stream_body({}), deltas.append)
    assert len(app.requests) == 2
    assert live_view(deltas)[1] == [shown(c) for c in model.wire.turn(body, ()).tool_calls]


async def test_a_stream_cut_in_the_middle_is_an_error_and_not_retried(
    replay: tuple[str, Replay],
) -> None:
    url, app = replay
    written = chat_stream()
    app.play(Reply([written[: len(written) // 2]], cut=True), Reply([written]))
    model = stream_model("openai.chat", url, retries=3)
    deltas: list[StreamDelta] = []
    with pytest.raises(ModelError) as raised:
        await model.stream(model.wire.stream_body({}), deltas.append)
    assert (raised.value.code, raised.value.attempts) == (ModelError.STREAM_CUT, 1)
    assert len(app.requests) == 1  # what arrived may have been shown: no second answer
    assert deltas


async def test_a_stream_that_ends_before_the_response_does_is_cut(
    replay: tuple[str, Replay],
) -> None:
    url, app = replay
    case = next(case for case in STREAMS if api(case) == "anthropic")
    written = sse_text(case).encode()
    complete = written.rindex(b"event: message_delta")  # ends cleanly, without its last events
    app.play(Reply([written[:complete]]))
    model = stream_model("anthropic", url, retries=0)
    with pytest.raises(ModelError) as raised:
        await model.stream(model.wire.stream_body({}))
    assert raised.value.code == ModelError.STREAM_CUT


async def test_the_apis_error_event_in_a_stream_is_a_model_error(
    replay: tuple[str, Replay],
) -> None:
    url, app = replay
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [],
            "usage": {},
        },
    }
    events = [("message_start", start), ("ping", {"type": "ping"}), ("error", error)]
    written = "".join(f"event: {k}\ndata: {json.dumps(e)}\n\n" for k, e in events).encode()
    app.play(Reply([written]))
    model = stream_model("anthropic", url, retries=2)
    with pytest.raises(ModelError) as raised:
        await model.stream(model.wire.stream_body({}))
    assert (raised.value.code, raised.value.status) == (ModelError.STREAM_ERROR, 200)
    assert "Overloaded" in raised.value.message
    assert len(app.requests) == 1


async def test_an_event_that_is_not_json_is_a_model_error(replay: tuple[str, Replay]) -> None:
    url, app = replay
    app.play(Reply([b"data: {not json\n\n"]))
    model = stream_model("openai.chat", url)
    with pytest.raises(ModelError) as raised:
        await model.stream(model.wire.stream_body({}))
    assert (raised.value.code, raised.value.body) == (ModelError.NOT_JSON, "{not json")


async def test_a_stream_request_refused_with_401_says_so(replay: tuple[str, Replay]) -> None:
    url, app = replay
    refusal = b'{"error": {"message": "Incorrect API key provided"}}'
    app.play(Reply([refusal], 401, "application/json"))
    model = stream_model("openai.chat", url)
    with pytest.raises(ModelError) as raised:
        await model.stream(model.wire.stream_body({}))
    assert (raised.value.code, raised.value.status) == (ModelError.HTTP_ERROR, 401)
    assert "Incorrect API key" in raised.value.body
    assert len(app.requests) == 1


async def test_a_server_that_answers_a_stream_request_whole_is_read_whole(
    replay: tuple[str, Replay],
) -> None:
    url, app = replay
    plain = next(c for c in CASES if api(c) == "openai.chat" and not c["streamed"])
    app.play(Reply([json.dumps(plain["body"]).encode()], content_type="application/json"))
    model = stream_model("openai.chat", url)
    body = await model.stream(model.wire.stream_body({}))
    assert body == plain["body"]


@pytest.mark.slow
async def test_a_stream_that_stalls_fails_after_the_timeout(replay: tuple[str, Replay]) -> None:
    url, app = replay
    app.play(Reply([b": connected\n\n", chat_stream()[:50]], stall=True))
    model = stream_model("openai.chat", url, timeout=0.5, retries=0)
    with anyio.fail_after(10), pytest.raises(ModelError) as raised:
        await model.stream(model.wire.stream_body({}))
    assert raised.value.code == ModelError.STREAM_CUT


@pytest.mark.slow
async def test_a_whole_stream_is_bounded_too(replay: tuple[str, Replay]) -> None:
    url, app = replay
    app.play(Reply([b": connected\n\n"], stall=True))
    model = stream_model("openai.chat", url, timeout=60, stream_timeout=0.5, retries=0)
    with anyio.fail_after(10), pytest.raises(ModelError) as raised:
        await model.stream(model.wire.stream_body({}))
    assert raised.value.code == ModelError.STREAM_CUT
