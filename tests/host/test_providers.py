"""One conversation through each provider's API, over real HTTP on 127.0.0.1.

A loopback server answers like the provider, with responses written as that provider sends
them: five tool calls at once (a good one, one whose tool raises, one whose tool hangs, one to
a tool that does not exist, one with bad arguments), then the final answer. The host must
answer each call correctly, in the model's order, and go on. The request bodies it sent are
snapshot-tested as they crossed the wire, and checked against the provider's published schema.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest
from starlette.responses import JSONResponse, Response

from schemawire.errors import InputError
from schemawire.evals.outcome import read_outcome
from schemawire.gates import ResultGate
from schemawire.host import Host, HostOptions, HttpModel, ModelError, PythonTool, ScriptedModel
from schemawire.types import ToolSpec
from schemawire.wire import CallStarted, StreamDelta, wire_format
from tests.helpers import same_json
from tests.host.loopback import (
    Replay,
    Reply,
    loopback_client,
    provider,
    replaying,
    serving,
    stream_model,
)
from tests.wire.provider_responses import (
    CASES,
    api,
    case_id,
    split_at,
    sse_for,
    sse_text,
)
from tests.wire.provider_schemas import errors
from tests.wire.test_provider_schemas import REQUESTS

pytestmark = pytest.mark.anyio

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
SPECS = {name: ToolSpec(name, CITY) for name in ("weather", "ledger", "slow")}
# (call id, tool, arguments as the model writes them); the last ones are wrong on purpose
CALLS = [
    ("c1", "weather", {"city": "Paris"}),
    ("c2", "ledger", {"city": "Oslo"}),
    ("c3", "slow", {"city": "Rome"}),
    ("c4", "nowhere", {"city": "Nice"}),
    ("c5", "weather", {"city": 5}),
]
EXPECTED = {
    "c1": None,
    "c2": "tool_failed",
    "c3": "tool_failed",
    "c4": "tool_unknown",
    "c5": "arguments_invalid",
}
ANSWER = "Paris is sunny; the rest failed."


async def weather(city: str) -> dict[str, Any]:
    return {"city": city, "sky": "sunny"}


def ledger(city: str) -> dict[str, Any]:
    raise LookupError(f"no ledger for {city}")


async def slow(city: str) -> dict[str, Any]:
    await anyio.Event().wait()  # never set: the runner's timeout ends it
    return {}


def tools() -> list[PythonTool]:
    functions = {"weather": weather, "ledger": ledger, "slow": slow}
    return [
        PythonTool(spec, functions[name], ResultGate(spec), timeout=0.5)
        for name, spec in SPECS.items()
    ]


# --- each provider's responses, as it writes them -----------------------------------------------


def chat(calls: list[tuple[str, str, Any]] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else ANSWER}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in calls
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-5.1",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
    }


def responses(calls: list[tuple[str, str, Any]] | None) -> dict[str, Any]:
    if calls:
        output = [
            {
                "type": "function_call",
                "id": f"fc_{i}",
                "call_id": i,
                "name": n,
                "arguments": json.dumps(a),
                "status": "completed",
            }
            for i, n, a in calls
        ]
    else:
        text = {"type": "output_text", "text": ANSWER, "annotations": []}
        output = [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        ]
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-5.1",
        "output": output,
    }


def anthropic(calls: list[tuple[str, str, Any]] | None) -> dict[str, Any]:
    if calls:
        content = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    else:
        content = [{"type": "text", "text": ANSWER}]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def gemini(calls: list[tuple[str, str, Any]] | None) -> dict[str, Any]:
    if calls:
        parts = [{"functionCall": {"id": i, "name": n, "args": a}} for i, n, a in calls]
    else:
        parts = [{"text": ANSWER}]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "modelVersion": "gemini-2.5-flash",
    }


Writer = Callable[[list[tuple[str, str, Any]] | None], dict[str, Any]]
APIS: dict[str, tuple[Writer, str, str]] = {
    "openai.chat": (chat, "gpt-5.1", "/v1"),
    "openai.responses": (responses, "gpt-5.1", "/v1"),
    "anthropic": (anthropic, "claude-sonnet-4-5", ""),
    "gemini": (gemini, "gemini-2.5-flash", ""),
}


def results_sent(api: str, body: dict[str, Any]) -> dict[str, str]:
    """The tool results a request body sends back, by call id, in the order sent."""
    if api == "openai.chat":
        return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    if api == "openai.responses":
        return {
            i["call_id"]: i["output"]
            for i in body["input"]
            if i.get("type") == "function_call_output"
        }
    if api == "anthropic":
        return {
            b["tool_use_id"]: b["content"]
            for m in body["messages"]
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
        }
    return {
        p["functionResponse"]["id"]: json.dumps(p["functionResponse"]["response"])
        for c in body["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    }


# --- the same responses, streamed as each provider streams them ---------------------------------


def halves(text: str) -> list[str]:
    """``text`` in two pieces (a value split across events, as streams send it)."""
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def chat_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    choice, head = body["choices"][0], {"id": body["id"], "object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    message = choice["message"]
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in halves(message["content"] or "")]
    for index, call in enumerate(message.get("tool_calls", [])):
        function = {"name": call["function"]["name"], "arguments": ""}
        events.append(chunk({"tool_calls": [{"index": index, **call, "function": function}]}))
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in halves(call["function"]["arguments"])
        ]
    return [*events, chunk({}, choice["finish_reason"])]


def responses_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**body, "status": "in_progress", "output": []}}
    ]
    for index, item in enumerate(body["output"]):
        where = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "function_call":
            added = {**item, "arguments": "", "status": "in_progress"}
            kind, pieces = "response.function_call_arguments.delta", halves(item["arguments"])
        else:
            added, kind = {**item, "content": []}, "response.output_text.delta"
            part = {"type": "output_text", "text": "", "annotations": []}
            where |= {"content_index": 0}
            pieces = halves(item["content"][0]["text"])
        events.append({"type": "response.output_item.added", "output_index": index, "item": added})
        if "content_index" in where:
            events.append({"type": "response.content_part.added", **where, "part": part})
        events += [{"type": kind, **where, "delta": piece} for piece in pieces]
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return [*events, {"type": "response.completed", "response": body}]


def anthropic_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    started = {**body, "content": [], "stop_reason": None}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": started}]
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in halves(block["text"])]
        else:
            start, pieces = {**block, "input": {}}, halves(json.dumps(block["input"]))
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    stop = {"stop_reason": body["stop_reason"], "stop_sequence": None}
    events.append({"type": "message_delta", "delta": stop, "usage": {"output_tokens": 5}})
    return [*events, {"type": "message_stop"}]


def gemini_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    candidate = body["candidates"][0]
    parts = candidate["content"]["parts"]
    return [
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [part]},
                    "index": 0,
                    **({"finishReason": candidate["finishReason"]} if last else {}),
                }
            ],
            "modelVersion": body["modelVersion"],
        }
        for last, part in ((i == len(parts) - 1, part) for i, part in enumerate(parts))
    ]


STREAMERS = {
    "openai.chat": chat_events,
    "openai.responses": responses_events,
    "anthropic": anthropic_events,
    "gemini": gemini_events,
}


def answered(api: str, body: dict[str, Any], streamed: bool) -> Response:
    """The provider's answer: the body whole, or streamed as the provider streams it."""
    if not streamed:
        return JSONResponse(body)
    return Response(sse_for(api, STREAMERS[api](body)), media_type="text/event-stream")


