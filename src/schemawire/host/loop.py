"""The agent loop: model, gates, tools, and back, until the model answers.

One `Host.run`:

1. The tools, projected once for the model's API, go to the model with the conversation; with
   ``HostOptions(shortlist=k)`` (or ``search_tools``), only part of them: the k that best match
   the user's request, the pinned ones, those already called and those ``search_tools`` found
   (`schemawire.host._shortlisting`).
2. Each tool call it answers with passes the argument gate, against the tool's full canonical
   schema (arguments sent under the projection's renames are restored first), whether or not
   the request showed the tool. A refused call is
   answered with the gate's structured error, so that the model can correct itself; the tool is
   not run. After ``retries_per_tool`` refusals of one tool in a run, the model is told to stop
   calling it.
3. Accepted calls run concurrently; their results pass the result gate and go back matched to
   the calls by id, in the model's order.
4. Until the model answers without a tool call, or the turn limit. An output schema, when given,
   is the final answer's contract: it is checked like arguments, and a mismatch is sent back
   once per retry.

Every message that crosses a boundary is a hop of the trace, with its verdict.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from schemawire._json import quoted, written_alike
from schemawire.errors import InputError, ModelError, SchemawireError, UsageError
from schemawire.gates import ArgumentGate, ArgumentOptions, Embedder, Verdict
from schemawire.host._shortlisting import SEARCH_TOOL, Selection, ToolCatalogue
from schemawire.host._toolset import OfferedTool, Toolset, documents_of
from schemawire.host.model_spec import model_from_spec
from schemawire.host.models import DeltaSink, Model, PoolingModel, StreamingModel
from schemawire.host.tools import ToolRunner
from schemawire.project import Catalogue, project
from schemawire.schema.repository import Repository
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.trace import Trace, record_verdicts
from schemawire.types import Rejection, ToolCall, ToolResult, ToolSpec
from schemawire.wire import (
    AssistantTurn,
    Entry,
    EntryCache,
    Request,
    ToolOutputs,
    ToolRef,
    UserText,
    wire_format,
)
from schemawire.wire.stream import with_canonical_name

if TYPE_CHECKING:
    from schemawire.mcp import HttpServer, StdioServer

__all__ = ["CallRecord", "Host", "HostOptions", "RunResult"]

# Structured Outputs: the target each API takes a final-answer schema as.
_OUTPUT_TARGETS = {
    "openai.chat": "openai.response_format",
    "openai.responses": "openai.text_format",
}


@dataclass(frozen=True, slots=True)
class HostOptions:
    """How a host runs.

    Attributes:
        strict: project tools in the API's strict mode, where it has one.
        max_turns: model requests per run before the host stops.
        retries_per_tool: refused calls of one tool answered with the error, per run; later
            calls of that tool are refused with "stop calling it".
        system: the system prompt.
        model_options: passed through in every request body (``temperature``...).
        argument_options: how the argument gates read arguments.
        max_concurrency: tool calls of one turn run at most this many at a time.
        shortlist: send each request only the ``k`` tools that best match the user's request
            (plus ``pinned``, the tools already called, and those ``search_tools`` found);
            None (the default) sends every tool.
        pinned: tools every request carries when the host shortlists.
        search_tools: offer the model ``search_tools``, to find tools it was not sent; None
            (the default) offers it when ``shortlist`` is set. ``True`` without ``shortlist``
            starts the model with only the pinned tools and ``search_tools``.
        search_form: how ``search_tools`` and what it finds are sent. ``"function"`` (the
            default, which every API and OpenAI-compatible server takes): a function tool
            answered with the shortlist JSON, the tools it found added to the next request's
            tools. ``"native"``: the API's own client-side tool search where it has one
            (Anthropic: found tools listed with ``defer_loading`` and loaded by
            ``tool_reference`` blocks; OpenAI Responses: a ``tool_search`` tool answered by
            ``tool_search_output`` items), which only some models and endpoints take
            (docs/host.md); the function form on the other APIs.
        embedder: when the host shortlists, rank by meaning too: any ``texts -> vectors``
            callable (`semantic_embedder()` with ``schemawire[semantic]``), fused with BM25.

    Raises:
        UsageError: ``shortlist`` is not a positive integer, ``pinned`` is given to a host
            that does not shortlist, or ``search_form`` is neither form.
    """

    strict: bool = True
    max_turns: int = 10
    retries_per_tool: int = 2
    system: str | None = None
    model_options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    argument_options: ArgumentOptions | None = None
    max_concurrency: int = 16
    shortlist: int | None = None
    pinned: tuple[str, ...] = ()
    search_tools: bool | None = None
    search_form: Literal["function", "native"] = "function"
    embedder: Embedder | None = None

    def __post_init__(self) -> None:
        k = self.shortlist
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise UsageError(
                f"HostOptions(shortlist=k) sends the model the k best tools: k must be 1 or "
                f"more, or None to send every tool; not {quoted(k)}"
            )
        pinned: object = self.pinned  # a caller may pass one name: say what it should be
        if isinstance(pinned, str):
            raise UsageError("HostOptions(pinned=...) takes tool names: a tuple, not a string")
        if self.pinned and not self.shortlists:
            raise UsageError(
                "HostOptions(pinned=...) pins tools in a shortlist: set shortlist=k or "
                "search_tools=True too (without either, every tool is sent)"
            )
        if self.search_form not in ("function", "native"):
            raise UsageError(
                f'HostOptions(search_form=...) is "function" or "native", not '
                f"{quoted(self.search_form)}"
            )

    @property
    def offers_search(self) -> bool:
        """Whether the model is offered ``search_tools``."""
        return self.search_tools if self.search_tools is not None else self.shortlist is not None

    @property
    def shortlists(self) -> bool:
        """Whether requests carry part of the catalogue rather than all of it."""
        return self.shortlist is not None or self.offers_search


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call of a run: as the model sent it, and what each gate decided."""

    call: ToolCall
    argument_verdict: Verdict
    result: Verdict | None  # None when the call was refused

    @property
    def output(self) -> ToolResult:
        """What the model read back."""
        if self.result is not None:
            result: ToolResult = self.result.value
            return result
        assert self.argument_verdict.rejection is not None
        return ToolResult(self.call.call_id, self.argument_verdict.rejection.to_json(), True)

    @property
    def status(self) -> Literal["ok", "error", "refused"]:
        """How the call's tool span ends: refused by a gate (or not sent), failed (an error
        result), or ok."""
        return "refused" if self.result is None else _call_status(self.result)


