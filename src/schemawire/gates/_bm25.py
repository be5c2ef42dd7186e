"""Field-weighted Okapi BM25 on a small inverted index, scored ahead of the query.

A word's weighted count in a document is its count in each field times the field's weight; the
document's length is weighted the same way. Everything but the sum over the query's words is
computed once, when the index is built, so a query only adds numbers up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["FieldIndex"]

_K1 = 1.2  # how fast repeating a word stops adding to a score
_B = 0.75  # how much a long document's score is scaled down


class FieldIndex:
    """BM25 over documents given as their tokens by field.

    Args:
        documents: each document's tokens, by field name.
        fields: every field name, in order: bit ``i`` of a match's mask is field ``i``.
        weights: how much a word counts in each field.
    """

    def __init__(
        self,
        documents: Sequence[Mapping[str, Sequence[str]]],
        fields: Sequence[str],
        weights: Mapping[str, float],
    ) -> None:
        counts: list[dict[str, float]] = []
        self._masks: dict[str, dict[int, int]] = {}
        lengths: list[float] = []
        for number, document in enumerate(documents):
            count, length = self._count(number, document, fields, weights)
            counts.append(count)
            lengths.append(length)
        # fsum: the same sum in any order, so a shuffled catalogue scores the same.
        average = (math.fsum(lengths) / len(lengths) if lengths else 0.0) or 1.0
        self._gains = self._precompute(counts, lengths, average)

    def scores(self, words: Sequence[str]) -> dict[int, float]:
        """Each document that has one of ``words`` (distinct), with its score."""
        scores: dict[int, float] = {}
        get = scores.get
        for word in words:
            for document, gain in self._gains.get(word, ()):
                scores[document] = get(document, 0.0) + gain
        return scores

    def fields(self, document: int, words: Sequence[str]) -> int:
        """The mask of the fields of ``document`` where one of ``words`` is."""
        mask = 0
        for word in words:
            mask |= self._masks.get(word, {}).get(document, 0)
        return mask

    def _count(
        self,
        number: int,
        document: Mapping[str, Sequence[str]],
        fields: Sequence[str],
        weights: Mapping[str, float],
    ) -> tuple[dict[str, float], float]:
        count: dict[str, float] = {}
        length = 0.0
        for bit, name in enumerate(fields):
            words = document.get(name, ())
            weight = weights[name]
            length += weight * len(words)
            for word in words:
                count[word] = count.get(word, 0.0) + weight
                masks = self._masks.setdefault(word, {})
                masks[number] = masks.get(number, 0) | 1 << bit
        return count, length

    def _precompute(
        self, counts: list[dict[str, float]], lengths: list[float], average: float
    ) -> dict[str, list[tuple[int, float]]]:
        """Per word, each document's whole contribution: idf times the saturated count."""
        total = len(counts)
        gains: dict[str, list[tuple[int, float]]] = {}
        for word, documents in self._masks.items():
            idf = math.log(1 + (total - len(documents) + 0.5) / (len(documents) + 0.5))
            gains[word] = [
                (doc, idf * _saturated(counts[doc][word], lengths[doc], average))
                for doc in sorted(documents)
            ]
        return gains


def _saturated(count: float, length: float, average: float) -> float:
    return count * (_K1 + 1) / (count + _K1 * (1 - _B + _B * length / average))
