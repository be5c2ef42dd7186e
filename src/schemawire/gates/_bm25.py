"""BM25F on a small inverted index, with a name-coverage feature, scored ahead of the query.

BM25F (Robertson & Zaragoza): a word's count in each field is scaled by the field's weight and
by the field's own length normalisation (its ``b``, against that field's average length over
the documents that have it), the fields are added up, and the sum is saturated once with
``k1``. So a long description does not dilute a short name, and a field few tools have (a
``title``, ``x-keywords``) is measured against the tools that have one, not against zero.

IDF counts distinct tool names, not definitions: a catalogue that holds five definitions of one
name (several repositories, or BFCL) does not make that tool's words look common.

Name coverage: each of a document's name words that the query has adds ``coverage`` times its
share of the name's IDF, so a tool whose whole name the query spells out (``list_servers`` for
"list the servers") ranks above one that shares a word of its description more often.

Everything but the sum over the query's words is computed when the index is built, so a query
only adds numbers up.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Field", "FieldIndex"]


@dataclass(frozen=True)
class Field:
    """How one field counts.

    Attributes:
        weight: how much one occurrence counts against one in a weight-1 field.
        b: how much a field longer than its average is scaled down (0 none, 1 fully).
    """

    weight: float
    b: float


class FieldIndex:
    """BM25F over documents given as their tokens by field.

    Args:
        documents: each document's tokens, by field name.
        groups: each document's group (its tool name): IDF counts groups, not documents.
        fields: every field, in order: bit ``i`` of a match's mask is field ``i``.
        k1: how fast repeating a word stops adding to a score.
        coverage: what a query that has every word of ``coverage_field`` adds.
        coverage_field: the field coverage is measured on.
    """

    def __init__(
        self,
        documents: Sequence[Mapping[str, Sequence[str]]],
        groups: Sequence[str],
        fields: Mapping[str, Field],
        *,
        k1: float,
        coverage: float,
        coverage_field: str,
    ) -> None:
        self._fields = tuple(fields)
        self._masks: dict[str, dict[int, int]] = {}
        for number, document in enumerate(documents):
            self._add_masks(number, document)
        idf = _idf(self._masks, groups)
        averages = _average_lengths(documents, self._fields)
        gains: dict[str, list[tuple[int, float]]] = {}
        for number, document in enumerate(documents):
            counts = _weighted_counts(document, fields, averages)
            name = set(document.get(coverage_field, ()))
            # fsum over sorted words: the same total in every process, whatever the hash seed.
            total = math.fsum(idf[word] for word in sorted(name)) or 1.0
            for word, count in counts.items():
                gain = idf[word] * count * (k1 + 1) / (count + k1)
                if word in name:
                    gain += coverage * idf[word] / total
                gains.setdefault(word, []).append((number, gain))
        # Per word, its documents and their gains, in document order.
        self._postings = {
            word: (tuple(doc for doc, _ in pairs), tuple(gain for _, gain in pairs))
            for word, pairs in gains.items()
        }

    def scores(self, words: Mapping[str, float]) -> dict[int, float]:
        """Each document that has one of ``words``, with its score; each word's gains are
        multiplied by its weight in the query."""
        # The longest postings first, copied into the dict in one go; the rest added one by one.
        # The order is the catalogue's (length, then the word), so every process adds the same
        # numbers in the same order.
        found = [(word, weight) for word, weight in words.items() if word in self._postings]
        found.sort(key=lambda item: (-len(self._postings[item[0]][0]), item[0]))
        if not found:
            return {}
        (first, weight), rest = found[0], found[1:]
        documents, gains = self._postings[first]
        weighted = gains if weight == 1.0 else [gain * weight for gain in gains]
        scores = dict(zip(documents, weighted, strict=True))
        get = scores.get
        for word, weight in rest:
            documents, gains = self._postings[word]
            for document, gain in zip(documents, gains, strict=True):
                scores[document] = get(document, 0.0) + gain * weight
        return scores

    def fields(self, document: int, words: Sequence[str]) -> int:
        """The mask of the fields of ``document`` where one of ``words`` is."""
        mask = 0
        for word in words:
            mask |= self._masks.get(word, {}).get(document, 0)
        return mask

    def _add_masks(self, number: int, document: Mapping[str, Sequence[str]]) -> None:
        for bit, name in enumerate(self._fields):
            for word in document.get(name, ()):
                masks = self._masks.setdefault(word, {})
                masks[number] = masks.get(number, 0) | 1 << bit


def _idf(masks: Mapping[str, Mapping[int, int]], groups: Sequence[str]) -> dict[str, float]:
    """Okapi IDF (never below 0) over the distinct groups."""
    total = len(set(groups))
    idf: dict[str, float] = {}
    for word, documents in masks.items():
        having = len({groups[document] for document in documents})
        idf[word] = math.log(1 + (total - having + 0.5) / (having + 0.5))
    return idf


def _average_lengths(
    documents: Sequence[Mapping[str, Sequence[str]]], fields: Sequence[str]
) -> dict[str, float]:
    """Each field's average length over the documents where it is not empty (1 if none)."""
    averages: dict[str, float] = {}
    for name in fields:
        lengths = [len(words) for document in documents if (words := document.get(name, ()))]
        averages[name] = math.fsum(lengths) / len(lengths) if lengths else 1.0
    return averages


def _weighted_counts(
    document: Mapping[str, Sequence[str]],
    fields: Mapping[str, Field],
    averages: Mapping[str, float],
) -> dict[str, float]:
    """Each word's count over the fields, each field's count weighted and length-normalised."""
    counts: dict[str, float] = {}
    for name, field in fields.items():
        words = document.get(name, ())
        if not words or not field.weight:
            continue
        norm = 1 - field.b + field.b * len(words) / averages[name]
        for word, count in sorted(Counter(words).items()):
            counts[word] = counts.get(word, 0.0) + field.weight * count / norm
    return counts