@dataclass(slots=True)
class RunResult:
    """How a run ended.

    Attributes:
        answer: the model's final text.
        output: the final answer parsed and checked, when the host has an output schema.
        stopped: ``"answer"``, ``"turn_limit"`` or ``"output_invalid"`` (the final answer broke
            the output schema after every retry).
        turns: model requests made.
        conversation: every entry, the user's first.
        calls: every tool call, in order.
    """

    answer: str | None
    output: Any
    stopped: Literal["answer", "turn_limit", "output_invalid"]
    turns: int
    conversation: list[Entry]
    calls: list[CallRecord]


class Host:
    """Runs conversations between one model and a set of tools, every hop gated and traced.

    Example:
        >>> tools = python_tools(repository, {"get_weather": get_weather})  # doctest: +SKIP
        >>> Host("openai:gpt-4.1-mini", tools).run_sync("上海今天多少度？").answer  # doctest: +SKIP
    """

    def __init__(
        self,
        model: Model | str,
        tools: Sequence[ToolRunner] = (),
        *,
        mcp: Sequence[StdioServer | HttpServer] = (),
        repository: Repository | None = None,
        trace: Trace | None = None,
        options: HostOptions | None = None,
        output: ToolSpec | None = None,
        on_delta: DeltaSink | None = None,
    ) -> None:
        """
        Args:
            model: the model, as ``--model`` names it (``"openai:gpt-4.1-mini"``,
                ``"anthropic:claude-sonnet-4-5"``, ``"script:FILE"``; see `model_from_spec`),
                or a `Model` (an `HttpModel`, a `ScriptedModel`).
            tools: what the model may call: `python_tools`, `mcp_tools`, `PythonTool`. Each
                carries the repository its schemas come from.
            mcp: MCP servers whose tools are offered too. The host connects to them for each
                run, or once for a block of runs inside ``async with host:``; their JSON-RPC
                goes to the host's trace.
            repository: canonical schemas for the servers' tools (a tool the repository
                defines is checked against its schema, not the server's), and where the output
                schema's ``$ref``s resolve.
            trace: where hops go. Default: the trace the MCP clients of ``tools`` share, if
                they share one; else a new in-memory `Trace`. A client given no trace of its
                own records to this one from now on.
            options: turns, retries, strictness, the system prompt.
            output: the schema of the final answer (Structured Outputs), if any.
            on_delta: called with each piece of a streamed answer as it arrives (its text, a
                call's start, a piece of its arguments; tool names canonical). The gates
                run on the whole call, once it has arrived.

        Raises:
            UsageError: the model cannot be named so, its API is unknown, two tools share a
                name, or a schema has a ``$ref`` that nothing given resolves.
        """
        self.model = model_from_spec(model) if isinstance(model, str) else model
        self.wire = wire_format(self.model.api)
        self.options = options or HostOptions()
        self.repository = repository
        self.trace = trace if trace is not None else _shared_trace(tools) or Trace()
        _record_clients_to(tools, self.trace)
        self.output = output
        self._given = tuple(tools)
        self._servers = tuple(mcp)
        self._connected: AsyncExitStack | None = None
        self._toolset, self._catalogue = self._offered(self._given, complete=not self._servers)
        self._output_payload, self._output_gate = self._prepare_output(output, repository)
        self.on_delta = on_delta

    @property
    def catalogue(self) -> Catalogue:
        """The tools as the model is sent them (the MCP servers' too, inside ``async with``);
        when the host shortlists, the whole catalogue, of which each request carries part."""
        return self._current_toolset().catalogue

    @property
    def tools(self) -> Mapping[str, OfferedTool]:
        """The tools offered, by canonical name: each runner with its gate and payload."""
        return self._current_toolset().tools

    def _current_toolset(self) -> Toolset:
        return self._catalogue.toolset if self._catalogue is not None else self._toolset

    # --- preparing -----------------------------------------------------------------------------

    def _offered(
        self, runners: Sequence[ToolRunner], *, complete: bool = True
    ) -> tuple[Toolset, ToolCatalogue | None]:
        """``runners`` projected for the model's API; when the host shortlists, as one
        catalogue index too (with ``search_tools`` when it is offered). ``complete``: the MCP
        servers' tools are among ``runners`` (or there are no servers)."""
        options = self.options
        if not options.shortlists:
            return self._offer(runners), None
        catalogue = ToolCatalogue(
            runners,
            self._offer,
            pinned=options.pinned,
            search=options.offers_search,
            native=options.search_form == "native",
            complete=complete,
            embedder=options.embedder,
        )
        return catalogue.toolset, catalogue

    def _offer(self, runners: Sequence[ToolRunner], search: ToolRunner | None = None) -> Toolset:
        """``runners`` projected for the model's API, each with its gate (``search`` in the
        API's own tool-search form)."""
        return Toolset(
            runners,
            self.wire.target,
            strict=self.options.strict,
            argument_options=self.options.argument_options,
            documents=documents_of(runners, self.repository),
            search=search,
        )

    def _prepare_output(
        self, output: ToolSpec | None, repository: Repository | None
    ) -> tuple[dict[str, Any] | None, ArgumentGate | None]:
        """The output schema as this API's Structured Outputs take it (None where it has none:
        the host checks the answer all the same), and the gate the answer passes."""
        if output is None:
            return None, None
        validator = _schema_validator(output, repository)
        documents = repository.documents if repository is not None else None
        target = _OUTPUT_TARGETS.get(self.model.api)
        projection = project(output, target, documents=documents) if target else None
        gate = ArgumentGate(
            output,
            validator,
            self.options.argument_options,
            projection=projection,
            documents=documents,
        )
        return (projection.payload if projection is not None else None), gate

    # --- MCP servers ---------------------------------------------------------------------------

    async def __aenter__(self) -> Host:
        """Connect to the MCP servers (if any) for the runs inside the block.

        Raises:
            ServerError: a server cannot be started or reached, or cannot list its tools.
        """
        if self._connected is not None:
            raise UsageError("the host is already connected: one `async with host:` at a time")
        self._connected = stack = AsyncExitStack()  # claimed before the first await
        try:
            await stack.enter_async_context(_held_open(self.model))
            self._toolset, self._catalogue = self._offered(
                [*self._given, *await self._connect(stack)]
            )
        except BaseException:
            self._connected = None
            await stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._connected = self._connected, None
        self._toolset, self._catalogue = self._offered(self._given, complete=not self._servers)
        if stack is not None:
            await stack.aclose()

    async def _connect(self, stack: AsyncExitStack) -> list[ToolRunner]:
        if not self._servers:
            return []
        from schemawire.host.tools import mcp_tools
        from schemawire.mcp import McpClient

        runners: list[ToolRunner] = []
        for server in self._servers:
            client = McpClient(
                server,
                repository=self.repository,
                trace=self.trace,
                argument_options=self.options.argument_options,
            )
            runners += await mcp_tools(await stack.enter_async_context(client))
        return runners

    # --- running -------------------------------------------------------------------------------

    def run_sync(self, user_input: str, *, history: Sequence[Entry] = ()) -> RunResult:
        """`run`, for code that is not async: it starts an event loop for the run (and connects
        to the MCP servers for it).

        Raises:
            UsageError: called from inside an event loop (``await host.run(...)`` there).
            ModelError: the model could not answer.
            ServerError: an MCP server cannot be started or reached.
        """
        if _in_event_loop():
            raise UsageError("run_sync was called from async code: await host.run(...) instead")
        return anyio.run(functools.partial(self.run, user_input, history=history))

    async def run(self, user_input: str, *, history: Sequence[Entry] = ()) -> RunResult:
        """Run one request of the user to its answer (or to the turn limit). Outside
        ``async with host:``, the MCP servers are connected for this run only, and the model's
        HTTP connections are closed when it ends; inside, both last for the block.

        Raises:
            ModelError: the model could not answer.
            InputError: the model's response is not one of its API.
            ServerError: an MCP server cannot be started or reached.
        """
        if self._connected is not None:
            run = _Run(self, self._toolset, self._catalogue)
            return await run.to_answer(user_input, history)
        async with AsyncExitStack() as stack:  # this run's own connections: runs may overlap
            await stack.enter_async_context(_held_open(self.model))
            toolset, catalogue = self._toolset, self._catalogue
            if self._servers:
                toolset, catalogue = self._offered([*self._given, *await self._connect(stack)])
            return await _Run(self, toolset, catalogue).to_answer(user_input, history)

    def check_answer(self, text: str | None) -> Verdict | None:
        """The output gate's verdict on a final answer (None: the host has no output schema)."""
        if self._output_gate is None:
            return None
        return self._output_gate.check(text if text is not None else "")