@pytest.mark.slow
@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "plain"])
@pytest.mark.parametrize("api", list(APIS))
async def test_one_conversation_per_provider(api: str, streamed: bool, snapshot: Any) -> None:
    write, name, prefix = APIS[api]
    script = [write(CALLS), write(None)]

    def answer(attempt: int, body: dict[str, Any]) -> Response:
        return answered(api, script[attempt - 1], streamed)

    seen: list[StreamDelta] = []
    async with provider(answer) as (url, app):
        model = HttpModel(api, name, base_url=url + prefix, api_key="test-key", stream=streamed)
        host = Host(model, tools(), options=HostOptions(system="Be brief."), on_delta=seen.append)
        result = await host.run("Weather everywhere?")
    assert (result.stopped, result.answer) == ("answer", ANSWER)
    bodies = [body for _, _, body in app.requests]
    sent = results_sent(api, bodies[1])
    assert list(sent) == [call_id for call_id, _, _ in CALLS]  # matched by id, in order
    codes = {i: (json.loads(text).get("error") or {}).get("code") for i, text in sent.items()}
    assert codes == EXPECTED
    provider_name, component = REQUESTS[api]
    for body in bodies:  # as the provider's own published schema says a request must be
        assert errors(provider_name, component, body) == []
    snapshot(f"host-{api}-requests" + ("-streamed" if streamed else ""), bodies)
    started = [delta.name for delta in seen if isinstance(delta, CallStarted)]
    assert started == ([tool for _, tool, _ in CALLS] if streamed else [])


