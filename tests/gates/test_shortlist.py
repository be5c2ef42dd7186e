"""The shortlist index: whole words by field, BM25 ranking, pins, and JSON with a schema."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire import ToolIndex, ToolSpec, UsageError
from schemawire._words import stem, tokens
from schemawire.gates import Shortlist
from schemawire.gates import shortlist as shortlist_module
from schemawire.schema.validator import compile_schema
from schemawire.trace import Trace, record_shortlist

SCHEMA = compile_schema(
    json.loads(resources.files("schemawire.gates").joinpath("shortlist.schema.json").read_text()),
    source="shortlist.schema.json",
)


def _tool(name: str, description: str = "", **schema: Any) -> ToolSpec:
    return ToolSpec(name, {"type": "object", "description": description, **schema})


CATALOGUE = [
    _tool("get_me", "The signed-in GitHub user's profile."),
    _tool("add_issue_comment", "Add a comment to an issue."),
    _tool("listPullRequests", "Pull requests of a repository."),
    _tool(
        "browser_navigate",
        "Open a page.",
        properties={
            "target": {
                "type": "object",
                "properties": {"viewportWidth": {"type": "integer", "description": "in pixels"}},
            },
            "wait": {"enum": ["domcontentloaded", "networkidle"]},
        },
    ),
    _tool("send_message", "Post text to a channel.", **{"x-keywords": ["slack", "chat"]}),
    _tool("weather.forecast", "Tomorrow's weather.", title="Forecast"),
]


def _assert_valid(shown: dict[str, Any]) -> None:
    assert SCHEMA.violations(shown) == ()


def _names(shortlist: Shortlist) -> list[str]:
    return [tool.name for tool in shortlist.tools]


def test_a_query_word_matches_whole_words_only() -> None:
    shortlist = ToolIndex(CATALOGUE).search("me")
    assert _names(shortlist) == ["get_me"]
    assert shortlist.tools[0].matched == ("name",)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("pull requests", "listPullRequests"),
        ("comment on an issue", "add_issue_comment"),
        ("forecast", "weather.forecast"),
        ("weather", "weather.forecast"),
    ],
)
def test_camel_case_snake_case_and_namespaced_names_match_their_words(
    query: str, expected: str
) -> None:
    shortlist = ToolIndex(CATALOGUE).search(query, k=1)
    assert _names(shortlist) == [expected]
    assert "name" in shortlist.tools[0].matched


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("s3_get_object", ["s3", "3", "get", "object"]),
        ("getS3Object", ["get", "s3", "3", "object"]),
        ("IPv4 address", ["ipv", "ipv4", "4", "address"]),
        ("page 2", ["page", "2"]),
        ("größe café", ["größe", "café"]),
        ("Москва погода", ["москва", "погода"]),
        ("上海天气", ["上海", "海天", "天气"]),
        ("東京の天気", ["東京", "京の", "の天", "天気"]),
        ("度", ["度"]),
    ],
)
def test_short_names_with_numbers_and_other_scripts_are_words(text: str, words: list[str]) -> None:
    assert tokens(text) == words


def test_a_tool_described_in_chinese_or_named_with_a_number_is_found() -> None:
    catalogue = [
        _tool("get_weather", "查询城市的天气"),
        _tool("s3_put_object", "Upload a file to a bucket."),
        _tool("ec2_start", "Start a virtual machine."),
    ]
    index = ToolIndex(catalogue)
    assert _names(index.search("上海今天天气怎么样", k=1)) == ["get_weather"]
    assert _names(index.search("upload to s3", k=1)) == ["s3_put_object"]
    assert _names(index.search("start my ec2 instance", k=1)) == ["ec2_start"]


def test_nested_property_names_and_enum_values_match() -> None:
    index = ToolIndex(CATALOGUE)
    nested = index.search("viewport width", k=1)
    assert _names(nested) == ["browser_navigate"]
    assert nested.tools[0].matched == ("properties",)
    enum = index.search("networkidle", k=1)
    assert _names(enum) == ["browser_navigate"]
    assert enum.tools[0].matched == ("enum",)


def test_x_keywords_and_the_title_match() -> None:
    index = ToolIndex(CATALOGUE)
    assert index.search("slack").tools[0].matched == ("keywords",)
    assert _names(index.search("slack")) == ["send_message"]
    assert index.search("forecast").tools[0].matched == ("name", "title")


def test_stop_words_alone_match_nothing_and_the_result_says_what_to_try() -> None:
    shortlist = ToolIndex(CATALOGUE).search("what is the")
    assert shortlist.tools == ()
    assert shortlist.total_matches == 0
    assert shortlist.hint
    assert "hint" in shortlist.to_json()
    _assert_valid(shortlist.to_json())


def test_a_word_no_tool_has_gives_a_hint_naming_it() -> None:
    shortlist = ToolIndex(CATALOGUE).search("kubernetes")
    assert shortlist.hint is not None
    assert '"kubernet"' in shortlist.hint  # quoted as JSON, never as a Python repr
    assert not shortlist.truncated


def test_pinned_tools_are_always_listed_after_the_ranked_ones_and_marked() -> None:
    index = ToolIndex(CATALOGUE, pinned=["get_me", "send_message"])
    shortlist = index.search("pull request", k=1)
    assert _names(shortlist) == ["listPullRequests", "get_me", "send_message"]
    assert [tool.pinned for tool in shortlist.tools] == [False, True, True]
    assert shortlist.tools[1].score == 0.0
    assert shortlist.tools[1].matched == ()
    assert _names(index.search("the")) == ["get_me", "send_message"]


def test_a_pinned_tool_that_matches_is_counted_as_returned() -> None:
    shortlist = ToolIndex(CATALOGUE, pinned=["get_me"]).search("me github", k=1)
    assert shortlist.tools[-1].name == "get_me"
    assert shortlist.tools[-1].matched
    assert shortlist.returned == shortlist.total_matches == 1


def test_unknown_pins_and_sources_and_bad_k_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        ToolIndex(CATALOGUE, pinned=["nope"])
    with pytest.raises(UsageError):
        ToolIndex(CATALOGUE, sources={"nope": "github"})
    with pytest.raises(UsageError):
        ToolIndex(CATALOGUE).search("issue", k=0)


def test_truncated_when_more_tools_matched_than_k() -> None:
    catalogue = [_tool(f"tool_{n}", "Reads a file.") for n in range(4)]
    shortlist = ToolIndex(catalogue).search("file", k=2)
    assert (shortlist.total_matches, shortlist.returned, shortlist.truncated) == (4, 2, True)
    assert _names(shortlist) == ["tool_0", "tool_1"]  # equal scores: by name
    _assert_valid(shortlist.to_json())


def test_the_json_has_the_catalogue_size_and_sources_and_validates() -> None:
    sources = {"get_me": "github", "add_issue_comment": "github", "browser_navigate": "playwright"}
    index = ToolIndex(CATALOGUE, pinned=["get_me"], sources=sources)
    shown = index.search("comment", k=3).to_json()
    _assert_valid(shown)
    assert index.size == len(CATALOGUE)
    assert shown["catalogue"] == {"size": 6, "sources": {"github": 2, "playwright": 1}}
    assert shown["tools"][0] == {
        "name": "add_issue_comment",
        "score": shown["tools"][0]["score"],
        "matched": ["name", "description"],
        "pinned": False,
    }


def test_tools_sharing_a_name_are_listed_once() -> None:
    twice = [*CATALOGUE, _tool("get_me", "Another definition of me.")]
    shortlist = ToolIndex(twice).search("me", k=5)
    assert _names(shortlist) == ["get_me"]
    assert shortlist.total_matches == 1


def test_stemming_joins_the_forms_of_a_word_and_keeps_short_stems_whole() -> None:
    assert len({stem(word) for word in ("create", "creates", "created", "creating")}) == 1
    assert stem("queries") == stem("query")
    assert stem("calculation") == stem("calculate")
    assert stem("translation") == stem("translate")
    assert stem("string") == "string"
    assert tokens("getHTTPServer") == ["get", "http", "server"]


def test_a_derived_form_in_the_query_finds_the_tool() -> None:
    catalogue = [_tool("calculate_tax", "Tax owed."), _tool("translate_text", "Text in French.")]
    assert _names(ToolIndex(catalogue).search("tax calculation", k=1)) == ["calculate_tax"]
    assert _names(ToolIndex(catalogue).search("a translation", k=1)) == ["translate_text"]


def test_a_long_enum_does_not_weaken_its_own_match() -> None:
    # Enum values are a list, not prose: one among many counts as much as one alone.
    units = ["celsius", *(f"unit{n}" for n in range(30))]
    catalogue = [
        _tool("long_enum", properties={"unit": {"enum": units}}),
        _tool("short_enum", properties={"unit": {"enum": ["celsius"]}}),
    ]
    first, second = ToolIndex(catalogue).search("celsius", k=2).tools
    assert first.score == second.score
    assert (first.name, second.name) == ("long_enum", "short_enum")  # a tie: by name


def test_more_definitions_of_one_name_do_not_make_its_words_look_common() -> None:
    # IDF counts distinct names: four copies of `alpha_tool` leave "alpha" as rare as "beta".
    alpha, beta = _tool("alpha_tool", "Alpha."), _tool("beta_tool", "Beta.")
    once = ToolIndex([alpha, beta]).search("alpha beta", k=2)
    copies = ToolIndex([alpha, alpha, alpha, alpha, beta]).search("alpha beta", k=2)
    assert once.to_json()["tools"] == copies.to_json()["tools"]


def test_a_query_that_spells_out_a_whole_name_ranks_that_tool_first() -> None:
    catalogue = [
        _tool("list_servers", "Servers registered in an environment."),
        _tool("add_postgres_server", "Add a PostgreSQL server to the list of servers."),
    ]
    shortlist = ToolIndex(catalogue).search("list all servers", k=2)
    assert _names(shortlist) == ["list_servers", "add_postgres_server"]


def test_a_word_the_query_repeats_counts_more() -> None:
    catalogue = [_tool("alpha_tool", "Alpha."), _tool("beta_tool", "Beta.")]
    index = ToolIndex(catalogue)
    assert _names(index.search("alpha beta beta", k=1)) == ["beta_tool"]
    assert _names(index.search("alpha alpha beta", k=1)) == ["alpha_tool"]


TRIP = [
    _tool("book_hotel", "Book a hotel room."),
    _tool("get_weather", "The forecast for a city."),
    _tool("trip_planner", "Plan a trip: book a hotel, check the weather, find flights."),
    _tool("send_email", "Send an email."),
]


def test_each_sentence_of_a_query_brings_its_own_best_tool() -> None:
    # Two requests in two sentences: the tool each asks for beats one that is half of both.
    index = ToolIndex(TRIP)
    asked = index.search("Book a hotel in Paris. What is the weather in Rome?", k=2)
    assert _names(asked) == ["book_hotel", "get_weather"]
    # The same words as one sentence: the generalist takes the second place.
    run_on = index.search("Book a hotel in Paris, what is the weather in Rome", k=2)
    assert _names(run_on) == ["book_hotel", "trip_planner"]


_words = st.sampled_from(["file", "read", "write", "issue", "user", "page", "mail", "send", "list"])
_specs = st.lists(
    st.builds(
        lambda name, words, prop: _tool(
            name, " ".join(words), properties={prop: {"type": "string"}}
        ),
        st.text("abcdefgh_", min_size=1, max_size=6),
        st.lists(_words, max_size=6),
        _words,
    ),
    max_size=12,
)


@given(
    specs=_specs,
    query=st.lists(_words, min_size=1, max_size=4),
    separator=st.sampled_from([" ", ". ", "? "]),
    seed=st.randoms(),
)
def test_the_same_catalogue_in_any_order_gives_the_same_json(
    specs: list[ToolSpec], query: list[str], separator: str, seed: Any
) -> None:
    text = separator.join(query)  # ". " makes every word a sentence of its own
    first = ToolIndex(specs).search(text, k=3).to_json()
    assert ToolIndex(specs).search(text, k=3).to_json() == first
    shuffled = list(specs)
    seed.shuffle(shuffled)
    assert json.dumps(ToolIndex(shuffled).search(text, k=3).to_json()) == json.dumps(first)
    _assert_valid(first)


@given(
    specs=_specs,
    query=st.lists(_words, min_size=1, max_size=4),
    separator=st.sampled_from([" ", ". "]),
)
def test_ranked_tools_come_best_first_and_each_shares_a_word_with_the_query(
    specs: list[ToolSpec], query: list[str], separator: str
) -> None:
    shortlist = ToolIndex(specs).search(separator.join(query), k=5)
    scores = [tool.score for tool in shortlist.tools]
    assert scores == sorted(scores, reverse=True)
    assert all(tool.matched and tool.score > 0 for tool in shortlist.tools)
    assert shortlist.returned == min(5, shortlist.total_matches)


def test_an_unchanged_catalogue_keeps_its_index_in_any_order() -> None:
    index = ToolIndex(CATALOGUE, pinned=["get_me"])
    assert index.refreshed(list(reversed(CATALOGUE))) is index
    assert index.fingerprint == ToolIndex(list(reversed(CATALOGUE))).fingerprint


def test_a_changed_catalogue_is_indexed_again_and_keeps_the_pins_it_still_has() -> None:
    index = ToolIndex(CATALOGUE, pinned=["get_me", "send_message"])
    # Words neither the old catalogue nor their related words (_related_words) have.
    edited = [*CATALOGUE[2:], _tool("add_issue_comment", "Annotate a kanban card.")]
    again = index.refreshed(edited)
    assert again is not index
    assert again.pinned == ("send_message",)
    assert _names(again.search("annotate kanban", k=1)) == ["add_issue_comment", "send_message"]
    assert _names(index.search("annotate kanban", k=1)) == ["get_me", "send_message"]


def test_a_shortlist_decision_is_a_hop_of_the_trace() -> None:
    trace = Trace()
    shortlist = ToolIndex(CATALOGUE).search("weather", k=2)
    record_shortlist(trace, "host", shortlist)
    (hop,) = trace.hops
    assert (hop.protocol, hop.direction) == ("shortlist", "check")
    assert hop.payload == shortlist.to_json()
    _assert_valid(hop.payload)


def test_refreshed_with_new_pins_builds_one_index_and_fingerprints_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = ToolIndex(CATALOGUE, pinned=["get_me"])
    assert index.refreshed(CATALOGUE, pinned=["get_me"]) is index
    counted: list[int] = []
    real = shortlist_module.catalogue_fingerprint

    def fingerprint(*args: Any, **kwargs: Any) -> str:
        counted.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(shortlist_module, "catalogue_fingerprint", fingerprint)
    repinned = index.refreshed(CATALOGUE, pinned=["send_message"])
    assert repinned.pinned == ("send_message",)
    assert repinned.fingerprint == index.fingerprint
    assert counted == [1]  # refreshed's own, handed to the new index
    grown = index.refreshed([*CATALOGUE, _tool("add_issue_comment", "Reply on a ticket.")])
    assert grown.pinned == ("get_me",)
    assert counted == [1, 1]


def test_size_and_sources_both_count_distinct_names() -> None:
    twice = [*CATALOGUE, _tool("get_me", "The signed-in user, from another repository.")]
    sources = {spec.name: "github" for spec in twice}
    index = ToolIndex(twice, sources=sources)
    shown = index.search("user", k=3).to_json()
    assert (index.size, index.definitions) == (len(CATALOGUE), len(CATALOGUE) + 1)
    assert shown["catalogue"] == {"size": len(CATALOGUE), "sources": {"github": len(CATALOGUE)}}
    assert [tool["name"] for tool in shown["tools"]].count("get_me") == 1


def test_the_hint_for_a_query_of_stop_words_quotes_its_examples_as_json() -> None:
    hint = ToolIndex(CATALOGUE).search("what is the", k=2).hint
    assert hint is not None
    assert '"create issue"' in hint
    assert "'" not in hint


def test_only_the_first_sentences_of_a_long_query_are_scored_on_their_own() -> None:
    from schemawire.gates._ranking import MOST_SENTENCES

    index = ToolIndex([_tool("alpha_tool", "Alpha."), _tool("beta_tool", "Beta.")])
    filler = "Alpha please. " * MOST_SENTENCES

    def beta(query: str) -> float:
        (score,) = [
            tool.score for tool in index.search(query, k=2).tools if tool.name == "beta_tool"
        ]
        return score

    # the same words: "beta" first gets its sentence's bonus, "beta" past the cap does not
    assert beta("Beta now. " + filler) > beta(filler + "Beta now.")
