"""Gate 1 in the agent loop: a large catalogue shortlisted before the model sees it.

A host with ``HostOptions(shortlist=k)`` (or ``search_tools=True``) keeps its whole catalogue as
one `ToolIndex` (`ToolCatalogue`), and each model request carries only part of it (`Selection`):

- the ``k`` tools that best match the user's request (the host's pre-selection),
- the pinned tools, every tool already called in the conversation,
- the tools a ``search_tools`` call found, and ``search_tools`` itself (first, so that the
  start of the tool list stays put for the providers' prompt caches).

The tools go in the catalogue's order, not the scores', and the same selection is the same
tuple of `ToolRef`, so an unchanged selection renders byte for byte the same tool list on
every turn. Every call is still gated against the whole catalogue: a tool the model was never
shown is checked against its full canonical schema and runs if valid.

``search_tools`` and what it finds are plain function tools, unless the host asks for its API's
own tool-search form (``search_form="native"``: `ToolRef.searches`, `ToolRef.deferred`); each
tool keeps, for the run, the form it was first sent in (`Selection`).

The catalogue is re-read before each request: an MCP server that said its tool list changed
(``notifications/tools/list_changed``, on either protocol) is listed again, and the index is
rebuilt only then (`ToolIndex.refreshed`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from functools import cache
from typing import Any

from schemawire._json import quoted
from schemawire.errors import ServerError, UsageError
from schemawire.gates import (
    Embedder,
    ResultGate,
    Shortlist,
    ToolIndex,
    Verdict,
    shortlist_schema,
)
from schemawire.host._toolset import Toolset
from schemawire.host.tools import McpTool, ToolRunner, mcp_tools
from schemawire.schema.repository import Repository
from schemawire.schema.validator import CompiledSchema
from schemawire.trace import Trace, record_shortlist, record_verdicts
from schemawire.types import ToolResult, ToolSpec
from schemawire.wire import AssistantTurn, Entry, FoundTools, ToolOutputs, ToolRef

__all__ = [
    "DEFAULT_SEARCH_K",
    "MAX_SEARCH_K",
    "PRESELECTION_LABEL",
    "SEARCH_LABEL",
    "SEARCH_TOOL",
    "SearchTool",
    "Selection",
    "ToolCatalogue",
    "search_tool_spec",
]

SEARCH_TOOL = "search_tools"
"""The name of the tool the model searches the catalogue with."""
DEFAULT_SEARCH_K = 5
"""Tools one search returns when the model does not say."""
MAX_SEARCH_K = 20
"""The most tools one search may ask for."""
PRESELECTION_LABEL = "host:preselection"
"""Where the host's pre-selection is in the trace."""
SEARCH_LABEL = f"host:{SEARCH_TOOL}"
"""Where a ``search_tools`` call's shortlist is in the trace."""

# It never lists the catalogue: the point is that the model does not read it.
_SEARCH_DESCRIPTION = (
    "Find more tools. You were given only the tools that best match the request; many more "
    "exist. Describe what the tool you need should do (a few words, e.g. 'refund an order' or "
    "'list files in a directory'). The tools found are added to your tools for your next "
    "turn; the answer lists their names with scores and which of their fields matched."
)


