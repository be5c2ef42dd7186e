"""The gateway: many MCP servers served as one, every call gated both ways.

Each upstream is a gating proxy of its own (`UpstreamTools` over an `McpClient`): its tools are
checked against the repository's canonical schemas or its own, each call passes the argument
gate before it goes upstream and the result gate before it comes back, and a stdio upstream that
dies is started again for the next call to it, while the others keep serving. The gateway adds
one thing: names. The upstream ``fs``'s tool ``read_file`` is ``fs_read_file``
(`schemawire.mcp._namespaces` has the rule, and how names every provider takes are made).

An upstream that is down and cannot be started again keeps its tools listed as they last were
(so a client's tool list, and a provider's prompt cache, stay as they are); each call to one of
them is refused with ``tool_unavailable`` until the upstream is back. One that never listed its
tools lists none.

With a shortlist (``serve --shortlist``) the gateway lists only ``search_tools`` and
``call_tool`` (`schemawire.mcp._search`): a search answers from a `ToolIndex` over every
upstream's tools, rebuilt when one of them says its list changed; each search is a trace hop.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from schemawire._json import dumps, quoted
from schemawire.errors import ServerError, UsageError
from schemawire.gates import ToolIndex, Verdict
from schemawire.mcp._addresses import ServerAddress, StdioServer
from schemawire.mcp._namespaces import RESERVED, SEPARATOR, check_upstream_name, namespaced
from schemawire.mcp._search import SEARCH_TOOLS, argument_gates, listed
from schemawire.mcp._tools import RemoteTool
from schemawire.mcp.client import McpClient
from schemawire.mcp.proxy import UpstreamTools
from schemawire.mcp.server import Sessions, mcp_result, verdict_result
from schemawire.schema.repository import Repository
from schemawire.trace import Trace, record_shortlist, record_verdicts
from schemawire.types import Rejection, ToolResult, ToolSpec

__all__ = ["Gateway", "Upstream", "open_gateway"]

_log = logging.getLogger("schemawire.gateway")


@dataclass(frozen=True, slots=True)
class Upstream:
    """One server behind the gateway.

    Attributes:
        name: what its tools' names start with (``fs`` -> ``fs_read_file``): a letter, then
            letters, digits or ``-``, at most 24 characters.
        server: where it is.
        timeout: seconds a call to it may take (None: the gateway's).

    Raises:
        UsageError: ``name`` cannot name an upstream.
    """

    name: str
    server: ServerAddress
    timeout: float | None = None

    def __post_init__(self) -> None:
        check_upstream_name(self.name)

    @property
    def address(self) -> ServerAddress:
        """``server``, a stdio one named after the upstream (so hops and errors say ``fs``)."""
        if isinstance(self.server, StdioServer) and self.server.name is None:
            return replace(self.server, name=self.name)
        return self.server


class Gateway:
    """The tools of several upstream servers as one server's (a `ToolBackend`)."""

    def __init__(self, upstreams: Mapping[str, UpstreamTools], *, shortlist: int | None = None):
        """
        Args:
            upstreams: upstream name -> its tools, each through its client's gates.
            shortlist: list only ``search_tools`` and ``call_tool``, a search returning this
                many tools; None lists every tool.
        """
        self.upstreams = dict(upstreams)
        self.shortlist = shortlist
        self._named = {name: _Named() for name in self.upstreams}  # each one's tools' names
        self._listed: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (upstream, version)
        self._index: ToolIndex | None = None
        self._index_of: dict[str, tuple[RemoteTool, ...]] = {}  # the listings it was built on
        self._gates = argument_gates()

    # --- tools/list ----------------------------------------------------------------------------

    async def list_tools(self, version: str) -> list[dict[str, Any]]:
        """Every upstream's tools under their gateway names (or, with a shortlist, the two
        tools that search them)."""
        if self.shortlist is not None:
            return listed()
        listings = await self._listings(version)
        await self._current()
        return [
            {**tool, "name": named.names[tool["name"]]}
            for upstream, tools in listings.items()
            for tool in tools
            if tool["name"] in (named := self._named[upstream]).names
        ]

    async def _listings(self, version: str) -> dict[str, list[dict[str, Any]]]:
        """Each upstream's tools as listed to ``version``, asked of all at once; an upstream
        that is down gives its last listing (and is started again, if it can be)."""
        listings: dict[str, list[dict[str, Any]]] = {}

        async def listing(name: str, tools: UpstreamTools) -> None:
            try:
                listings[name] = await tools.list_tools(version)
                self._listed[(name, version)] = listings[name]
            except ServerError as error:
                _log.warning("upstream %s is unavailable: %s", name, error.reason)
                listings[name] = self._listed.get((name, version), [])

        async with anyio.create_task_group() as group:
            for name, tools in self.upstreams.items():
                group.start_soon(listing, name, tools)
        return {name: listings[name] for name in self.upstreams}  # in the upstreams' order

    async def _current(self) -> dict[str, tuple[RemoteTool, ...]]:
        """Every upstream's tools as its client has them now, their names up to date."""
        return {name: (await self._named_now(name)).tools for name in self.upstreams}

    async def _named_now(self, upstream: str) -> _Named:
        """``upstream``'s tools as its client has them now (its last listing, when it is
        down), with their gateway names, made again only when its listing changed. (Names
        are made per upstream: they start with the upstream's name, so no two upstreams' can
        meet.)"""
        named = self._named[upstream]
        try:
            tools = await self.upstreams[upstream].client.list_tools()
        except ServerError:
            return named
        if not _same_tools(tools, named.tools):
            named = _Named.of(upstream, tools)
            self._named[upstream] = named
        return named

    # --- tools/call ----------------------------------------------------------------------------

    # ToolBackend.call_tool's signature, which this implements.
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | str | None,
        *,
        version: str,
        trace: Trace,
        label: str,
    ) -> dict[str, Any]:
        if self.shortlist is not None and name in RESERVED:
            verdict = self._gates[name].check(arguments if arguments is not None else {})
            record_verdicts(trace, label, verdict)
            if not verdict.accepted:
                return verdict_result(verdict)
            if name == SEARCH_TOOLS.name:
                return await self._search(verdict.value, version, trace, label)
            inner, given = verdict.value["name"], verdict.value.get("arguments", {})
            if inner in RESERVED:
                return _refused_inner(inner)
            return await self._call(inner, given, version, trace, label, raises=False)
        return await self._call(name, arguments, version, trace, label, raises=True)

    async def _call(
        self,
        name: str,
        arguments: dict[str, Any] | str | None,
        version: str,
        trace: Trace,
        label: str,
        *,
        raises: bool,
    ) -> dict[str, Any]:
        """One call of the gateway's tool ``name``, passed to its upstream (whose client gates
        it). A name no upstream has: the JSON-RPC error the spec gives (``raises``), or, for
        a call made through ``call_tool``, a ``tool_unknown`` refusal the model reads."""
        upstream = name.partition(SEPARATOR)[0]
        tool = None
        if upstream in self.upstreams:
            tool = (await self._named_now(upstream)).routes.get(name)
        if tool is None:
            if raises:
                raise MCPError(
                    code=types.INVALID_PARAMS,
                    message=f"Unknown tool: {name}",
                    data={"code": "tool_unknown"},
                )
            return _unknown(name)
        tools = self.upstreams[upstream]
        return await tools.call_tool(
            tool, arguments, version=version, trace=trace, label=label, shown_as=name
        )

    # --- search_tools --------------------------------------------------------------------------

    async def _search(
        self, arguments: dict[str, Any], version: str, trace: Trace, label: str
    ) -> dict[str, Any]:
        """The shortlist for the query, a trace hop, and the found tools' definitions."""
        assert self.shortlist is not None
        index = self._index_now(await self._current())
        shortlist = index.search(arguments["query"], arguments.get("top", self.shortlist))
        record_shortlist(trace, label, shortlist)
        found = {tool.name for tool in shortlist.tools}
        listings = await self._listings(version)
        definitions = [
            {**tool, "name": name}
            for upstream, tools in listings.items()
            for tool in tools
            if (name := self._named[upstream].names.get(tool["name"])) in found
        ]
        order = {tool.name: rank for rank, tool in enumerate(shortlist.tools)}
        definitions.sort(key=lambda tool: order[tool["name"]])
        answer: dict[str, Any] = {"shortlist": shortlist.to_json(), "tools": definitions}
        return mcp_result(ToolResult("", dumps(answer, indent=False), structured=answer))

    def _index_now(self, current: dict[str, tuple[RemoteTool, ...]]) -> ToolIndex:
        """The index over every upstream's tools, built again only when a listing changed (and
        kept whole when the new listing holds the same tools: `ToolIndex.refreshed`)."""
        if self._index is not None and _same_listings(current, self._index_of):
            return self._index
        specs, sources = self._catalogue(current)
        self._index = (
            ToolIndex(specs, sources=sources)
            if self._index is None
            else self._index.refreshed(specs, sources=sources)
        )
        self._index_of = current
        return self._index

    def _catalogue(
        self, current: dict[str, tuple[RemoteTool, ...]]
    ) -> tuple[list[ToolSpec], dict[str, str]]:
        """Every callable tool under its gateway name, and the upstream each comes from."""
        specs: list[ToolSpec] = []
        sources: dict[str, str] = {}
        for upstream, tools in current.items():
            for tool in tools:
                name = self._named[upstream].names.get(tool.name)
                if tool.spec is None or name is None:
                    continue  # a schema that cannot be used: nothing can call it
                specs.append(replace(tool.spec, name=name))
                sources[name] = upstream
        return specs, sources


