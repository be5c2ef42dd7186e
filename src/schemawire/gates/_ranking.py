"""How the shortlist ranks a catalogue for a query: BM25F over each tool's fields, then the query.

The tool side is `FieldIndex` (BM25F with name coverage); this module holds its tuning and the
query side:

- A word the query repeats counts a little more (``REPEAT`` per repetition): "the area of the
  rectangle and the area of the circle" is about areas.
- A query of several sentences usually asks for several tools ("First, convert 5000 yen to
  dollars. Then convert 15 km to miles."). Each sentence is also scored on its own, and a tool's
  best share of a sentence's top score adds ``SENTENCE`` times the whole query's top score, so
  the tool one sentence asks for is not crowded out by tools that share words with all of them.

The figures were tuned on the even-numbered queries of the BFCL set and checked on the odd ones
(BENCHMARKS.md, gate 1); nothing in here knows a word of BFCL.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from schemawire.gates._bm25 import Field, FieldIndex
from schemawire.gates._tokens import tokens
from schemawire.gates._tool_text import FIELDS, field_tokens
from schemawire.types import ToolSpec

__all__ = ["Ranker", "query_words"]

# How much a word counts in each field (weight) and how much a long field is scaled down (b).
# The name says most about what a tool does; its length hardly matters, an enum's not at all.
TUNING = {
    "name": Field(weight=2.0, b=0.4),
    "title": Field(weight=2.0, b=0.3),
    "description": Field(weight=1.5, b=0.5),
    "properties": Field(weight=0.5, b=0.0),
    "enum": Field(weight=0.75, b=0.0),
    "keywords": Field(weight=2.0, b=0.3),
}
K1 = 1.4  # BM25's saturation: how fast repeating a word in a tool's text stops adding
COVERAGE = 2.5  # what a query that has every word of a tool's name adds to its score
REPEAT = 0.1  # what each repetition of a word in the query adds to that word's weight
SENTENCE = 0.75  # the weight of a tool's best sentence score, against the whole query's

# Where a query's sentences end: . ? ! ; or a line break, then white space.
_SENTENCE_END = re.compile(r"[.?!;\n]+\s")


class Ranker:
    """Scores a catalogue's definitions for a query.

    Args:
        specs: the catalogue; a document's number is its place in ``specs``.
    """

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self._index = FieldIndex(
            [field_tokens(spec) for spec in specs],
            [spec.name for spec in specs],
            {name: TUNING[name] for name in FIELDS},
            k1=K1,
            coverage=COVERAGE,
            coverage_field="name",
        )

    def scores(self, query: str) -> dict[int, float]:
        """Each definition that shares a word with ``query``, with its score."""
        # The separators split on are not word characters: the sentences' words are the query's.
        sentences = [words for part in _SENTENCE_END.split(query) if (words := tokens(part))]
        scores = self._index.scores(_weights([word for words in sentences for word in words]))
        if len(sentences) < 2 or not scores:
            return scores
        weight = SENTENCE * max(scores.values())
        for doc, share in _best_shares(self._index, sentences).items():
            scores[doc] += weight * share
        return scores

    def fields(self, document: int, words: Sequence[str]) -> int:
        """The mask of the fields of ``document`` where one of ``words`` is (bit ``i`` is
        ``FIELDS[i]``)."""
        return self._index.fields(document, words)


def query_words(query: str) -> list[str]:
    """The query's distinct words, in order."""
    return list(dict.fromkeys(tokens(query)))


def _weights(words: Sequence[str]) -> dict[str, float]:
    """Each distinct word with its weight: 1, and `REPEAT` more for each repetition."""
    return {word: 1 + REPEAT * (count - 1) for word, count in Counter(words).items()}


def _best_shares(index: FieldIndex, sentences: Sequence[Sequence[str]]) -> dict[int, float]:
    """Each definition's best score in one sentence, as a share of that sentence's top score."""
    best: dict[int, float] = {}
    get = best.get
    for words in sentences:
        scores = index.scores(_weights(words))
        if not scores:
            continue
        top = max(scores.values())
        for doc, score in scores.items():
            share = score / top
            if share > get(doc, 0.0):
                best[doc] = share
    return best