class _Run:
    """One run of a host: its tools (fixed for the run, unless the host shortlists: then its
    catalogue is re-read before each request), its conversation's renderings (its own: runs
    and hosts share none), and what its requests sent so far."""

    def __init__(self, host: Host, toolset: Toolset, catalogue: ToolCatalogue | None) -> None:
        self.host = host
        self.options = host.options
        self.trace = host.trace
        self._toolset = toolset
        self._catalogue = catalogue
        self._selection: Selection | None = None
        self._rendered = EntryCache()
        self._sent = _SentBodies()

    @property
    def toolset(self) -> Toolset:
        """Every tool the run's calls may name (the whole catalogue as it is now)."""
        return self._catalogue.toolset if self._catalogue is not None else self._toolset

    async def to_answer(self, user_input: str, history: Sequence[Entry]) -> RunResult:
        """The run, in its ``run`` span (each model turn in a ``turn`` span of its own)."""
        model = self.host.model
        with self.trace.span("run", model.name, model=model.name, api=model.api) as span:
            result = await self._to_answer(user_input, history)
            if result.stopped != "answer":  # the page counts it as a failed run
                span.status = "error"
                span.error = {"code": result.stopped, "message": _STOPPED[result.stopped]}
            return result

    async def _to_answer(self, user_input: str, history: Sequence[Entry]) -> RunResult:
        conversation: list[Entry] = [*history, UserText(user_input)]
        self.trace.record("user", "host", "text", "receive", {"text": user_input})
        if self._catalogue is not None:
            k = self.options.shortlist
            self._selection = Selection(self._catalogue, user_input, k, self.trace)
        calls: list[CallRecord] = []
        refusals: Counter[str] = Counter()
        output_retries = self.options.retries_per_tool
        for turn_number in range(1, self.options.max_turns + 1):
            # The turn's hops are kept, redacted and flushed together, at its end.
            with (
                self.trace.deferring(),
                self.trace.span("turn", f"turn {turn_number}", number=turn_number),
            ):
                turn = await self._ask(conversation)
                conversation.append(turn)
                if turn.tool_calls:
                    records = await self._run_calls(turn.tool_calls, refusals)
            if turn.tool_calls:
                calls.extend(records)
                conversation.append(ToolOutputs(tuple(r.output for r in records)))
                continue
            verdict = self.host.check_answer(turn.text)
            if verdict is None or verdict.accepted:
                output = verdict.value if verdict is not None else None
                return RunResult(turn.text, output, "answer", turn_number, conversation, calls)
            if output_retries == 0:
                return RunResult(
                    turn.text, None, "output_invalid", turn_number, conversation, calls
                )
            output_retries -= 1
            assert verdict.rejection is not None
            conversation.append(UserText(_answer_again(verdict.rejection)))
        return RunResult(None, None, "turn_limit", self.options.max_turns, conversation, calls)

    async def _ask(self, conversation: list[Entry]) -> AssistantTurn:
        """The model's next turn: the request traced as sent, the answer streamed when the
        model streams (each piece to ``on_delta``, names canonical), the whole response
        traced, then read. A model that fails is traced as an ``error`` hop, then raises."""
        host, model = self.host, self.host.model
        shown = await self._tools_shown(conversation)
        request = Request(
            model.name,
            conversation,
            shown,
            self.options.system,
            host._output_payload,
            self.options.model_options,
        )
        body = host.wire.body(request, self._rendered)
        streams = isinstance(model, StreamingModel) and model.streaming
        if streams:
            body = host.wire.stream_body(body)
        label = f"model:{model.api}"
        with self.trace.span("model", model.name):
            self.trace.record("host", label, model.api, "send", self._sent.delta(body))
            # Written ahead of the wait: a run that hangs or dies while the model thinks shows
            # what it asked (the turn's other hops are kept at its end).
            self.trace.drain()
            try:
                response = await self._response(body, streams)
            except (ModelError, InputError) as error:
                self.trace.record(label, "host", model.api, "error", _failure(error))
                raise
            self.trace.record(label, "host", model.api, "receive", response)
        # Names are read back against every tool: a model may call one it was not shown.
        return host.wire.turn(response, self.toolset.refs)

    async def _tools_shown(self, conversation: Sequence[Entry]) -> Sequence[ToolRef]:
        """The tools the next request carries: all of them, or the run's selection."""
        if self._selection is None:
            return self.toolset.refs
        return await self._selection.tools_for(conversation)

    async def _response(self, body: dict[str, Any], streams: bool) -> dict[str, Any]:
        model = self.host.model
        if not streams:
            return await model.respond(body)
        assert isinstance(model, StreamingModel)
        watcher, tools = self.host.on_delta, self.toolset.refs
        if watcher is None:
            return await model.stream(body)
        return await model.stream(body, lambda d: watcher(with_canonical_name(d, tools)))

    async def _run_calls(
        self, tool_calls: Sequence[ToolCall], refusals: Counter[str]
    ) -> list[CallRecord]:
        """Gate every call in the model's order, then run the accepted ones concurrently."""
        records: list[CallRecord | None] = [None] * len(tool_calls)
        accepted: list[tuple[int, ToolCall, OfferedTool, Verdict]] = []
        for index, call in enumerate(tool_calls):
            tool = self.toolset.tools.get(call.name)
            verdict = self._gate(call, tool, refusals)
            if verdict.accepted and tool is not None:
                accepted.append((index, call, tool, verdict))
            else:  # the runner traces an accepted call with its verdicts; a refused one, here
                with self.trace.span("tool", call.name, call=call.call_id) as span:
                    span.status = "refused"
                    record_verdicts(self.trace, "host", verdict)
                records[index] = CallRecord(call, verdict, None)
        limiter = anyio.CapacityLimiter(self.options.max_concurrency)

        async def run(index: int, call: ToolCall, tool: OfferedTool, verdict: Verdict) -> None:
            async with limiter:
                with self.trace.span("tool", call.name, call=call.call_id) as span:
                    result = await tool.runner.run(call.call_id, verdict, self.trace)
                    span.status = _call_status(result)
            records[index] = CallRecord(call, verdict, result)

        if len(accepted) == 1:  # the usual turn: no task group to set up
            await run(*accepted[0])
        else:
            try:
                async with anyio.create_task_group() as group:
                    for item in accepted:
                        group.start_soon(run, *item)
            except* SchemawireError as failed:  # a store that cannot be written, for one
                raise failed.exceptions[0] from None
        return [record for record in records if record is not None]

    def _gate(self, call: ToolCall, tool: OfferedTool | None, refusals: Counter[str]) -> Verdict:
        """The argument gate's verdict on one call (unknown tools and spent budgets refused)."""
        if tool is None:
            return self._unknown(call)
        if refusals[call.name] >= self.options.retries_per_tool:
            return _refused(
                call,
                "retries_exhausted",
                f"{call.name} was refused {refusals[call.name]} times in this run",
                f"Stop calling {_known_name(tool.ref)}; answer with what you have.",
            )
        verdict = tool.gate.check(call.arguments)
        if not verdict.accepted:
            refusals[call.name] += 1
            return _named_as_known(verdict, tool.ref)
        return verdict

    def _unknown(self, call: ToolCall) -> Verdict:
        """A call of a tool that is not in the catalogue, refused. A shortlisting host does
        not list its catalogue here (the model is not to read it): it points to the search."""
        line = f"there is no tool {quoted(call.name)}"
        if self._catalogue is None:
            known = ", ".join(self.toolset.tools)
            return _refused(call, "tool_unknown", f"{line}; the tools are: {known}", _CALL_ONE)
        if self._catalogue.search is None:
            return _refused(call, "tool_unknown", line, _CALL_ONE)
        search = self.toolset.tools[SEARCH_TOOL].ref
        hint = f"Call one of your tools, or {_known_name(search)} to find one."
        return _refused(call, "tool_unknown", line, hint)


