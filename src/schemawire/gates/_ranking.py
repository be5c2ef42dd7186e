"""How the shortlist ranks a catalogue for a query: BM25F over each tool's fields, then the query.

The tool side is `FieldIndex` (BM25F with name coverage); this module holds its tuning and the
query side:

- A word the query repeats counts a little more (``REPEAT`` per repetition): "the area of the
  rectangle and the area of the circle" is about areas.
- A query of several sentences usually asks for several tools ("First, convert 5000 yen to
  dollars. Then convert 15 km to miles."). Each sentence is also scored on its own, and a tool's
  best share of a sentence's top score adds ``SENTENCE`` times the whole query's top score, so
  the tool one sentence asks for is not crowded out by tools that share words with all of them.
- Users and tools name things differently ("get rid of the folder", ``delete_directory``), so
  the query also looks for the words related to its own (`_related_words`), each counting less
  than a word the user wrote (a word both written and related counts once, as written):
  ``RELATED`` for a word the catalogue does not have (the user's word cannot match, a related
  one is the only way in), ``RELATED_KNOWN`` for one it has. The related words of one word or
  phrase are one meaning between them: they share its weight (each gets it over the square
  root of how many the catalogue has). A long query already says what it means in many words:
  past ``SHORT`` words, related words count proportionally less, and below ``FLOOR`` not at all
  (which also keeps a long query as fast as it was).

The BM25 figures were tuned on the even-numbered queries of the BFCL set and checked on the odd
ones; the related words' on the even-numbered queries of the user-style set and checked on the
odd ones, BFCL and the reference servers' cases (BENCHMARKS.md, gate 1). Nothing in here knows a
word of either set.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from schemawire._words import tokens
from schemawire.gates._bm25 import Field, FieldIndex
from schemawire.gates._related_words import related_words
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
RELATED = 1.2  # the related words of a query word the catalogue lacks, shared between them
RELATED_KNOWN = 0.6  # the related words of a query word the catalogue has, shared between them
SHORT = 10  # distinct words past which a query's related words count proportionally less
FLOOR = 0.1  # the least weight a related word is looked for at
# Sentences scored on their own, from the first: a pasted document as the user's turn would
# otherwise cost a pass over the index per sentence (hundreds of milliseconds).
MOST_SENTENCES = 24

# Where a query's sentences end: . ? ! ; or a line break, then white space.
_SENTENCE_END = re.compile(r"[.?!;\n]+\s")


class Ranker:
    """Scores a catalogue's definitions for a query.

    Args:
        specs: the catalogue; a document's number is its place in ``specs``.
    """

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        documents = [field_tokens(spec) for spec in specs]
        self._index = FieldIndex(
            documents,
            [spec.name for spec in specs],
            {name: TUNING[name] for name in FIELDS},
            k1=K1,
            coverage=COVERAGE,
            coverage_field="name",
        )
        self._vocabulary = frozenset(
            word for document in documents for words in document.values() for word in words
        )
        self._last: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        # Read (once a process, about 13 ms) with the index, not at the first query.
        self._table = related_words()

    def scores(self, query: str) -> dict[int, float]:
        """Each definition that shares a word (or a related word) with ``query``, with its
        score."""
        # The separators split on are not word characters: the sentences' words are the query's.
        sentences = [words for part in _SENTENCE_END.split(query) if (words := tokens(part))]
        words = [word for sentence in sentences for word in sentence]
        damping = _damping(len(set(words)))
        scores = self._index.scores(self._weights(words, damping))
        if len(sentences) < 2 or not scores:
            return scores
        # A sentence's related words are the whole query's, at no more than its weights (the
        # same damping): every tool a sentence finds, the whole query found.
        each = [self._weights(sentence, damping) for sentence in sentences[:MOST_SENTENCES]]
        weight = SENTENCE * max(scores.values())
        for doc, share in _best_shares(self._index, each).items():
            scores[doc] += weight * share
        return scores

    def fields(self, document: int, words: Sequence[str]) -> int:
        """The mask of the fields of ``document`` where one of ``words`` (the query's distinct
        words, `query_words`) or a word related to them that the query looked for is (bit ``i``
        is ``FIELDS[i]``): a tool found by a related word alone still says where."""
        return self._index.fields(document, self._looked_for(tuple(words)))

    def _looked_for(self, words: tuple[str, ...]) -> tuple[str, ...]:
        """``words`` and the related words a query of them looks for (the last query's kept: a
        shortlist asks for each of its tools)."""
        last = self._last
        if last[0] == words:
            return last[1]
        found = (*words, *sorted(self._related(words, _damping(len(words)))))
        self._last = (words, found)
        return found

    def _weights(self, words: Sequence[str], damping: float) -> dict[str, float]:
        """Each distinct word of ``words`` with its weight (1, and `REPEAT` more for each
        repetition), then each related word they do not have, its weight times ``damping``."""
        weights = {word: 1 + REPEAT * (count - 1) for word, count in Counter(words).items()}
        for word, weight in sorted(self._related(words, damping).items()):
            if word not in weights:
                weights[word] = weight
        return weights

    def _related(self, words: Sequence[str], damping: float) -> dict[str, float]:
        """The words related to ``words`` that the catalogue has, each at its best weight."""
        found: dict[str, float] = {}
        vocabulary = self._vocabulary
        for phrase, others in self._table.related(words):
            usable = others & vocabulary
            if not usable:
                continue
            known = all(word in vocabulary for word in phrase)
            weight = damping * (RELATED_KNOWN if known else RELATED) / len(usable) ** 0.5
            if weight < FLOOR:
                continue
            for word in usable:
                if found.get(word, 0.0) < weight:
                    found[word] = weight
        return found


def query_words(query: str) -> list[str]:
    """The query's distinct words, in order."""
    return list(dict.fromkeys(tokens(query)))


def _damping(distinct: int) -> float:
    """How much a query of ``distinct`` words leans on related words: fully up to `SHORT`
    words, then in proportion."""
    return min(1.0, SHORT / distinct) if distinct else 1.0


def _best_shares(index: FieldIndex, sentences: Sequence[Mapping[str, float]]) -> dict[int, float]:
    """Each definition's best score in one sentence (its words' weights), as a share of that
    sentence's top score."""
    best: dict[int, float] = {}
    get = best.get
    for weights in sentences:
        scores = index.scores(weights)
        if not scores:
            continue
        top = max(scores.values())
        for doc, score in scores.items():
            share = score / top
            if share > get(doc, 0.0):
                best[doc] = share
    return best
