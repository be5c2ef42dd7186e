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
tools lists none. No upstream holds the others back: a listing waits for each at most
`LIST_DEADLINE` seconds (a hung one is listed as it last was, its listing going on in the
background), and a failed restart is not tried again for a while (`UpstreamTools`).

With a shortlist (``serve --shortlist``) the gateway lists only ``search_tools`` and
``call_tool`` (`schemawire.mcp._search`): a search answers from a `ToolIndex` over every
upstream's tools, rebuilt when one of them says its list changed; each search is a trace hop.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Container, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import anyio.abc
from mcp.shared.exceptions import MCPError

from schemawire._json import dumps, quoted
from schemawire.errors import ServerError, UsageError
from schemawire.gates import Embedder, ToolIndex
from schemawire.mcp._addresses import ServerAddress, StdioServer
from schemawire.mcp._calls import refused_unchecked
from schemawire.mcp._namespaces import RESERVED, SEPARATOR, check_upstream_name, namespaced
from schemawire.mcp._problems import unknown_tool_error
from schemawire.mcp._search import SEARCH_TOOLS, argument_gates, listed
from schemawire.mcp._tools import RemoteTool
from schemawire.mcp.client import McpClient
from schemawire.mcp.proxy import UpstreamTools
from schemawire.mcp.server import Sessions, mcp_result, verdict_result
from schemawire.schema.repository import Repository
from schemawire.schema.schema_file import OUTPUT_SUFFIX, SchemaFile
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
        origin: where it was given, for an error to say what to check (``--upstream fs --
            CMD``); empty: its name.

    Raises:
        UsageError: ``name`` cannot name an upstream.
    """

    name: str
    server: ServerAddress
    timeout: float | None = None
    origin: str = ""

    def __post_init__(self) -> None:
        check_upstream_name(self.name)

    @property
    def address(self) -> ServerAddress:
        """``server``, a stdio one named after the upstream (so hops and errors say ``fs``)."""
        if isinstance(self.server, StdioServer) and self.server.name is None:
            return replace(self.server, name=self.name)
        return self.server


LIST_DEADLINE = 2.0
"""Seconds a gateway's ``tools/list`` (or search) waits for one upstream's listing before it
gives that upstream's last listing instead (the listing goes on, in the background)."""