def _known_name(ref: ToolRef) -> str:
    """The name the model knows a tool by, for what the host tells it: the canonical name,
    except for a tool search sent in its API's own form (OpenAI Responses: ``tool_search``)."""
    return ref.projected_name if ref.searches else ref.name


def _named_as_known(verdict: Verdict, ref: ToolRef) -> Verdict:
    """A refusal whose hint names the tool as the model knows it (`_known_name`)."""
    rejection, known = verdict.rejection, _known_name(ref)
    if rejection is None or known == ref.name:
        return verdict
    hint = rejection.hint.replace(ref.name, known)
    return verdict.replace(rejection=dataclasses.replace(rejection, hint=hint))


def _held_open(model: Model) -> AbstractAsyncContextManager[object]:
    """``model`` held open for a block, when it asks to be (a `PoolingModel` such as
    `HttpModel` then pools its connections, and closes them when the block ends); else nothing
    to hold: a model's own ``async with`` is its caller's, never the host's."""
    if isinstance(model, PoolingModel):
        return model.held_open()
    return nullcontext()


def _shared_trace(tools: Sequence[ToolRunner]) -> Trace | None:
    """The trace the MCP clients behind ``tools`` record to, when they all record to one."""
    traces = {id(t): t for t in (getattr(r, "trace", None) for r in tools) if t is not None}
    return next(iter(traces.values())) if len(traces) == 1 else None