# --- recorded streams through the host -----------------------------------------------------------


@pytest.fixture
async def replay() -> AsyncIterator[tuple[str, Replay]]:
    async with replaying() as served:
        yield served


STREAMS = [case for case in CASES if case["streamed"]]


def recording_tools(case: dict[str, Any]) -> list[PythonTool]:
    """A tool for each name the case offered, taking any object, answering ``{"ok": true}``."""
    anything = {"type": "object"}

    async def done(**arguments: Any) -> dict[str, Any]:
        return {"ok": True}

    specs = [ToolSpec(name, anything) for name in case["tools"]]
    return [PythonTool(spec, done, ResultGate(spec)) for spec in specs]


def final_answer(api: str) -> bytes:
    write = APIS[api][0]
    return sse_for(api, STREAMERS[api](write(None))).encode()


@pytest.mark.slow
async def test_every_recorded_stream_through_the_host_is_gated_whole(
    replay: tuple[str, Replay],
) -> None:
    url, app = replay
    failures: dict[str, Any] = {}
    async with loopback_client() as http:
        for case in STREAMS:
            written = sse_text(case).encode()
            cuts = random.Random(case_id(case)).sample(range(len(written)), 20)
            app.play(Reply(split_at(written, cuts)), Reply([final_answer(api(case))]))
            model = stream_model(api(case), url, http=http)
            seen: list[StreamDelta] = []
            options = HostOptions(strict=False)
            host = Host(model, recording_tools(case), options=options, on_delta=seen.append)
            with anyio.fail_after(10):
                result = await host.run("Go.")
            found = gated_as_expected(case, host, result, seen)
            if found:
                failures[case_id(case)] = found
    assert failures == {}


def gated_as_expected(case: dict[str, Any], host: Host, result: Any, seen: list[Any]) -> list[str]:
    """Where a run of the case's stream differs from what it expects: each call accepted by
    the argument gate with the expected arguments, the trace's response the assembled body
    (what `read_outcome` and evals read), the deltas naming each call."""
    found: list[str] = []
    expected = [call["arguments"] for call in case["expected"]["calls"]]
    if result.stopped != "answer" or not all(r.argument_verdict.accepted for r in result.calls):
        found.append(
            f"stopped {result.stopped}, verdicts {[r.argument_verdict for r in result.calls]}"
        )
    accepted = [record.argument_verdict.value for record in result.calls]
    if not all(map(same_json, accepted, expected)) or len(accepted) != len(expected):
        found.append(f"accepted {accepted}, expected {expected}")
    outcome = read_outcome(host.trace.hops)
    ran = [(record.call.name, record.argument_verdict.value) for record in result.calls]
    if [(call.tool, call.arguments) for call in outcome.calls] != ran:
        found.append("the trace's calls differ from the run's")
    first = wire_format(api(case)).turn(outcome.responses[0].body, ())
    if [c.name for c in first.tool_calls] != [c["name"] for c in case["expected"]["calls"]]:
        found.append("the trace's first response is not the assembled turn")
    started = [delta.name for delta in seen if isinstance(delta, CallStarted)]
    if started != [c["name"] for c in case["expected"]["calls"]]:
        found.append(f"deltas started {started}")
    return found