@asynccontextmanager
async def open_gateway(
    upstreams: Sequence[Upstream],
    *,
    repository: Repository | None,
    trace: Trace,
    timeout: float,
    sessions: Sessions,
    shortlist: int | None = None,
) -> AsyncIterator[Gateway]:
    """A gateway over ``upstreams``, each connected (in order) while the block runs.

    Args:
        upstreams: the servers, with distinct names.
        repository: canonical schemas, by the upstreams' own tool names.
        trace: where every upstream's hops go.
        timeout: seconds a call may take, where an upstream does not say.
        sessions: told when any upstream's tool list changes.
        shortlist: see `Gateway`.

    Raises:
        UsageError: two upstreams have one name, or there are none.
        ServerError: an upstream cannot be started or reached.
    """
    _check_distinct(upstreams)
    async with AsyncExitStack() as stack:
        tools: dict[str, UpstreamTools] = {}
        for upstream in upstreams:
            client = McpClient(
                upstream.address,
                repository=repository,
                trace=trace,
                timeout=upstream.timeout or timeout,
                on_tools_changed=sessions.tools_changed,
            )
            tools[upstream.name] = UpstreamTools(await stack.enter_async_context(client))
        yield Gateway(tools, shortlist=shortlist)


def _check_distinct(upstreams: Sequence[Upstream]) -> None:
    if not upstreams:
        raise UsageError("a gateway needs at least one upstream")
    names = [upstream.name for upstream in upstreams]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(f"two upstreams are named {quoted(twice[0])}: give each its own name")


