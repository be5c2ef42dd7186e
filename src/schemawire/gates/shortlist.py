"""Gate 1: a large catalogue shortlisted before the model sees it.

`ToolIndex` reads every tool's canonical schema by field (name, title, description, nested
properties, enum values, ``x-keywords``) into a small inverted index and ranks tools for a query
with BM25F, a name-coverage feature and a score per sentence of the query (``_ranking.py`` says
how). `ToolIndex.search` returns a `Shortlist`: the tools chosen with their scores and the
fields that matched, the pinned tools, and how complete it is, as JSON that
``shortlist.schema.json`` describes. The same query over the same catalogue gives the same
shortlist, byte for byte, whatever order the catalogue came in: ties are broken by name.

Tools that share a name (one catalogue from several repositories) are listed once, by their best
score.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from schemawire._json import canonical, quoted
from schemawire.errors import UsageError
from schemawire.gates._ranking import Ranker, query_words
from schemawire.gates._semantic import DenseIndex, Embedder, fuse
from schemawire.gates._tool_text import FIELDS
from schemawire.types import ToolSpec

__all__ = [
    "Shortlist",
    "ShortlistedTool",
    "ToolIndex",
    "catalogue_fingerprint",
    "shortlist_schema",
]

_DIGITS = 6  # scores are rounded so the JSON is the same on every platform


@dataclass(frozen=True)
class ShortlistedTool:
    """One tool in a shortlist.

    Attributes:
        name: the tool's name.
        score: its ranking score for the query (BM25F and its features, or with an embedder
            the reciprocal-rank fusion of BM25 and the dense ranking; 0 for a pinned tool that
            matched nothing).
        matched: the fields where a query word was found, among ``name``, ``title``,
            ``description``, ``properties``, ``enum`` and ``keywords``; empty for a tool found
            by meaning alone (or a pinned tool that shares no word with the query).
        pinned: listed because it is pinned, whatever its score.
    """

    name: str
    score: float
    matched: tuple[str, ...]
    pinned: bool = False

    def to_json(self) -> dict[str, Any]:
        """This tool as ``shortlist.schema.json`` has it."""
        return {
            "name": self.name,
            "score": self.score,
            "matched": list(self.matched),
            "pinned": self.pinned,
        }


@dataclass(frozen=True)
class Shortlist:
    """What `ToolIndex.search` found for one query, and how complete it is.

    Attributes:
        query: the query as given.
        k: how many ranked tools were asked for.
        tools: the ranked tools, best first, then the pinned ones.
        catalogue_size: how many tools (distinct names) the index holds.
        sources: how many of them come from each source (tools given no source are not counted).
        total_matches: how many tools share a word with the query, in every mode: an embedder
            ranks every tool, so counting its ranking would say nothing.
        hint: what to try when no tool shares a word with the query (with an embedder the
            listed tools are then ranked by meaning alone), else ``None``.
        ranker: ``"bm25"``, or ``"bm25+dense"`` when the index has an embedder (then tools that
            share no word with the query may be listed, with ``matched`` empty: `by_meaning`).
    """

    query: str
    k: int
    tools: tuple[ShortlistedTool, ...]
    catalogue_size: int
    sources: Mapping[str, int] = field(default_factory=dict)
    total_matches: int = 0
    hint: str | None = None
    ranker: str = "bm25"

    @property
    def returned(self) -> int:
        """How many of the tools that share a word with the query are in `tools` (a tool listed
        by meaning alone, or pinned, that shares none is listed but not counted)."""
        return sum(1 for tool in self.tools if tool.matched)

    @property
    def by_meaning(self) -> int:
        """How many ranked (not pinned) tools in `tools` share no word with the query: found by
        the embedder alone (always 0 with BM25 alone)."""
        return sum(1 for tool in self.tools if not tool.matched and not tool.pinned)

    @property
    def truncated(self) -> bool:
        """Whether more tools share a word with the query than the shortlist lists."""
        return self.total_matches > self.returned

    def _catalogue(self) -> dict[str, Any]:
        return {"size": self.catalogue_size, "sources": dict(sorted(self.sources.items()))}

    def to_json(self) -> dict[str, Any]:
        """This shortlist as plain JSON, as ``shortlist.schema.json`` describes it."""
        shown: dict[str, Any] = {
            "query": self.query,
            "k": self.k,
            "tools": [tool.to_json() for tool in self.tools],
            "catalogue": self._catalogue(),
            "total_matches": self.total_matches,
            "returned": self.returned,
            "truncated": self.truncated,
        }
        if self.hint is not None:
            shown["hint"] = self.hint
        if self.ranker != "bm25":  # BM25 alone: the JSON it always had
            shown["ranker"] = self.ranker
            shown["by_meaning"] = self.by_meaning
        return shown


class ToolIndex:
    """A BM25F index over a catalogue's canonical schemas.

    Build one per catalogue and build it again when the catalogue changes; searching never
    changes it.

    Args:
        specs: the catalogue.
        pinned: names of tools every shortlist lists, after the ranked ones.
        sources: where each tool comes from (an MCP server, a repository), by name.
        embedder: a callable that turns texts into vectors (`Embedder`, e.g.
            `semantic_embedder()`): each tool's text is embedded once, here, and each query
            when searched, and the dense ranking is fused with BM25 (`Shortlist.ranker` is
            ``"bm25+dense"``). ``None``: BM25 alone.

    Raises:
        UsageError: a pinned tool or a source names a tool the catalogue does not have, or the
            embedder did not return one finite vector per text, all of one size.
    """

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        *,
        pinned: Collection[str] = (),
        sources: Mapping[str, str] | None = None,
        embedder: Embedder | None = None,
        _fingerprint: str | None = None,
    ) -> None:
        self._names = [spec.name for spec in specs]
        known = set(self._names)
        _refuse_unknown("pinned", pinned, known)
        _refuse_unknown("sources", sources or {}, known)
        self._pinned = tuple(sorted(set(pinned)))
        self._pinned_set = frozenset(self._pinned)
        self._sources = dict(Counter((sources or {}).values()))
        self._documents: dict[str, list[int]] = {}
        for number, name in enumerate(self._names):
            self._documents.setdefault(name, []).append(number)
        self._ranker = Ranker(specs)
        self._dense = None if embedder is None else DenseIndex(specs, embedder)
        # `refreshed` has just computed it (about 55 ms at 2,405 tools): not twice.
        self.fingerprint = _fingerprint or catalogue_fingerprint(specs, sources)

    @property
    def size(self) -> int:
        """How many tools (distinct names) the index holds: what a shortlist can list, and
        what `Shortlist.sources` counts."""
        return len(self._documents)

    @property
    def definitions(self) -> int:
        """How many definitions the index holds (a name several sources define counts each)."""
        return len(self._names)

    @property
    def pinned(self) -> tuple[str, ...]:
        """The pinned tools' names, sorted."""
        return self._pinned

    def refreshed(
        self,
        specs: Sequence[ToolSpec],
        *,
        sources: Mapping[str, str] | None = None,
        pinned: Collection[str] | None = None,
    ) -> ToolIndex:
        """This index if ``specs`` (in any order) and the pins are the ones it was built from,
        else a new one over ``specs``, with the same embedder.

        What a host or gateway calls whenever it may have a new catalogue (an MCP server's
        ``tools/list_changed``, an edited schema file): an unchanged one keeps its index, and
        its shortlists byte for byte; a changed one is indexed (and embedded) once.

        Args:
            specs: the catalogue now.
            sources: where each tool comes from, by name.
            pinned: the pins now; ``None`` keeps this index's pins that ``specs`` still has
                (a pinned tool the new catalogue no longer has stops being pinned).

        Raises:
            UsageError: as the constructor: a pinned tool or a source the catalogue lacks.
        """
        names = {spec.name for spec in specs}
        wanted = [n for n in self._pinned if n in names] if pinned is None else sorted(set(pinned))
        fingerprint = catalogue_fingerprint(specs, sources)
        if fingerprint == self.fingerprint and tuple(wanted) == self._pinned:
            return self
        embedder = None if self._dense is None else self._dense.embedder
        return type(self)(
            specs, pinned=wanted, sources=sources, embedder=embedder, _fingerprint=fingerprint
        )

    def search(self, query: str, k: int = 5) -> Shortlist:
        """The ``k`` tools that best match ``query``, then the pinned ones.

        Raises:
            UsageError: ``k`` is not a positive integer.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise UsageError(
                f"a shortlist holds at least one tool: k must be 1 or more, not {quoted(k)}"
            )
        words = query_words(query)
        scores = self._ranker.scores(query)
        bm25_best = self._best_per_name(scores)
        ranking = bm25_best
        if self._dense is not None and words:  # a query of stop words asks for nothing
            ranking = fuse(bm25_best, self._dense.ranking(query))
        unpinned = (item for item in ranking.items() if item[0] not in self._pinned_set)
        ranked = heapq.nsmallest(k, unpinned, key=_rank)
        chosen = [
            self._shortlisted(name, fused_score, bm25_best, scores, words)
            for name, fused_score in ranked
        ]
        chosen += [
            self._shortlisted(name, ranking.get(name, 0.0), bm25_best, scores, words, pinned=True)
            for name in self._pinned
        ]
        by_meaning = self._dense is not None and any(not tool.pinned for tool in chosen)
        return Shortlist(
            query=query,
            k=k,
            tools=tuple(chosen),
            catalogue_size=self.size,
            sources=self._sources,
            total_matches=len(bm25_best),
            hint=None if bm25_best else _hint(words, by_meaning=by_meaning),
            ranker="bm25" if self._dense is None else "bm25+dense",
        )

    def _best_per_name(self, scores: dict[int, float]) -> dict[str, float]:
        """Each matching name's best score over its definitions."""
        best: dict[str, float] = {}
        names = self._names
        for document, score in scores.items():
            name = names[document]
            if name not in best or score > best[name]:
                best[name] = score
        return best

    def _shortlisted(
        self,
        name: str,
        fused_score: float,
        bm25_best: dict[str, float],
        scores: dict[int, float],
        words: list[str],
        *,
        pinned: bool = False,
    ) -> ShortlistedTool:
        """One listed tool: its (fused) score, and the fields of every definition with the
        name's best BM25 score (the same whatever their order; none if it shares no word)."""
        mask = 0
        for document in self._documents[name]:
            if document in scores and scores[document] == bm25_best.get(name):
                mask |= self._ranker.fields(document, words)
        matched = tuple(field for bit, field in enumerate(FIELDS) if mask & 1 << bit)
        return ShortlistedTool(name, round(fused_score, _DIGITS), matched, pinned)