# --- a model that fails is traced -----------------------------------------------------------------

LEAKED = "sk-proj-" + "Zq7" * 12  # a key that a provider's error message echoes back


def refusal(status: int, message: str) -> Reply:
    body = json.dumps({"error": {"message": message}}).encode()
    return Reply([body], status, "application/json", headers={"Retry-After": "0"})


def first_events_of_a_chat_stream() -> bytes:
    case = next(c for c in STREAMS if api(c) == "openai.chat" and len(c["events"]) > 4)
    written = sse_text(case).encode()
    return written[: written.index(b"\n\n", len(written) // 2) + 2]


# failure -> (the model's answer, every attempt; the code, status and body start of the hop)
FAILURES: dict[str, tuple[Reply | None, str, int | None, str | None]] = {
    "401": (
        refusal(401, f"Incorrect API key provided: {LEAKED}"),
        ModelError.HTTP_ERROR,
        401,
        '{"error": {"message": "Incorrect API key provided: [REDACTED:openai_key]"}}',
    ),
    "503": (
        refusal(503, "overloaded"),
        ModelError.HTTP_ERROR,
        503,
        '{"error": {"message": "overloaded"}}',
    ),
    "unreachable": (None, ModelError.UNREACHABLE, None, None),
    "cut": (Reply([first_events_of_a_chat_stream()], cut=True), ModelError.STREAM_CUT, 200, None),
    "error event": (
        Reply([b'data: {"error": {"message": "upstream failed"}}\n\n']),
        ModelError.STREAM_ERROR,
        200,
        '{"error": {"message": "upstream failed"}}',
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("failure", list(FAILURES))
async def test_a_failed_model_request_is_a_hop_before_the_error_propagates(
    replay: tuple[str, Replay], failure: str
) -> None:
    url, app = replay
    reply, code, status, body = FAILURES[failure]
    app.play(*[reply] * 2 if reply is not None else [])
    base = url if reply is not None else "http://127.0.0.1:9"
    model = stream_model("openai.chat", base, retries=1, timeout=2)
    host = Host(model, tools())
    with anyio.fail_after(10), pytest.raises(ModelError) as raised:
        await host.run("Weather in Paris?")
    *_, sent, failed = [h for h in host.trace.hops if h.protocol != "span"]  # they end after
    assert (sent.direction, failed.direction) == ("send", "error")
    assert (failed.source, failed.target, failed.protocol) == (
        "model:openai.chat",
        "host",
        "openai.chat",
    )
    error = failed.payload["error"]
    assert (error["code"], error.get("status"), error.get("body")) == (code, status, body)
    assert error["attempts"] == raised.value.attempts
    assert LEAKED not in json.dumps(failed.payload)


async def test_a_malformed_stream_event_is_a_hop_too(replay: tuple[str, Replay]) -> None:
    url, app = replay
    app.play(Reply([b'data: {"choices": [{"index": 0, "delta": {"content": 5}}]}\n\n']))
    host = Host(stream_model("openai.chat", url), tools())
    with anyio.fail_after(10), pytest.raises(InputError) as raised:
        await host.run("Weather in Paris?")
    last = [h for h in host.trace.hops if h.protocol != "span"][-1]  # the spans end after it
    error = last.payload["error"]
    assert (last.direction, error["code"]) == ("error", "json_syntax")
    assert error["pointer"] == raised.value.pointer == "/0/choices/0/delta/content"


async def test_a_call_sent_without_arguments_runs_with_empty_arguments() -> None:
    (case,) = [c for c in CASES if "args_missing" in c["features"]]  # OpenRouter's response
    script = [case["body"], chat(None)]

    def answer(attempt: int, body: dict[str, Any]) -> Response:
        return JSONResponse(script[attempt - 1])

    async with provider(answer) as (url, _):
        model = HttpModel("openai.chat", "m", base_url=url, api_key="k", stream=False)
        host = Host(model, recording_tools(case))
        result = await host.run("Find education content.")
    (record,) = result.calls
    assert (
        record.call.arguments,
        record.argument_verdict.accepted,
        record.argument_verdict.value,
    ) == (
        "{}",
        True,
        {},
    )


# --- one pooled client per model -----------------------------------------------------------

HELLO = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}


class Peers:
    """An ASGI app that answers every request with `HELLO` and notes the client's address
    (its port tells one connection from another)."""

    def __init__(self) -> None:
        self.addresses: list[tuple[str, int]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.addresses.append(tuple(scope["client"]))
        while (await receive()).get("more_body"):
            pass
        await JSONResponse(HELLO)(scope, receive, send)


async def test_a_models_requests_share_one_connection_while_it_is_held_open() -> None:
    peers = Peers()
    async with serving(peers) as url:
        model = HttpModel("openai.chat", "m-1", base_url=url, api_key="k-1", stream=False)
        async with model:
            assert await model.respond({"messages": []}) == HELLO
            assert await model.respond({"messages": []}) == HELLO
        await model.respond({"messages": []})  # outside a block: a client of its own
        await model.respond({"messages": []})
    first, second, alone, again = peers.addresses
    assert first == second
    assert len({second, alone, again}) == 3  # the block's end closed its connection


async def test_closing_a_model_leaves_a_client_it_was_given_open() -> None:
    async with serving(Peers()) as url, loopback_client() as given:
        model = HttpModel("openai.chat", "m-1", base_url=url, api_key="", http=given)
        await model.respond({"messages": []})
        async with model:
            await model.respond({"messages": []})
        assert not given.is_closed
        assert await model.respond({"messages": []}) == HELLO


async def test_a_host_closes_its_models_connection_when_its_block_ends() -> None:
    peers = Peers()
    async with serving(peers) as url:
        model = HttpModel("openai.chat", "m-1", base_url=url, api_key="", stream=False)
        host = Host(model)
        async with host:
            await host.run("one")
            await host.run("two")
        await host.run("three")
    one, two, three = peers.addresses
    assert one == two  # one connection for the block's runs
    assert three != two  # the block's end closed it


async def test_two_event_loops_holding_one_model_open_each_pool_and_close_their_own() -> None:
    # Two threads, each with its own loop, hold one model open at once; the first to leave
    # must close only its own pool (it once closed the other loop's, from the wrong loop).
    peers = Peers()
    together, first_left = threading.Barrier(2, timeout=10), threading.Event()
    async with serving(peers) as url:
        model = HttpModel("openai.chat", "m-1", base_url=url, api_key="", stream=False)

        async def hold_and_ask(first: bool) -> None:
            async with model:
                together.wait()
                await model.respond({"messages": []})
                await model.respond({"messages": []})
                if not first:  # the second leaves once the first has closed its pool
                    assert first_left.wait(10)
            if first:
                first_left.set()

        def in_a_thread(first: bool) -> None:
            anyio.run(hold_and_ask, first)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(anyio.to_thread.run_sync, in_a_thread, True)
                group.start_soon(anyio.to_thread.run_sync, in_a_thread, False)
    assert len(peers.addresses) == 4
    assert len(set(peers.addresses)) == 2  # one connection per loop, each used twice


class _SelfOpening(ScriptedModel):
    """A model with its own ``async with`` (not a `PoolingModel`): the host must not enter it."""

    entered = 0

    async def __aenter__(self) -> _SelfOpening:
        self.entered += 1
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


async def test_a_host_never_enters_a_model_that_does_not_pool() -> None:
    says = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}
    model = _SelfOpening("openai.chat", [says, says], name="m")
    host = Host(model)
    await host.run("one")
    async with host:
        await host.run("two")
    assert model.entered == 0