@dataclass(frozen=True, slots=True)
class _Named:
    """One upstream's tools, and their gateway names.

    Attributes:
        tools: as its client listed them.
        routes: gateway name -> the tool's name upstream.
        names: the tool's name upstream -> its gateway name.
    """

    tools: tuple[RemoteTool, ...] = ()
    routes: Mapping[str, str] = field(default_factory=dict[str, str])
    names: Mapping[str, str] = field(default_factory=dict[str, str])

    @classmethod
    def of(cls, upstream: str, tools: tuple[RemoteTool, ...]) -> _Named:
        made = namespaced({upstream: [tool.name for tool in tools]})
        routes = {name: tool for name, (_, tool) in made.items()}
        return cls(tools, routes, {tool: name for name, tool in routes.items()})


def _same_tools(now: tuple[RemoteTool, ...], before: tuple[RemoteTool, ...]) -> bool:
    """Whether a client lists the very tools it did (it lists anew, making new tools, only when
    its server's list changed or it reconnected)."""
    return len(now) == len(before) and all(a is b for a, b in zip(now, before, strict=True))


def _same_listings(
    now: dict[str, tuple[RemoteTool, ...]], before: dict[str, tuple[RemoteTool, ...]]
) -> bool:
    """Whether every upstream lists the very tools it did."""
    return now.keys() == before.keys() and all(_same_tools(now[name], before[name]) for name in now)


def _unknown(name: str) -> dict[str, Any]:
    line = f"the server has no tool {quoted(name)}"
    return _refused_call(name, line, "Find the tool with search_tools; call it by its name.")


def _refused_inner(name: str) -> dict[str, Any]:
    line = f"{name} is called directly, not through call_tool"
    return _refused_call(name, line, f"Call {name} itself.")


def _refused_call(name: str, line: str, hint: str) -> dict[str, Any]:
    """A call through ``call_tool`` refused before any upstream sees it: ``tool_unknown``."""
    code = "tool_unknown"
    rejection = Rejection.for_tool(name, gate="arguments", code=code, line=line, hint=hint)
    return verdict_result(_refusal(rejection))


def _refusal(rejection: Rejection) -> Verdict:
    return Verdict.reject(rejection, gate="arguments", tool=rejection.tool, conforms=None)
