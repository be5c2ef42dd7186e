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

import hashlib
import heapq
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schemawire._json import canonical, quoted
from schemawire.errors import UsageError
from schemawire.gates._ranking import Ranker, query_words
from schemawire.gates._semantic import DenseIndex, Embedder, fuse
from schemawire.gates._tool_text import FIELDS
from schemawire.types import ToolSpec

__all__ = ["Shortlist", "ShortlistedTool", "ToolIndex", "catalogue_fingerprint"]

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
            ``description``, ``properties``, ``enum`` and ``keywords``.
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
        catalogue_size: how many tools the index holds.
        sources: how many of them come from each source (tools given no source are not counted).
        total_matches: how many tools match the query: share a word with it, or, when a
            dense ranker is fused, are ranked by it at all (then every tool).
        hint: what to try when nothing matched, else ``None``.
        ranker: ``"bm25"``, or ``"bm25+dense"`` when the index has an embedder (then tools that
            share no word with the query may be listed, with ``matched`` empty).
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
        """How many of the matching tools are in `tools` (a pinned tool that does not match the
        query is listed but not counted)."""
        return sum(1 for tool in self.tools if tool.matched or tool.score > 0)

    @property
    def truncated(self) -> bool:
        """Whether more tools matched than the shortlist holds."""
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
        self._index = Ranker(specs)
        self._dense = None if embedder is None else DenseIndex(specs, embedder)
        self.fingerprint = catalogue_fingerprint(specs, sources)

    @property
    def size(self) -> int:
        """How many tools the index holds."""
        return len(self._names)

    @property
    def pinned(self) -> tuple[str, ...]:
        """The pinned tools' names, sorted."""
        return self._pinned

    def refreshed(
        self, specs: Sequence[ToolSpec], *, sources: Mapping[str, str] | None = None
    ) -> ToolIndex:
        """This index if ``specs`` is the catalogue it was built from (in any order), else a new
        one over ``specs`` with the same pins: what a host or gateway calls each turn, so an
        unchanged catalogue keeps its index (and its shortlists byte for byte) and a changed
        one (an MCP server's ``tools/list_changed``, an edited schema file) is indexed again,
        with the same embedder. A pinned tool the new catalogue no longer has stops being
        pinned."""
        if catalogue_fingerprint(specs, sources) == self.fingerprint:
            return self
        names = {spec.name for spec in specs}
        pinned = [name for name in self._pinned if name in names]
        embedder = None if self._dense is None else self._dense.embedder
        return type(self)(specs, pinned=pinned, sources=sources, embedder=embedder)

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
        scores = self._index.scores(query)
        best = self._best_per_name(scores)
        ranking = best if self._dense is None else fuse(best, self._dense.ranking(query))
        unpinned = (item for item in ranking.items() if item[0] not in self._pinned_set)
        ranked = heapq.nsmallest(k, unpinned, key=_rank)
        chosen = [self._shortlisted(name, score, best, scores, words) for name, score in ranked]
        chosen += [
            self._shortlisted(name, ranking.get(name, 0.0), best, scores, words, pinned=True)
            for name in self._pinned
        ]
        return Shortlist(
            query=query,
            k=k,
            tools=tuple(chosen),
            catalogue_size=self.size,
            sources=self._sources,
            total_matches=len(ranking),
            hint=None if ranking else _hint(words),
            ranker="bm25" if self._dense is None else "bm25+dense",
        )

    def _best_per_name(self, scores: dict[int, float]) -> dict[str, float]:
        """Each matching name's best score over its definitions."""
        best: dict[str, float] = {}
        names = self._names
        for document, score in scores.items():
            name = names[document]
            if score > best.get(name, -1.0):
                best[name] = score
        return best

    def _shortlisted(
        self,
        name: str,
        score: float,
        best: dict[str, float],
        scores: dict[int, float],
        words: list[str],
        *,
        pinned: bool = False,
    ) -> ShortlistedTool:
        # The fields of every definition with the best BM25 score: the same whatever their order.
        mask = 0
        for document in self._documents[name]:
            if document in scores and scores[document] == best.get(name):
                mask |= self._index.fields(document, words)
        matched = tuple(field for bit, field in enumerate(FIELDS) if mask & 1 << bit)
        return ShortlistedTool(name, round(score, _DIGITS), matched, pinned)


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


def _hint(words: list[str]) -> str:
    if not words:
        return (
            "the query has no words to look for (only stop words or punctuation): "
            "say what the tool should do, e.g. 'create issue' or 'weather forecast'"
        )
    return (
        f"no tool's name, title, description, properties, enum values or keywords contain "
        f"{', '.join(quoted(word) for word in words)}: try other words or synonyms, fewer words, "
        "or the name of the server or the thing the tool acts on"
    )


def _refuse_unknown(what: str, names: Collection[str], known: set[str]) -> None:
    unknown = sorted(set(names) - known)
    if unknown:
        raise UsageError(
            f"{what} names tools the catalogue does not have: {', '.join(map(quoted, unknown))}"
        )