def _record_clients_to(tools: Sequence[ToolRunner], trace: Trace) -> None:
    """Have the MCP clients behind ``tools`` that were given no trace of their own record to
    ``trace``: one trace holds the whole run."""
    for runner in tools:
        client = getattr(runner, "client", None)
        if client is not None and not client.trace_given and client.trace is not trace:
            client.record_to(trace)


def _schema_validator(spec: ToolSpec, repository: Repository | None) -> CompiledSchema | None:
    """``spec``'s schema compiled with the references ``repository`` resolves (None without
    one: the gate compiles the schema alone)."""
    if repository is None:
        return None
    file = repository.find(spec.schema_id) if spec.schema_id else None
    if file is not None:
        return repository.validator(file)
    return compile_schema(spec.input_schema, registry=repository.registry, source=spec.name)


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


_CALL_ONE = "Call one of the tools."

_STOPPED = {
    "turn_limit": "the run reached its turn limit without an answer",
    "output_invalid": "the final answer broke the output schema after every retry",
}

_CONVERSATION_KEYS = ("messages", "input", "contents")  # where each API keeps the conversation


class _SentBodies:
    """What a request adds to the one before, for the trace: a run's requests repeat the whole
    conversation, and tracing each in full would cost time and space in the square of its
    length. A hop keeps the new entries (``"history": {"key", "kept"}`` says how many earlier
    ones come first) and says ``"unchanged"`` for tools sent as before."""

    def __init__(self) -> None:
        self._entries: list[Any] = []
        self._tools: list[Any] | None = None

    def delta(self, body: dict[str, Any]) -> dict[str, Any]:
        key = next((k for k in _CONVERSATION_KEYS if isinstance(body.get(k), list)), None)
        payload = dict(body)
        if key is not None:
            entries: list[Any] = body[key]
            kept = _common_prefix(self._entries, entries)
            self._entries = entries
            if kept:
                payload[key] = entries[kept:]
                payload["history"] = {"key": key, "kept": kept}
        tools = body.get("tools")
        if isinstance(tools, list):
            if self._tools is not None and _common_prefix(self._tools, tools) == len(tools) == len(
                self._tools
            ):
                payload["tools"] = "unchanged"
            self._tools = tools
        return payload


