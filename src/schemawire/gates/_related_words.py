"""Related words: what a user says and what a tool catalogue says for the same thing.

Users write "get rid of the folder" and "snap a picture of the page"; tools say ``delete``,
``directory`` and ``screenshot``. BM25 only counts the words both sides share, so the shortlist
also looks for the words related to the query's. They come from ``related_words.json`` beside
this module: groups of everyday English and common tool-catalogue words for one action or one
thing (no product's or tool's name). A query word of a group relates to every other word of
it; a phrase ("get rid of", "look up") relates when its words follow each other in the query.

The table's words are read with the same `tokens` as the queries and the tools (stop words
out, stemmed), so "deleting" finds the group of "delete", and a related word is one the index
can hold.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from typing import Any

from schemawire._json import loads
from schemawire._words import tokens

__all__ = ["RelatedWords", "related_words"]

# A phrase as its words: one word for a single word, several for "get rid of" (get, rid).
Phrase = tuple[str, ...]


class RelatedWords:
    """The words a query's words relate to.

    Args:
        groups: each group's words and phrases, as written (read with `tokens`).
    """

    def __init__(self, groups: Sequence[Sequence[str]]) -> None:
        self._related: dict[Phrase, frozenset[str]] = {}
        for group in groups:
            phrases = [phrase for text in group if (phrase := tuple(tokens(text)))]
            for phrase in phrases:
                words = {word for other in phrases if other != phrase for word in other}
                self._related[phrase] = self._related.get(phrase, frozenset()) | words
        self._longest = max((len(phrase) for phrase in self._related), default=0)

    @property
    def phrases(self) -> frozenset[Phrase]:
        """Every word and phrase of the table, as its words."""
        return frozenset(self._related)

    def related(self, words: Sequence[str]) -> list[tuple[Phrase, frozenset[str]]]:
        """Each word and phrase of ``words`` (a query's `tokens`, in order) that the table has,
        with the words related to it, in the query's order.

        Args:
            words: the query's words, in order: a phrase counts where its words follow each
                other.
        """
        found: list[tuple[Phrase, frozenset[str]]] = []
        get = self._related.get
        for start in range(len(words)):
            for length in range(1, min(self._longest, len(words) - start) + 1):
                phrase = tuple(words[start : start + length])
                related = get(phrase)
                if related:
                    found.append((phrase, related))
        return found


@functools.cache
def related_words() -> RelatedWords:
    """The table shipped in ``related_words.json``, read once."""
    data: Any = loads(
        resources.files("schemawire.gates").joinpath("related_words.json").read_bytes()
    )
    return RelatedWords(data["groups"])
