"""The shortlist's optional dense ranking: any ``texts -> vectors`` embedder, fused with BM25.

A user callable (`Embedder`) embeds each tool's text once, when the index is built, and the
query at each search; tools are ranked by cosine similarity, and that ranking is fused with the
BM25 ranking by weighted reciprocal-rank fusion: a tool's fused score is
``1 / (RRF_K + bm25_place) + weight / (RRF_K + dense_place)`` (a place counts from 1; a tool
absent from a ranking adds nothing for it).

The dense ranking's weight depends on how sure BM25 is. When BM25's best tool scores
``CONFIDENT`` or more (the query shares several distinctive words with it, as queries written
with the tools in view do), the dense side is the weaker ranker and weighs ``DENSE_WEIGHT_SURE``;
when BM25 found little (a paraphrase, few shared words), it weighs ``DENSE_WEIGHT_UNSURE``. A
fixed weight either drags BM25's best answers down or leaves paraphrases to BM25. The figures
were chosen on the even-numbered queries of the BFCL and user-style sets and checked on the odd
ones (bench/shortlist_user.py), before BM25 had its related words: on the odd ones, user-style
R@5 0.55 -> 0.71 over BM25 alone (with the related words: 0.80 -> 0.84),
BFCL R@5 0.905 -> 0.907, R@10 0.955 -> 0.958; a fixed weight of 0.5 (k 60) gave 0.67 / 0.908 /
0.951, and of 1.0 (k 60) 0.69 / 0.889 / 0.943.

``CONFIDENT`` is an absolute BM25 score, and BM25 scores grow with the catalogue (IDF is the log
of its size): 39% of the user-style queries (159 tools) count as sure, 98% of BFCL's (1,287
names). Scale-free rules were measured against it on the same halves and none did as well on
the odd ones (user-style R@5 / BFCL R@5 / BFCL R@10, odd halves): the top score over the IDF of
a word one tool has, at 1.75 (the best on the even halves) 0.695 / 0.904 / 0.958, at 2.0
0.713 / 0.904 / 0.957; over the query's attainable maximum (each word's best gain), at 0.5
0.698 / 0.895 / 0.947; the first score over the second, at 1.25, 0.674 / 0.890 / 0.950; against
0.713 / 0.907 / 0.958 for ``CONFIDENT``. So it stays, and a much larger catalogue than BFCL's
would trust BM25 on nearly every query, as BFCL already does.

`semantic_embedder` is the ready-made embedder of the ``schemawire[semantic]`` extra: WordLlama's
static token embeddings (256 dimensions), whose weights and tokenizer ship inside the
``wordllama`` wheel and are read from its package directory, never fetched from a hub.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import operator
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import resources
from typing import Any

from schemawire.errors import UsageError
from schemawire.types import ToolSpec

__all__ = ["DenseIndex", "Embedder", "fuse", "semantic_embedder"]

Embedder = Callable[[Sequence[str]], Sequence[Sequence[float]]]
"""Texts in, one vector of floats per text out, in the same order (e.g. a NumPy array)."""

RRF_K = 5  # reciprocal-rank fusion's constant: small, so the first places count most
CONFIDENT = 10.0  # a best BM25 score from which BM25 is trusted over the embedder
DENSE_WEIGHT_SURE = 0.5  # the dense ranking's weight against BM25's 1 when BM25 is confident
DENSE_WEIGHT_UNSURE = 1.5  # and when it is not
_DIGITS = 6  # cosines are rounded before ranking, so the last bit of a sum never reorders ties
_SCALE = 10.0**_DIGITS
_INSTALL = "pip install 'schemawire[semantic]'"
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


class DenseIndex:
    """Each tool's embedding, and the tools ranked by cosine similarity to a query.

    Args:
        specs: the catalogue; several definitions of a name rank by the best of them.
        embedder: the callable that embeds texts.

    Raises:
        UsageError: the embedder did not return one finite vector per text, all of one size.
    """

    def __init__(self, specs: Sequence[ToolSpec], embedder: Embedder) -> None:
        self.embedder = embedder
        texts = [dense_text(spec) for spec in specs]
        # Distinct texts in sorted order: the embedder sees the same input whatever the
        # catalogue's order, so a shuffled catalogue gets the same vectors.
        distinct = sorted(set(texts))
        vectors = dict(zip(distinct, _embed(embedder, distinct), strict=True))
        names = [spec.name for spec in specs]
        self._matrix = _Matrix([vectors[text] for text in texts], names)

    def ranking(self, query: str) -> list[str]:
        """Every name, most similar to ``query`` first (ties by name); none when the catalogue
        is empty, the query blank, or its vector all zeros (it points nowhere, so nothing is
        near it and the shortlist's hint says what to try)."""
        if self._matrix.size is None or not query.strip():  # nothing to rank, or nothing asked
            return []
        (vector,) = _embed(self.embedder, [query], size=self._matrix.size)
        if not any(vector):
            return []
        return self._matrix.ranking(vector)


def fuse(lexical: Mapping[str, float], dense: Sequence[str]) -> dict[str, float]:
    """Weighted reciprocal-rank fusion of BM25's scores by name and a dense ranking of names,
    the dense side weighed by how sure BM25 is (see the module's docstring)."""
    places = sorted(lexical, key=lambda name: (-lexical[name], name))
    fused = {name: 1.0 / (RRF_K + place) for place, name in enumerate(places, start=1)}
    sure = bool(places) and lexical[places[0]] >= CONFIDENT
    weight = DENSE_WEIGHT_SURE if sure else DENSE_WEIGHT_UNSURE
    for place, name in enumerate(dense, start=1):
        fused[name] = fused.get(name, 0.0) + weight / (RRF_K + place)
    return fused


def dense_text(spec: ToolSpec) -> str:
    """What the embedder reads of a tool: its name as words, its description, and its
    top-level parameters' names as words (an embedder reads prose, not ``snake_case``)."""
    properties = spec.input_schema.get("properties")
    parts = [_words(spec.name) + ".", spec.description]
    if isinstance(properties, dict) and properties:
        parts.append("Parameters: " + ", ".join(_words(str(name)) for name in properties) + ".")
    return " ".join(part for part in parts if part)


def _words(name: str) -> str:
    """``get_fileInfo`` as ``get file Info``: a name's letter and digit runs, camelCase split."""
    return " ".join(_PARTS.findall(name))


def semantic_embedder() -> Embedder:
    """The ``schemawire[semantic]`` extra's embedder: WordLlama ``l2_supercat`` at 256
    dimensions, loaded once per process from the ``wordllama`` package's own files.

    Raises:
        UsageError: the extra is not installed.
    """
    return _wordllama()


_LOADING = threading.Lock()  # two threads asking at once load the weights once
_MAX_TOKENS = 512  # what WordLlama reads of a text: a batch is padded to its longest text


def _wordllama() -> Embedder:
    with _LOADING:
        return _loaded_wordllama()


@functools.cache
def _loaded_wordllama() -> Embedder:
    try:
        with _root_logging_kept():
            import wordllama  # type: ignore[import-untyped]  # no py.typed
            from safetensors import safe_open
            from tokenizers import Tokenizer
            from wordllama.inference import WordLlamaInference  # type: ignore[import-untyped]
    except ImportError as error:
        raise UsageError(
            f"the semantic ranker needs the semantic extra, which is not installed "
            f"({error.name or error} is missing): {_INSTALL}"
        ) from error
    package = resources.files(wordllama)
    # The wheel's own files, by path: WordLlama.load would look for the tokenizer in a
    # directory the wheel does not have and then try to download it.
    with safe_open(str(package / "weights" / "l2_supercat_256.safetensors"), "np") as weights:
        table = weights.get_tensor("embedding.weight")
    tokenizer = Tokenizer.from_file(
        str(package / "tokenizers" / "l2_supercat_tokenizer_config.json")
    )
    model = WordLlamaInference(table, tokenizer)
    # After the model is built (it turns truncation off): a batch of 64 texts is padded to its
    # longest, (64, tokens, 256) float32, so one 20,000-word description would take gigabytes.
    model.tokenizer.enable_truncation(_MAX_TOKENS)

    def embed(texts: Sequence[str]) -> Any:
        # Not norm=True: it divides a blank text's zero vector by zero; _embed scales to 1.
        return model.embed(list(texts), norm=False)

    return embed


@contextlib.contextmanager
def _root_logging_kept() -> Iterator[None]:
    """Undoes what importing ``wordllama`` does to the root logger
    (``logging.basicConfig(level=INFO)``): a library must not configure an application's
    logging."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


def _embed(embedder: Embedder, texts: Sequence[str], size: int | None = None) -> list[list[float]]:
    """The embedder's vectors for ``texts``, checked and scaled to length 1."""
    if not texts:  # an empty catalogue: nothing to ask
        return []
    found = embedder(list(texts))
    vectors = [[float(x) for x in vector] for vector in found]
    if len(vectors) != len(texts):
        raise UsageError(
            f"the embedder returned {len(vectors)} vectors for {len(texts)} texts: "
            "it must return one vector per text, in the order given"
        )
    for vector in vectors:
        size = _check(vector, size)
    return [_unit(vector) for vector in vectors]


def _check(vector: list[float], size: int | None) -> int:
    if not vector or (size is not None and len(vector) != size):
        raise UsageError(
            f"the embedder returned a vector of {len(vector)} numbers where the others have "
            f"{size}: every vector must have the same number of dimensions, at least one"
        )
    if not all(math.isfinite(x) for x in vector):
        raise UsageError("the embedder returned NaN or infinity: every number must be finite")
    return len(vector)


def _unit(vector: list[float]) -> list[float]:
    """``vector`` scaled to length 1; a zero vector stays zero."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


class _Matrix:
    """The tools' unit vectors and names: the names ranked by cosine similarity to a query's
    vector, each by its best definition, rounded to ``_DIGITS`` and ties broken by name. With
    NumPy when it is there (under 1 ms at 2,405 tools of 256 dimensions, with the query's
    embedding), else in plain Python (about 20 ms)."""

    def __init__(self, rows: list[list[float]], names: list[str]) -> None:
        self.size = len(rows[0]) if rows else None
        self._rows, self._names = rows, names
        self._numpy: Any = None
        try:
            import numpy
        except ImportError:
            return
        self._numpy = numpy
        self._matrix = numpy.asarray(rows, dtype=numpy.float64).reshape(len(rows), self.size or 0)
        self._rows = []  # the matrix holds them: a list of floats is three times its size
        self._distinct = sorted(set(names))  # a name's place here is its place among ties
        place = {name: number for number, name in enumerate(self._distinct)}
        self._ids = numpy.asarray([place[name] for name in names], dtype=numpy.intp)

    def ranking(self, vector: list[float]) -> list[str]:
        if self.size is None:  # no tools
            return []
        if self._numpy is None:
            return self._ranking_in_python(vector)
        numpy = self._numpy
        # einsum, not matmul: one thread and one order of summation for every row (a BLAS
        # matrix-vector product may start threads, which costs more than it saves here).
        cosines = numpy.round(numpy.einsum("ij,j->i", self._matrix, vector), _DIGITS)
        best = numpy.full(len(self._distinct), -numpy.inf)
        numpy.maximum.at(best, self._ids, cosines)
        order = numpy.lexsort((numpy.arange(len(self._distinct)), -best))
        return [self._distinct[number] for number in order.tolist()]

    def _ranking_in_python(self, vector: list[float]) -> list[str]:
        best: dict[str, float] = {}
        for name, row in zip(self._names, self._rows, strict=True):
            cosine = _rounded(sum(map(operator.mul, row, vector)))
            if cosine > best.get(name, -math.inf):
                best[name] = cosine
        return sorted(best, key=lambda name: (-best[name], name))


def _rounded(cosine: float) -> float:
    """``cosine`` rounded to ``_DIGITS`` as ``numpy.round`` does it (scaled, rounded half to
    even, scaled back), not as ``round(x, 6)`` (exact decimal): at a half they differ, and the
    ranking must be the same with NumPy or without."""
    return round(cosine * _SCALE) / _SCALE