class Gateway:
    """The tools of several upstream servers as one server's (a `ToolBackend`).

    Each upstream's listing is asked for in a task of its own (at most one at a time per
    upstream), which also starts a stopped upstream again (`UpstreamTools` backs off after a
    failed restart); a ``tools/list`` waits for each at most `LIST_DEADLINE` seconds, so a hung
    or dead upstream never holds the others' tools back. A listing that comes in later, or one
    that changed because its upstream was started again, is announced to the clients
    (``on_changed``) so that they list again.
    """

    def __init__(
        self,
        upstreams: Mapping[str, UpstreamTools],
        *,
        group: anyio.abc.TaskGroup,
        shortlist: int | None = None,
        embedder: Embedder | None = None,
        on_changed: Callable[[], Awaitable[None]] | None = None,
        list_deadline: float = LIST_DEADLINE,
    ):
        """
        Args:
            upstreams: upstream name -> its tools, each through its client's gates.
            group: where listings run in the background; they stop with it.
            shortlist: list only ``search_tools`` and ``call_tool``, a search returning this
                many tools; None lists every tool.
            embedder: searches rank by meaning too (`ToolIndex`'s ``embedder``).
            on_changed: awaited when the gateway's tools changed and no upstream said so (a
                late listing, an upstream started again with other tools).
            list_deadline: see `LIST_DEADLINE`.
        """
        self.upstreams = dict(upstreams)
        self.shortlist = shortlist
        self.embedder = embedder
        self.list_deadline = list_deadline
        self._group = group
        self._on_changed = on_changed
        self._members = {name: _Member(tools) for name, tools in self.upstreams.items()}
        self._index: ToolIndex | None = None
        self._index_of: dict[str, tuple[RemoteTool, ...]] = {}  # the listings it was built on
        self._gates = argument_gates()

    # --- tools/list ----------------------------------------------------------------------------

    async def list_tools(self, version: str) -> list[dict[str, Any]]:
        """Every upstream's tools under their gateway names (or, with a shortlist, the two
        tools that search them)."""
        if self.shortlist is not None:
            return listed()
        return self._definitions(await self._refreshed(), version)

    def _definitions(
        self, current: Mapping[str, _Named], version: str, only: Container[str] | None = None
    ) -> list[dict[str, Any]]:
        """The tools of ``current`` as ``tools/list`` gives them to ``version`` (those named in
        ``only``, when given), upstream by upstream."""
        definitions = []
        for upstream, named in current.items():
            for tool in named.tools:
                name = named.names[tool.name]
                if only is None or name in only:
                    listed = self.upstreams[upstream].listed(tool, version)
                    definitions.append({**listed, "name": name})
        return definitions

    async def _refreshed(self) -> dict[str, _Named]:
        """Every upstream's tools and names, listed anew where the upstream answers within the
        deadline (its last listing where it does not), asked of all at once."""
        async with anyio.create_task_group() as group:
            for upstream in self.upstreams:
                group.start_soon(self._fresh, upstream)
        return {upstream: member.named for upstream, member in self._members.items()}

    async def _fresh(self, upstream: str, wait: bool = True) -> _Named:
        """``upstream``'s tools as its client lists them now, once its listing comes in (or
        the deadline of the listing under way passes: then its last listing)."""
        member = self._members[upstream]
        if member.refreshing is None:
            member.refreshing = anyio.Event()
            member.due = anyio.current_time() + self.list_deadline
            member.late = False
            self._group.start_soon(self._refresh, upstream, member, member.refreshing)
        if wait:
            with anyio.move_on_after(max(0.0, member.due - anyio.current_time())):
                await member.refreshing.wait()
            if member.refreshing is not None:
                member.late = True  # given the last listing: told when the new one is in
        return member.named

    async def _refresh(self, upstream: str, member: _Member, done: anyio.Event) -> None:
        """List ``upstream``'s tools (starting it again first, if it stopped), and keep them
        with their names; announce a change no upstream announced."""
        changed = False
        try:
            tools = await member.tools.tools()
        except ServerError as error:
            _log.warning("upstream %s is unavailable: %s", upstream, error.reason)
        else:
            if not _same_tools(tools, member.named.tools):
                changed = _listed_differently(tools, member.named.tools)
                member.named = _Named.of(upstream, tools)
        finally:
            member.refreshing = None
            done.set()
        restarted, member.restarts = member.restarts != member.tools.restarts, member.tools.restarts
        if changed and (restarted or member.late) and self._on_changed is not None:
            await self._on_changed()

    async def first_listing(self) -> None:
        """List every upstream's tools, waiting for each as long as its client's timeout (not
        the listing deadline): what the gateway lists from its first ``tools/list`` on."""
        async with anyio.create_task_group() as group:
            for upstream in self.upstreams:
                group.start_soon(self._fresh, upstream, False)
        for member in self._members.values():
            if member.refreshing is not None:
                await member.refreshing.wait()

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
        tool = await self._route(upstream, name)
        try:
            if tool is None:
                raise unknown_tool_error(name)
            tools = self.upstreams[upstream]
            answer = await tools.call_tool(
                tool, arguments, version=version, trace=trace, label=label, shown_as=name
            )
        except MCPError as error:
            if raises or not _is_unknown(error):
                raise
            return _unknown(name, self._bare(name))
        if tools.restarts != self._members[upstream].restarts:
            await self._fresh(upstream, wait=False)  # started again for this call: list anew
        return answer

    async def _route(self, upstream: str, name: str) -> str | None:
        """The upstream's own name of the gateway's tool ``name``: from its last listing (a
        name always means the same tool: `schemawire.mcp._namespaces`), else from a new one
        (a tool added since)."""
        member = self._members.get(upstream)
        if member is None:
            return None
        tool = member.named.routes.get(name)
        if tool is None:
            tool = (await self._fresh(upstream)).routes.get(name)
        return tool

    def _bare(self, name: str) -> str | None:
        """The one gateway name of an upstream's tool called ``name`` (the name without its
        upstream's), when exactly one upstream has such a tool."""
        found = [
            named.names[name]
            for member in self._members.values()
            if name in (named := member.named).names
        ]
        return found[0] if len(found) == 1 else None

    # --- search_tools --------------------------------------------------------------------------

    async def _search(
        self, arguments: dict[str, Any], version: str, trace: Trace, label: str
    ) -> dict[str, Any]:
        """The shortlist for the query, a trace hop, and the found tools' definitions."""
        assert self.shortlist is not None
        current = await self._refreshed()
        index = self._index_now(current)
        shortlist = index.search(arguments["query"], arguments.get("top", self.shortlist))
        record_shortlist(trace, label, shortlist)
        found = {tool.name for tool in shortlist.tools}
        definitions = self._definitions(current, version, only=found)
        order = {tool.name: rank for rank, tool in enumerate(shortlist.tools)}
        definitions.sort(key=lambda tool: order[tool["name"]])
        answer: dict[str, Any] = {"shortlist": shortlist.to_json(), "tools": definitions}
        return mcp_result(ToolResult("", dumps(answer, indent=False), structured=answer))

    def _index_now(self, current: Mapping[str, _Named]) -> ToolIndex:
        """The index over every upstream's tools, built again only when a listing changed (and
        kept whole when the new listing holds the same tools: `ToolIndex.refreshed`)."""
        listings = {upstream: named.tools for upstream, named in current.items()}
        if self._index is not None and _same_listings(listings, self._index_of):
            return self._index
        specs, sources = _catalogue(current)
        self._index = (
            ToolIndex(specs, sources=sources, embedder=self.embedder)
            if self._index is None
            else self._index.refreshed(specs, sources=sources)
        )
        self._index_of = listings
        return self._index