def _common_prefix(before: list[Any], now: list[Any]) -> int:
    """How many leading items ``now`` shares with ``before`` (the same objects, or written
    alike: ``{"role": 0}`` is not ``{"role": false}``, though Python finds them equal).

    A run's bodies share an entry's messages (the run's `EntryCache` renders each once),
    so when the last item of ``before`` is in its place in ``now``, all of ``before`` is."""
    if before and len(now) >= len(before) and now[len(before) - 1] is before[-1]:
        return len(before)
    count = 0
    for old, new in zip(before, now, strict=False):
        if old is not new and not written_alike(old, new):
            break
        count += 1
    return count


def _call_status(result: Verdict) -> Literal["ok", "error", "refused"]:
    """How a tool call's span ends: refused by the result gate (or not sent), failed (an error
    result), or ok."""
    if not result.accepted:
        return "refused"
    value = result.value
    return "error" if isinstance(value, ToolResult) and value.is_error else "ok"


def _failure(error: ModelError | InputError) -> dict[str, Any]:
    """A failed model request as the trace records it: the error, with the status and the
    start of the body when there was a response."""
    return {"error": error.to_json()}


def _refused(call: ToolCall, code: str, line: str, hint: str) -> Verdict:
    rejection = Rejection.for_tool(call.name, gate="arguments", code=code, line=line, hint=hint)
    return Verdict.reject(rejection, gate="arguments", tool=call.name, conforms=None)


def _answer_again(rejection: Rejection) -> str:
    from schemawire._json import dumps

    return (
        "Your answer does not match the required output schema. Answer again, as one JSON "
        f"value that does:\n{dumps(rejection.to_json(), indent=False)}"
    )
