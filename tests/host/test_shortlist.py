"""The host's shortlist (gate 1 in the loop): each request carries the k tools that best match
the user's request, the pinned ones, those already called and those ``search_tools`` found;
every call is gated against the whole catalogue.

A scripted model (Chat Completions responses) plays the model; the tests read what each request
carried, exactly as it would go over the wire, and the trace.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from schemawire._json import dumps
from schemawire.errors import UsageError
from schemawire.host import Host, HostOptions, PythonTool, ScriptedModel
from schemawire.trace import Trace
from schemawire.types import ToolSpec
from tests.host.chat_script import calls, says, tool_messages
from tests.host.shortlist_catalogue import SHORTLIST_SCHEMA, desk_tools

pytestmark = pytest.mark.anyio

API = "openai.chat"
QUESTION = "What is the weather forecast in Paris for the next days?"


def shortlisting_host(
    script: list[dict[str, Any]], api: str = API, **options: Any
) -> tuple[Host, ScriptedModel, list[tuple[str, dict[str, Any]]]]:
    ran: list[tuple[str, dict[str, Any]]] = []
    model = ScriptedModel(api, script, name="m")
    host = Host(model, desk_tools(ran), options=HostOptions(**options), trace=Trace())
    return host, model, ran


def names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def shortlist_hops(host: Host) -> list[tuple[str, dict[str, Any]]]:
    return [(hop.source, hop.payload) for hop in host.trace.hops if hop.protocol == "shortlist"]


def catalogue_order(host: Host, chosen: set[str]) -> list[str]:
    return [name for name in host.tools if name in chosen]


# --- options -------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, -1, True, 2.5, "3"])
def test_a_shortlist_holds_at_least_one_tool(k: Any) -> None:
    with pytest.raises(UsageError, match="k must be 1 or more"):
        HostOptions(shortlist=k)


def test_pins_need_a_host_that_shortlists() -> None:
    with pytest.raises(UsageError, match="pins tools in a shortlist"):
        HostOptions(pinned=("email_send",))
    with pytest.raises(UsageError, match="a tuple, not a string"):
        HostOptions(shortlist=2, pinned="email_send")  # type: ignore[arg-type]


def test_a_pin_the_catalogue_does_not_have_is_refused() -> None:
    message = r'the pinned tools "no_such_tool" are not in the catalogue.*schemawire tools lists'
    with pytest.raises(UsageError, match=message):
        shortlisting_host([], shortlist=2, pinned=("no_such_tool",))


def test_a_tool_named_like_the_search_tool_is_refused() -> None:
    spec = ToolSpec("search_tools", {"type": "object", "description": "Mine."})
    model = ScriptedModel("openai.chat", [], name="m")
    with pytest.raises(UsageError, match="search_tools=False"):
        Host(model, [PythonTool(spec, dict)], options=HostOptions(shortlist=1))
    # without the host's own search tool, the name is free
    Host(model, [PythonTool(spec, dict)], options=HostOptions(shortlist=1, search_tools=False))


# --- what each request carries -------------------------------------------------------------


async def test_each_request_carries_the_top_k_in_catalogue_order_and_search_tools_first() -> None:
    host, model, ran = shortlisting_host(
        [calls(("c1", "weather_forecast", {"city": "Paris", "days": 3})), says("Mild.")],
        shortlist=3,
    )
    result = await host.run(QUESTION)
    assert (result.stopped, ran) == ("answer", [("weather_forecast", {"city": "Paris", "days": 3})])
    first, second = model.requests
    (preselection,) = shortlist_hops(host)
    assert preselection[0] == "host:preselection"
    ranked = [tool["name"] for tool in preselection[1]["tools"]]
    assert len(ranked) == 3
    assert "weather_forecast" in ranked
    assert names(first) == ["search_tools", *catalogue_order(host, set(ranked))]
    assert len(host.tools) == 17  # the whole catalogue (and search_tools) is still gated
    # nothing changed: the second request's tools are the first's, byte for byte
    assert dumps(second["tools"], indent=False) == dumps(first["tools"], indent=False)
    sends = [hop for hop in host.trace.hops if (hop.protocol, hop.direction) == (API, "send")]
    assert sends[1].payload["tools"] == "unchanged"


async def test_the_shortlist_hop_is_the_shortlist_json() -> None:
    host, _, _ = shortlisting_host([says("Mild.")], shortlist=2, pinned=("email_send",))
    await host.run(QUESTION)
    ((source, payload),) = shortlist_hops(host)
    assert source == "host:preselection"
    assert SHORTLIST_SCHEMA.is_valid(payload)
    assert (payload["query"], payload["k"], payload["catalogue"]["size"]) == (QUESTION, 2, 16)
    assert payload["catalogue"]["sources"] == {"python": 16}
    assert [(t["name"], t["pinned"]) for t in payload["tools"]][-1] == ("email_send", True)


async def test_pinned_and_called_tools_are_carried_too() -> None:
    host, model, ran = shortlisting_host(
        [
            calls(("c1", "currency_convert", {"amount": 10, "source": "EUR", "target": "USD"})),
            says("Done."),
        ],
        shortlist=1,
        pinned=("email_send",),
        search_tools=False,
    )
    await host.run(QUESTION)
    first, second = model.requests
    assert "search_tools" not in names(first)
    assert set(names(first)) == {"weather_forecast", "email_send"}
    # currency_convert was never shown; it exists, so it ran, and it is carried from now on
    assert ran == [("currency_convert", {"amount": 10, "source": "EUR", "target": "USD"})]
    assert names(second) == catalogue_order(
        host, {"weather_forecast", "email_send", "currency_convert"}
    )


async def test_search_only_starts_the_model_with_the_pins_and_search_tools() -> None:
    host, model, _ = shortlisting_host([says("Hello.")], search_tools=True, pinned=("files_list",))
    await host.run(QUESTION)
    assert names(model.requests[0]) == ["search_tools", "files_list"]
    assert shortlist_hops(host) == []  # no pre-selection: nothing was ranked


async def test_without_a_shortlist_every_tool_is_sent_as_before() -> None:
    host, model, _ = shortlisting_host([says("Hello.")])
    await host.run(QUESTION)
    assert names(model.requests[0]) == list(host.tools)
    assert len(names(model.requests[0])) == 16
    assert shortlist_hops(host) == []


# --- search_tools --------------------------------------------------------------------------


async def test_a_search_finds_a_tool_the_next_request_carries_and_its_call_runs() -> None:
    host, model, ran = shortlisting_host(
        [
            calls(("s1", "search_tools", {"query": "convert money between currencies"})),
            calls(("c1", "currency_convert", {"amount": 100, "source": "EUR", "target": "USD"})),
            says("100 EUR is about 108 USD."),
        ],
        shortlist=2,
    )
    result = await host.run(QUESTION)
    assert result.stopped == "answer"
    first, second, third = model.requests
    answer = json.loads(tool_messages(second)["s1"])
    assert SHORTLIST_SCHEMA.is_valid(answer)
    found = [tool["name"] for tool in answer["tools"]]
    assert found == ["currency_convert"]  # the only tool that matches: nothing else is made up
    assert (answer["k"], answer["returned"], answer["truncated"]) == (5, 1, False)
    shown_first = set(names(first)) - {"search_tools"}
    assert len(shown_first) == 2
    assert names(second) == ["search_tools", *catalogue_order(host, shown_first | set(found))]
    assert dumps(third["tools"], indent=False) == dumps(second["tools"], indent=False)
    assert ran == [("currency_convert", {"amount": 100, "source": "EUR", "target": "USD"})]
    hops = shortlist_hops(host)
    assert [source for source, _ in hops] == ["host:preselection", "host:search_tools"]
    assert hops[1][1] == answer


async def test_search_tools_arguments_pass_the_argument_gate() -> None:
    host, model, _ = shortlisting_host(
        [calls(("s1", "search_tools", {"query": "refund", "k": 0, "scope": "all"})), says("ok")],
        shortlist=2,
    )
    await host.run(QUESTION)
    error = json.loads(tool_messages(model.requests[1])["s1"])["error"]
    assert error["code"] == "arguments_invalid"
    assert {v["pointer"] for v in error["violations"]} == {"/k", "/scope"}
    assert [source for source, _ in shortlist_hops(host)] == ["host:preselection"]  # no search ran


async def test_the_search_tool_never_lists_the_catalogue() -> None:
    host, model, _ = shortlisting_host([says("ok")], shortlist=1)
    await host.run(QUESTION)
    search = model.requests[0]["tools"][0]["function"]
    text = dumps(search, indent=False)
    assert not any(name in text for name in host.tools if name != "search_tools")


async def test_a_search_with_k_returns_k_tools() -> None:
    host, model, _ = shortlisting_host(
        [calls(("s1", "search_tools", {"query": "calendar event", "k": 2})), says("ok")],
        shortlist=1,
    )
    await host.run(QUESTION)
    answer = json.loads(tool_messages(model.requests[1])["s1"])
    assert [t["name"] for t in answer["tools"]] == ["calendar_create_event", "calendar_list_events"]
    assert (answer["k"], answer["returned"]) == (2, 2)


# --- calls outside the shortlist -----------------------------------------------------------


async def test_a_call_of_a_tool_never_shown_is_held_to_its_full_schema() -> None:
    host, model, ran = shortlisting_host(
        [
            calls(("c1", "order_refund", {"order_id": "A-1", "amount": -5})),
            calls(("c2", "order_refund", {"order_id": "A-1042", "amount": 20})),
            says("Refunded."),
        ],
        shortlist=2,
    )
    result = await host.run(QUESTION)
    assert "order_refund" not in names(model.requests[0])
    error = json.loads(tool_messages(model.requests[1])["c1"])["error"]
    assert error["code"] == "arguments_invalid"
    assert {v["pointer"] for v in error["violations"]} == {"/order_id", "/amount"}
    assert "order_refund" in names(model.requests[1])  # the model now reads the schema it broke
    assert ran == [("order_refund", {"order_id": "A-1042", "amount": 20})]
    assert [record.argument_verdict.accepted for record in result.calls] == [False, True]


async def test_a_call_of_a_tool_that_does_not_exist_is_tool_unknown() -> None:
    host, model, _ = shortlisting_host([calls(("c1", "teleport", {})), says("No.")], shortlist=2)
    await host.run(QUESTION)
    error = json.loads(tool_messages(model.requests[1])["c1"])["error"]
    assert error["code"] == "tool_unknown"
    assert "search_tools" in error["hint"]
    text = dumps(error, indent=False)
    assert "order_refund" not in text  # the catalogue is not listed to the model
    assert "teleport" not in names(model.requests[1])


# --- Anthropic: found tools deferred, loaded by tool_reference -----------------------------


def anthropic_message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return anthropic_message(
        [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}], "tool_use"
    )


async def test_anthropic_gets_tool_references_and_deferred_tools() -> None:
    from tests.wire.provider_schemas import errors

    script = [
        tool_use("toolu_1", "search_tools", {"query": "convert currency", "k": 1}),
        tool_use("toolu_2", "currency_convert", {"amount": 5, "source": "EUR", "target": "JPY"}),
        anthropic_message([{"type": "text", "text": "About 800 JPY."}], "end_turn"),
    ]
    host, model, ran = shortlisting_host(script, api="anthropic", shortlist=2, search_form="native")
    await host.run(QUESTION)
    first, second, third = model.requests
    for body in model.requests:
        assert errors("anthropic", "CreateMessageParams", body) == []
    assert all("defer_loading" not in tool for tool in first["tools"])
    deferred = [tool["name"] for tool in second["tools"] if tool.get("defer_loading")]
    assert deferred == ["currency_convert"]
    (result,) = second["messages"][-1]["content"]
    text, reference = result["content"]
    assert SHORTLIST_SCHEMA.is_valid(json.loads(text["text"]))
    assert reference == {"type": "tool_reference", "tool_name": "currency_convert"}
    # called, it stays deferred (its reference loads it): the tools stay byte for byte
    assert dumps(third["tools"], indent=False) == dumps(second["tools"], indent=False)
    assert ran == [("currency_convert", {"amount": 5, "source": "EUR", "target": "JPY"})]


# --- OpenAI Responses: a client-executed tool_search -----------------------------------------


def responses_output(*items: dict[str, Any]) -> dict[str, Any]:
    from tests.wire.test_openai_responses import response

    return response(list(items))


async def test_openai_responses_searches_client_side_and_its_tools_never_change() -> None:
    from tests.wire.provider_schemas import errors
    from tests.wire.test_tool_search_forms import emptied

    search = {
        "id": "tsc_1",
        "type": "tool_search_call",
        "call_id": "call_s1",
        "execution": "client",
        "arguments": {"query": "convert currency", "k": 1},
        "status": "completed",
    }
    convert = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_c1",
        "name": "currency_convert",
        "arguments": '{"amount": 5, "source": "EUR", "target": "GBP"}',
        "status": "completed",
    }
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "About 4 GBP.", "annotations": []}],
    }
    script = [responses_output(search), responses_output(convert), responses_output(answer)]
    host, model, ran = shortlisting_host(
        script, api="openai.responses", shortlist=2, search_form="native"
    )
    await host.run(QUESTION)
    first, second, third = model.requests
    for body in model.requests:
        assert errors("openai", "CreateResponse", emptied(body)) == []
    assert first["tools"][0]["type"] == "tool_search"
    # the found tool is loaded by the search's output item: the tools never change
    assert dumps(first["tools"], indent=False) == dumps(third["tools"], indent=False)
    output, note = second["input"][-2:]
    assert (output["type"], output["call_id"]) == ("tool_search_output", "call_s1")
    assert note["role"] == "developer"
    assert SHORTLIST_SCHEMA.is_valid(json.loads(note["content"].split(": ", 1)[1]))
    assert [tool["name"] for tool in output["tools"]] == ["currency_convert"]
    assert ran == [("currency_convert", {"amount": 5, "source": "EUR", "target": "GBP"})]
    sources = [source for source, _ in shortlist_hops(host)]
    assert sources == ["host:preselection", "host:search_tools"]


# --- ranking by meaning --------------------------------------------------------------------

# A tiny embedder for the test: one dimension per topic, a text's vector counts its topic words.
_TOPICS = (("weather", "umbrella", "rain"), ("song", "album", "music", "tune"))


def _topic_vectors(texts: Sequence[str]) -> list[list[float]]:
    vectors = []
    for text in texts:
        words = text.lower().replace("?", " ").replace(".", " ").split()
        vectors.append([float(sum(word in topic for word in words)) + 1e-3 for topic in _TOPICS])
    return vectors


async def test_a_host_given_an_embedder_preselects_by_meaning_too() -> None:
    question = "Should I take an umbrella tomorrow?"
    plain, _, _ = shortlisting_host([says("Yes.")], shortlist=2, search_tools=False)
    await plain.run(question)
    ((_, bm25_only),) = shortlist_hops(plain)
    assert [tool["name"] for tool in bm25_only["tools"]] == []  # no word in common
    host, model, _ = shortlisting_host(
        [says("Yes.")], shortlist=2, search_tools=False, embedder=_topic_vectors
    )
    await host.run(question)
    ((_, fused),) = shortlist_hops(host)
    assert fused["ranker"] == "bm25+dense"
    ranked = [tool["name"] for tool in fused["tools"]]
    assert ranked[0].startswith("weather_")
    (request,) = model.requests
    assert names(request) == catalogue_order(host, set(ranked))