def _catalogue(current: Mapping[str, _Named]) -> tuple[list[ToolSpec], dict[str, str]]:
    """Every callable tool under its gateway name, and the upstream each comes from."""
    specs: list[ToolSpec] = []
    sources: dict[str, str] = {}
    for upstream, named in current.items():
        for tool in named.tools:
            if tool.spec is None:
                continue  # a schema that cannot be used: nothing can call it
            name = named.names[tool.name]
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
    embedder: Embedder | None = None,
    list_deadline: float = LIST_DEADLINE,
) -> AsyncIterator[Gateway]:
    """A gateway over ``upstreams``, each connected (all at once) and listed while the block
    runs.

    Args:
        upstreams: the servers, with distinct names.
        repository: canonical schemas, by the upstreams' own tool names (or by their gateway
            names, which come first: `schemawire.mcp._tools`).
        trace: where every upstream's hops go.
        timeout: seconds a call may take, where an upstream does not say.
        sessions: told when any upstream's tool list changes.
        shortlist: see `Gateway`.
        embedder: see `Gateway`.
        list_deadline: see `LIST_DEADLINE`.

    Raises:
        UsageError: two upstreams have one name, or there are none.
        ServerError: an upstream cannot be started or reached.
    """
    _check_distinct(upstreams)
    async with AsyncExitStack() as stack:
        clients = {
            upstream.name: McpClient(
                upstream.address,
                repository=_named_schemas(repository, upstream.name),
                trace=trace,
                timeout=upstream.timeout or timeout,
                on_tools_changed=sessions.tools_changed,
            )
            for upstream in upstreams
        }
        await _connect_all(stack, clients, {upstream.name: upstream for upstream in upstreams})
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)  # the listings under way, when the block ends
        tools = {name: UpstreamTools(client) for name, client in clients.items()}
        gateway = Gateway(
            tools,
            group=group,
            shortlist=shortlist,
            embedder=embedder,
            on_changed=sessions.tools_changed,
            list_deadline=list_deadline,
        )
        await gateway.first_listing()
        yield gateway


async def _connect_all(
    stack: AsyncExitStack, clients: Mapping[str, McpClient], upstreams: Mapping[str, Upstream]
) -> None:
    """Connect every client at once, each held open in a task of its own (a client is closed
    by the task that opened it) until ``stack`` closes.

    Raises:
        ServerError: a client could not connect (the first to fail, named by its upstream;
            the others are closed, with everything else on ``stack``).
    """
    stop = anyio.Event()
    failures: list[ServerError] = []

    async def hold(name: str, client: McpClient, ready: anyio.Event) -> None:
        try:
            async with client:
                ready.set()
                await stop.wait()
        except ServerError as error:
            failures.append(_of_upstream(error, upstreams[name]))
        finally:
            ready.set()

    group = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(stop.set)  # runs before the group is left: each client closes in its task
    readies = [anyio.Event() for _ in clients]
    for (name, client), ready in zip(clients.items(), readies, strict=True):
        group.start_soon(hold, name, client, ready)
    for ready in readies:
        await ready.wait()
    if failures:
        await stack.aclose()  # the clients that did connect closed, outside any task group
        raise failures[0]


