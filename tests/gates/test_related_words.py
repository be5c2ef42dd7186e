"""Related words: the shortlist finds a tool by the words users say for what it does."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemawire import ToolIndex, ToolSpec
from schemawire._words import tokens
from schemawire.gates._ranking import RELATED, RELATED_KNOWN, Ranker
from schemawire.gates._related_words import RelatedWords, related_words

TABLE: Any = json.loads(
    resources.files("schemawire.gates").joinpath("related_words.json").read_text("utf-8")
)
# Everyday words and phrases: lowercase letters, digits, spaces, hyphens and apostrophes. No
# tool's name (``get_file``, ``browser_navigate``) and no product's (capitalised) fits.
_PLAIN = re.compile(r"[a-z0-9]+(?:[ '-][a-z0-9]+)*")


def _tool(name: str, description: str = "", **schema: Any) -> ToolSpec:
    return ToolSpec(name, {"type": "object", "description": description, **schema})


FILES = [
    _tool("delete_directory", "Delete a directory and everything in it."),
    _tool("list_directory", "List the entries of a directory."),
    _tool("create_directory", "Create a new directory."),
    _tool("read_file", "Read a text file."),
    _tool("take_screenshot", "Take a screenshot of the current page."),
    _tool("navigate", "Navigate the browser to a URL."),
]


def _names(index: ToolIndex, query: str, k: int = 3) -> list[str]:
    return [tool.name for tool in index.search(query, k=k).tools]


# The shipped table.


def test_every_entry_is_a_plain_lowercase_word_or_phrase_the_tokens_keep() -> None:
    entries = [entry for group in TABLE["groups"] for entry in group]
    assert entries, "the table is empty"
    assert [entry for entry in entries if not _PLAIN.fullmatch(entry)] == []
    # An entry of stop words only ("where", "about") would never be looked up.
    assert [entry for entry in entries if not tokens(entry)] == []


def test_every_group_relates_at_least_two_words_and_holds_each_once() -> None:
    for group in TABLE["groups"]:
        read = [tuple(tokens(entry)) for entry in group]
        assert len(set(read)) >= 2, group
        assert len(read) == len(set(read)), f"a word is twice in {group}"


def test_the_shipped_table_is_read_once() -> None:
    assert related_words() is related_words()
    assert ("delet",) in related_words().phrases


# The table's reading.


def test_a_word_relates_to_the_other_words_of_its_groups() -> None:
    table = RelatedWords([["delete", "remove"], ["delete", "trash"], ["folder", "directory"]])
    assert dict(table.related(tokens("delete folder"))) == {
        ("delet",): {"remov", "trash"},
        ("folder",): {"directori"},
    }


def test_a_phrase_relates_only_when_its_words_follow_each_other() -> None:
    table = RelatedWords([["delete", "get rid of"]])
    assert table.related(tokens("get rid of the old files")) == [(("get", "rid"), {"delet"})]
    assert table.related(tokens("rid me of it, get")) == []


def test_inflected_forms_find_their_group() -> None:
    table = RelatedWords([["delete", "remove"]])
    assert dict(table.related(tokens("deleting"))) == {("delet",): {"remov"}}
    assert dict(table.related(tokens("removed"))) == {("remov",): {"delet"}}


# The ranking.


def test_a_tool_is_found_by_the_words_users_say_for_it() -> None:
    index = ToolIndex(FILES)
    assert _names(index, "get rid of the old folder", k=1) == ["delete_directory"]
    assert _names(index, "show me what's in this folder", k=1) == ["list_directory"]
    assert _names(index, "snap a picture of the page", k=1) == ["take_screenshot"]


def test_a_tool_found_by_a_related_word_alone_says_where_it_matched() -> None:
    shortlist = ToolIndex(FILES).search("erase the folder", k=1)
    (tool,) = shortlist.tools
    assert (tool.name, tool.matched) == ("delete_directory", ("name", "description"))
    assert (shortlist.returned, shortlist.total_matches) == (1, 3)
    assert shortlist.truncated


def test_a_word_the_user_wrote_counts_more_than_a_related_one() -> None:
    index = ToolIndex([_tool("remove_item", "Remove an item."), _tool("delete_item", "Delete.")])
    assert _names(index, "remove the item", k=2) == ["remove_item", "delete_item"]
    assert _names(index, "delete the item", k=2) == ["delete_item", "remove_item"]


def test_a_word_both_written_and_related_counts_once_as_written() -> None:
    ranker = Ranker([_tool("remove_item", "Remove an item."), _tool("delete_item", "Delete.")])
    # Each written once, at 1, and not again as the other's related word.
    weights = ranker._weights(tokens("delete remove item"), 1.0)
    assert (weights["delet"], weights["remov"], weights["item"]) == (1.0, 1.0, 1.0)
    assert ranker.scores("delete remove item") == ranker.scores("remove delete item")


def test_related_words_of_a_word_the_catalogue_lacks_count_more() -> None:
    ranker = Ranker(FILES)
    # "folder" is no tool's word: its related words carry the query; "directory" is one.
    lacking = ranker._weights(tokens("folder"), 1.0)
    having = ranker._weights(tokens("directory"), 1.0)
    assert lacking["directori"] == pytest.approx(RELATED)  # the one related word FILES has
    assert "folder" not in having  # not a word of the catalogue: not looked for
    assert RELATED_KNOWN < RELATED


def test_a_long_query_leans_less_on_related_words() -> None:
    ranker = Ranker(FILES)
    short = ranker._weights(tokens("folder"), 1.0)["directori"]
    words = tokens("folder alpha beta gamma delta epsilon zeta theta iota kappa lambda mu nu")
    damping = 10 / len(set(words))
    assert ranker._weights(words, damping)["directori"] == pytest.approx(short * damping)


def test_a_query_without_related_words_ranks_as_bm25_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with_table = Ranker(FILES).scores("navigate url")
    monkeypatch.setattr("schemawire.gates._ranking.related_words", lambda: RelatedWords([]))
    assert with_table == Ranker(FILES).scores("navigate url")
    assert Ranker(FILES).scores("erase the folder") == {}  # no table: no word in common


@given(words=st.lists(st.sampled_from(["delete", "folder", "page", "picture", "file"]), max_size=5))
def test_related_words_never_reorder_the_same_query(words: list[str]) -> None:
    query = " ".join(words)
    first = ToolIndex(FILES).search(query, k=6).to_json()
    again = ToolIndex(list(reversed(FILES))).search(query, k=6).to_json()
    assert json.dumps(first) == json.dumps(again)


def test_a_query_of_several_sentences_finds_what_each_asks_for() -> None:
    index = ToolIndex(FILES)
    found = _names(index, "Make a folder called out. Then snap a picture of the page.", k=2)
    assert sorted(found) == ["create_directory", "take_screenshot"]