def shortlist_schema() -> dict[str, Any]:
    """The JSON Schema every shortlist's JSON (`Shortlist.to_json`) is valid against, as shipped
    in ``shortlist.schema.json``: a copy of its own for each caller."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


@functools.cache
def _schema_text() -> str:
    return resources.files("schemawire.gates").joinpath("shortlist.schema.json").read_text("utf-8")


def catalogue_fingerprint(
    specs: Sequence[ToolSpec], sources: Mapping[str, str] | None = None
) -> str:
    """A SHA-256 of everything the index reads of a catalogue (each tool's name, description and
    input schema, and its source), the same whatever order the tools come in."""
    tools = sorted(
        canonical([spec.name, spec.description, spec.input_schema, (sources or {}).get(spec.name)])
        for spec in specs
    )
    return hashlib.sha256("\n".join(tools).encode()).hexdigest()


def _rank(item: tuple[str, float]) -> tuple[float, str]:
    name, score = item
    return (-score, name)


def _hint(words: list[str], *, by_meaning: bool) -> str:
    """What to try when no tool shares a word with the query; ``by_meaning``: tools are listed
    all the same, ranked by the embedder alone."""
    if not words:
        return (
            "the query has no words to look for (only stop words or punctuation): "
            'say what the tool should do, e.g. "create issue" or "weather forecast"'
        )
    missing = (
        f"no tool's name, title, description, properties, enum values or keywords contain "
        f"{', '.join(quoted(word) for word in words)}"
    )
    if by_meaning:
        return (
            f"{missing}: the listed tools are ranked by meaning alone, so check that they do "
            "what was asked, or use the words of the tool's name or description"
        )
    return (
        f"{missing}: try other words or synonyms, fewer words, "
        "or the name of the server or the thing the tool acts on (a schema's x-keywords can "
        "hold the words users say for its tool)"
    )


def _refuse_unknown(what: str, names: Collection[str], known: set[str]) -> None:
    unknown = sorted(set(names) - known)
    if unknown:
        raise UsageError(
            f"{what} names tools the catalogue does not have: {', '.join(map(quoted, unknown))}"
        )