def _of_upstream(error: ServerError, upstream: Upstream) -> ServerError:
    """``error`` naming the upstream, and saying where it was given: what to check."""
    origin = upstream.origin or f"the upstream {upstream.name}"
    hints = {
        "not_started": f"check the {origin}",
        "exited": f"fix what it says, or run the {origin} alone to see all it writes",
        "unreachable": f"check that the server is running and the {origin}",
        "not_found": f"check the path in the {origin} (schemawire serve --http listens at /mcp)",
        "http_error": f"check the {origin}, and what the server's own log says",
        "unauthorized": f"give it the headers it wants (headers of [gateway.upstreams."
        f"{upstream.name}] in schemawire.toml)",
        "timeout": "check that the server answers, or give it longer with --timeout (or "
        f"timeout of [gateway.upstreams.{upstream.name}])",
    }
    hints["forbidden"] = hints["unauthorized"]
    server = f"{upstream.name} ({error.server})"
    hint = hints.get(error.code, error.hint)
    return ServerError(server, error.reason, error.stderr, error.code, hint)


def _named_schemas(repository: Repository | None, upstream: str) -> Repository | None:
    """``repository`` as one upstream's client reads it: a schema named by the gateway name
    (``fs_read_file.json``) is that upstream's tool's (``read_file``), in place of a schema of
    the bare name, which the other upstreams' tools of that name keep."""
    if repository is None:
        return None
    prefix = f"{upstream}{SEPARATOR}"

    def tool_of(file: SchemaFile) -> str:
        return file.name.removesuffix(OUTPUT_SUFFIX)

    ours = {
        tool_of(file).removeprefix(prefix)
        for file in repository.files
        if file.kind == "tools" and not file.is_output and file.name.startswith(prefix)
    }
    if not ours:
        return repository
    files = tuple(
        replace(file, name=file.name.removeprefix(prefix))
        if tool_of(file).removeprefix(prefix) in ours and file.name.startswith(prefix)
        else file
        for file in repository.files
        if not (file.kind == "tools" and tool_of(file) in ours)  # the bare ones it stands for
    )
    return Repository(
        repository.config,
        files,
        findings=repository.findings,
        registry=repository.registry,
        sites={file.relpath: repository.sites(file) for file in files},
        references=repository.references,
    )


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


@dataclass(slots=True)
class _Member:
    """One upstream, as the gateway keeps it.

    Attributes:
        tools: its tools, through its client's gates.
        named: its last listing, and its tools' gateway names.
        refreshing: set when the listing under way (if any) is in.
        due: when those waiting for the listing under way stop waiting.
        late: someone stopped waiting for it (and listed ``named``).
        restarts: the upstream's restarts when ``named`` was listed.
    """

    tools: UpstreamTools
    named: _Named = field(default_factory=_Named)
    refreshing: anyio.Event | None = None
    due: float = 0.0
    late: bool = False
    restarts: int = 0


def _listed_differently(now: tuple[RemoteTool, ...], before: tuple[RemoteTool, ...]) -> bool:
    """Whether a client lists other tools, or the same tools otherwise, than it did."""
    return [tool.listed for tool in now] != [tool.listed for tool in before]


def _same_tools(now: tuple[RemoteTool, ...], before: tuple[RemoteTool, ...]) -> bool:
    """Whether a client lists the very tools it did (it lists anew, making new tools, only when
    its server's list changed or it reconnected)."""
    return len(now) == len(before) and all(a is b for a, b in zip(now, before, strict=True))


def _same_listings(
    now: dict[str, tuple[RemoteTool, ...]], before: dict[str, tuple[RemoteTool, ...]]
) -> bool:
    """Whether every upstream lists the very tools it did."""
    return now.keys() == before.keys() and all(_same_tools(now[name], before[name]) for name in now)


def _is_unknown(error: MCPError) -> bool:
    data = error.error.data
    return isinstance(data, dict) and data.get("code") == "tool_unknown"


def _unknown(name: str, namespaced_as: str | None) -> dict[str, Any]:
    line = f"the server has no tool {quoted(name)}"
    hint = (
        f"Call {namespaced_as}: tools are named after their server."
        if namespaced_as is not None
        else "Find the tool with search_tools; call it by its name."
    )
    return _refused_call(name, line, hint)


def _refused_inner(name: str) -> dict[str, Any]:
    line = f"{name} is called directly, not through call_tool"
    return _refused_call(name, line, f"Call {name} itself.")


def _refused_call(name: str, line: str, hint: str) -> dict[str, Any]:
    """A call through ``call_tool`` refused before any upstream sees it: ``tool_unknown``."""
    code = "tool_unknown"
    rejection = Rejection.for_tool(name, gate="arguments", code=code, line=line, hint=hint)
    return verdict_result(refused_unchecked(rejection))