@cache
def search_tool_spec() -> ToolSpec:
    """``search_tools``: its canonical input schema (a query, and how many tools), and the
    shortlist schema its results are checked against."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "What the tool should do, in a few words.",
            },
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_K,
                "description": f"How many tools to find (default {DEFAULT_SEARCH_K}).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
        "description": _SEARCH_DESCRIPTION,
    }
    return ToolSpec(SEARCH_TOOL, schema, output_schema=shortlist_schema())


class SearchTool:
    """``search_tools`` as a tool the host runs: its arguments passed the argument gate like
    any tool's; it searches the catalogue's index as it is now, records the shortlist as a
    trace hop, and answers a `FoundTools` whose content is the shortlist JSON, checked against
    ``shortlist.schema.json`` by its result gate."""

    def __init__(self, catalogue: ToolCatalogue) -> None:
        self.spec = search_tool_spec()
        self.validator: CompiledSchema | None = None  # the gate compiles the spec's schema
        self.repository: Repository | None = None
        self._catalogue = catalogue
        self._results = ResultGate(self.spec)

    async def run(self, call_id: str, accepted: Verdict, trace: Trace) -> Verdict:
        """See `ToolRunner.run`."""
        record_verdicts(trace, "host", accepted)
        arguments: dict[str, Any] = accepted.value
        shortlist = self._catalogue.index.search(
            arguments["query"], arguments.get("k") or DEFAULT_SEARCH_K
        )
        record_shortlist(trace, SEARCH_LABEL, shortlist)
        verdict = self._results.check(shortlist.to_json(), call_id=call_id)
        record_verdicts(trace, "host", verdict)
        if not verdict.accepted:  # the index broke its own schema: the model reads why
            return verdict
        return verdict.replace(value=_found(verdict.value, shortlist))


def _found(result: ToolResult, shortlist: Shortlist) -> FoundTools:
    """The checked result as a search result naming the tools it found (not the pinned ones:
    every request carries those already)."""
    found = tuple(tool.name for tool in shortlist.tools if not tool.pinned)
    return FoundTools(result.call_id, result.content, result.is_error, result.structured, found)


class ToolCatalogue:
    """A host's tools as one index, with ``search_tools`` beside them when it is offered.

    Args:
        runners: the tools, in the order requests list them.
        offer: how the host projects runners for its model's API, each with its gate, given
            the runner to send in the API's own tool-search form (or None: none).
        pinned: tools every request carries.
        search: offer ``search_tools``.
        native: send ``search_tools`` and what it finds in the API's own tool-search form,
            where it has one (``HostOptions(search_form="native")``); else as plain functions.
        complete: ``runners`` are the whole catalogue, so a pin must name one of them; a host
            whose MCP servers are not connected yet has only part of it, and pins what it
            has (the servers' tools are pinned once they are listed).
        embedder: rank by meaning too (`ToolIndex`'s ``embedder``).

    Raises:
        UsageError: a pinned tool is not in a complete catalogue, a tool is named
            ``search_tools`` while the host offers its own, or `Toolset` refuses the runners.
    """

    def __init__(
        self,
        runners: Sequence[ToolRunner],
        offer: Callable[[Sequence[ToolRunner], ToolRunner | None], Toolset],
        *,
        pinned: Collection[str] = (),
        search: bool = True,
        native: bool = False,
        complete: bool = True,
        embedder: Embedder | None = None,
    ) -> None:
        self._offer = offer
        self._pinned = tuple(pinned)
        self._runners = list(runners)
        self._listed = _listings(self._runners)
        self.search = SearchTool(self) if search else None
        self.native = native and search
        if search:
            _refuse_search_twin(self._runners)
        specs = [runner.spec for runner in self._runners]
        if complete:
            _refuse_unknown_pins(self._pinned, specs)
        self.toolset = self._offered()
        pins = self._pinned if complete else self._pins_in(specs)
        self.index = ToolIndex(
            specs, pinned=pins, sources=_sources(self._runners), embedder=embedder
        )

    @property
    def search_ref(self) -> ToolRef | None:
        """``search_tools`` as requests show it, when it is offered."""
        return self.toolset.tools[SEARCH_TOOL].ref if self.search is not None else None

    def _offered(self) -> Toolset:
        search: list[ToolRunner] = [self.search] if self.search is not None else []
        return self._offer([*self._runners, *search], self.search if self.native else None)

    async def refresh(self) -> bool:
        """Re-read the MCP servers' tool lists (a server that said its list changed is listed
        again; the others answer from their clients' copies). When one changed, project the
        catalogue again and refresh the index; else change nothing.

        Returns:
            whether the catalogue changed.
        """
        changed = False
        for client, listed in list(self._listed.items()):
            try:
                now = tuple(t.spec for t in await client.list_tools() if t.spec is not None)
            except ServerError:  # gone: its calls say so; its tools stay until it is back
                continue
            if len(now) == len(listed) and all(a is b for a, b in zip(now, listed, strict=True)):
                continue
            runners = await mcp_tools(client)
            self._listed[client] = tuple(runner.spec for runner in runners)
            self._runners = _replaced(self._runners, client, runners)
            changed = True
        if changed:
            if self.search is not None:
                _refuse_search_twin(self._runners)
            self.toolset = self._offered()
            self.index = self._reindexed()
        return changed

    def _reindexed(self) -> ToolIndex:
        """The index over the runners as they are now: the same one when the catalogue is
        unchanged (`ToolIndex.refreshed`), with every pin the catalogue now has (a pinned tool
        that went away and came back is pinned again)."""
        specs = [runner.spec for runner in self._runners]
        sources = _sources(self._runners)
        # One rebuild (and one embedding) at most, whether the catalogue or the pins changed.
        return self.index.refreshed(specs, sources=sources, pinned=self._pins_in(specs))

    def _pins_in(self, specs: Sequence[ToolSpec]) -> tuple[str, ...]:
        names = {spec.name for spec in specs}
        return tuple(name for name in self._pinned if name in names)


def _refuse_search_twin(runners: Sequence[ToolRunner]) -> None:
    """Refuse a tool of the catalogue named like the host's own search tool (an MCP gateway
    that shortlists lists one).

    Raises:
        UsageError: one is.
    """
    twin = next((runner for runner in runners if runner.spec.name == SEARCH_TOOL), None)
    if twin is None:
        return
    where = "a tool"
    if isinstance(twin, McpTool):
        where = f"the MCP server {quoted(twin.client.server.label)}"
    raise UsageError(
        f"{where} has a tool named {SEARCH_TOOL}, the name of the host's own search tool (a "
        f"gateway that shortlists has one): turn the host's off (schemawire run "
        f"--no-search-tools, HostOptions(search_tools=False)), or rename the tool"
    )


def _refuse_unknown_pins(pinned: Iterable[str], specs: Sequence[ToolSpec]) -> None:
    """Refuse a pin that names no tool of the catalogue.

    Raises:
        UsageError: one does.
    """
    names = {spec.name for spec in specs}
    unknown = [name for name in dict.fromkeys(pinned) if name not in names]
    if unknown:
        listed = ", ".join(quoted(name) for name in unknown)
        raise UsageError(
            f"the pinned tools {listed} are not in the catalogue: pin tools by their canonical "
            f"names (schemawire tools lists them)"
        )


def _listings(runners: Sequence[ToolRunner]) -> dict[Any, tuple[ToolSpec, ...]]:
    """Each MCP client behind ``runners``, with the specs its runners were made from: the
    client's own objects, which it makes anew when the server says its list changed."""
    listings: dict[Any, tuple[ToolSpec, ...]] = {}
    for runner in runners:
        if isinstance(runner, McpTool):
            listings[runner.client] = (*listings.get(runner.client, ()), runner.spec)
    return listings


def _replaced(runners: list[ToolRunner], client: Any, new: list[McpTool]) -> list[ToolRunner]:
    """``runners`` with ``client``'s tools replaced by ``new``, where its first tool was."""
    kept: list[ToolRunner] = []
    placed = False
    for runner in runners:
        if isinstance(runner, McpTool) and runner.client is client:
            if not placed:
                kept.extend(new)
                placed = True
            continue
        kept.append(runner)
    return kept if placed else [*kept, *new]


def _sources(runners: Sequence[ToolRunner]) -> dict[str, str]:
    """Where each tool comes from, for the shortlist's catalogue: its MCP server's label, or
    ``python``."""
    return {
        runner.spec.name: runner.client.label if isinstance(runner, McpTool) else "python"
        for runner in runners
    }


class Selection:
    """The tools one run's requests carry, chosen from a `ToolCatalogue`.

    Each tool is sent in one form for the whole run, the one it had when it was first sent: a
    tool first pre-selected, pinned or called is a plain tool; one first found by a search
    is deferred (loaded by the search's result) where the API has a form for that and the
    host asked for it (``search_form="native"``). A tool never changes form later (a call,
    a search that finds it again, a new pre-selection after the catalogue changed): the
    requests before stay true, and the tool list, and the providers' caches over it, stay put.

    Args:
        catalogue: the host's catalogue.
        query: the user's request, which the pre-selection ranks the catalogue for.
        k: how many tools the pre-selection keeps (None: none; the model starts with the
            pinned tools and ``search_tools``).
        trace: where each pre-selection is recorded.
    """

    def __init__(self, catalogue: ToolCatalogue, query: str, k: int | None, trace: Trace) -> None:
        self.catalogue = catalogue
        self._query, self._k, self._trace = query, k, trace
        self._preselected: tuple[ToolIndex, frozenset[str]] | None = None
        self._deferred: dict[str, bool] = {}  # every tool sent so far: whether as deferred
        self._mentioned: set[str] = set()  # the tools the conversation called or found
        self._read = 0  # the conversation's entries read so far
        self._sent: tuple[ToolRef, ...] = ()

    async def tools_for(self, conversation: Sequence[Entry]) -> tuple[ToolRef, ...]:
        """The tools the next request carries, in the catalogue's order, ``search_tools``
        first: the same tuple as last time when they are the same."""
        await self.catalogue.refresh()
        self._read_forms(conversation)
        chosen = self._preselection() | set(self.catalogue.index.pinned)
        for name in chosen:
            self._deferred.setdefault(name, False)
        refs = self._refs(self.catalogue.toolset, chosen)
        if refs != self._sent:
            self._sent = refs
        return self._sent

    def _read_forms(self, conversation: Sequence[Entry]) -> None:
        """Give each tool the conversation's new entries call or find its form, in the order
        they do (a tool called, then found, stays plain); a form given stays."""
        if self._read > len(conversation):  # another conversation: read it from its start
            self._read = 0
        native = self.catalogue.native
        for entry in conversation[self._read :]:
            for name, found in _named_in(entry):
                self._deferred.setdefault(name, found and native)
                self._mentioned.add(name)
        self._read = len(conversation)

    def _preselection(self) -> frozenset[str]:
        """The pre-selection's tools, ranked again (and traced) only when the index changed."""
        if self._k is None:
            return frozenset()
        index = self.catalogue.index
        if self._preselected is None or self._preselected[0] is not index:
            shortlist = index.search(self._query, self._k)
            record_shortlist(self._trace, PRESELECTION_LABEL, shortlist)
            names = frozenset(tool.name for tool in shortlist.tools)
            self._preselected = (index, names)
        return self._preselected[1]

    def _refs(self, toolset: Toolset, chosen: Collection[str]) -> tuple[ToolRef, ...]:
        """The pre-selected and pinned tools (``chosen``) and those the conversation called
        or found, each in its form; ``search_tools`` first."""
        search = self.catalogue.search_ref
        refs: list[ToolRef] = [search] if search is not None else []
        for ref in toolset.refs:
            if ref is search:
                continue
            if ref.name not in chosen and ref.name not in self._mentioned:
                continue
            deferred = self._deferred.get(ref.name, False)
            refs.append(dataclasses.replace(ref, deferred=True) if deferred else ref)
        return tuple(refs)


def _named_in(entry: Entry) -> Iterator[tuple[str, bool]]:
    """Every tool ``entry`` names, in its order, and whether a search found it (else the model
    called it; refused calls too: the model sees the schema it broke)."""
    if isinstance(entry, AssistantTurn):
        for call in entry.tool_calls:
            yield call.name, False
    elif isinstance(entry, ToolOutputs):
        for result in entry.results:
            if isinstance(result, FoundTools):
                for name in result.found:
                    yield name, True
