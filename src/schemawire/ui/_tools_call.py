"""One call the Tools page makes, through the gates, its hops streamed to the page as they are
recorded.

A call is one run: a fresh run id, its trace file under the page's traces folder
(`schemawire.trace.trace_path`), so the Runs page lists it beside the agents' runs. It runs as a
task of the page's lifespan (not of the request), so a page closed mid-call leaves a whole trace:
the answer reads the hops off a bounded stream as the call's `Trace` records them (``on_hop``),
each wait bounded by the call's deadline.

Locally, the call goes as the host makes it: the argument gate of the repository's schema (a
refused call is recorded and never reaches the function), then the repository's own
implementation (``[serve.tools]``, as `schemawire serve` finds it) through `PythonTool`, whose
result gate checks, redacts and cuts what it returns. On an MCP server, the call goes as
`schemawire call` makes it: `McpClient.call`, both gates, the repository's canonical schemas
where it has them, on the launch's one session (`schemawire.ui._tools_session`).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.abc
import anyio.from_thread
import anyio.to_thread

from schemawire._json import dumps
from schemawire.schema.repository import Repository
from schemawire.trace import Trace, new_run_id, record_verdicts, trace_path
from schemawire.types import Hop
from schemawire.ui._config import UiConfig
from schemawire.ui._tools_session import ServerSession

__all__ = ["MAX_HOPS", "CallAsked", "CallStream"]

MAX_HOPS = 200  # hops one call streams; a gated call makes a handful
_CONNECT = 15.0  # seconds added to the call's timeout for starting or reaching a server

Where = Literal["local", "mcp"]


@dataclass(frozen=True, slots=True)
class CallAsked:
    """The call the page asked for: a tool, its arguments as JSON text, where to call it."""

    tool: str
    arguments: str
    where: Where

    @classmethod
    def read(cls, body: Any) -> CallAsked:
        """The call a request's body asks for.

        Raises:
            ValueError: the body is not ``{"tool", "arguments", "where"}`` as documented.
        """
        if not isinstance(body, dict):
            raise ValueError('send {"tool": NAME, "arguments": JSON TEXT, "where": "local"}')
        tool, arguments, where = body.get("tool"), body.get("arguments"), body.get("where")
        if not isinstance(tool, str) or not tool:
            raise ValueError('"tool" must be the tool\'s name')
        if not isinstance(arguments, str):
            raise ValueError('"arguments" must be the arguments as JSON text (a string)')
        if where not in ("local", "mcp"):
            raise ValueError('"where" must be "local" or "mcp"')
        return cls(tool, arguments, where)


@dataclass(frozen=True, slots=True)
class _Done:
    """The call's outcome, the stream's last line."""

    body: dict[str, Any]


class CallStream:
    """One gated call, run as a task of the page's lifespan; `lines` gives its hops as JSON
    Lines as they come."""

    def __init__(
        self,
        config: UiConfig,
        repository: Repository | None,
        asked: CallAsked,
        *,
        function: Callable[..., Any] | None = None,
        session: ServerSession | None = None,
    ) -> None:
        """
        Args:
            config: the page's launch (the traces folder, the timeout).
            repository: the repository whose schemas gate a local call (on an MCP server, the
                session reads the repository itself).
            asked: the call.
            function: the tool's implementation, for a local call.
            session: the launch's session with its MCP server, for a call there.
        """
        self.config = config
        self.repository = repository
        self.tool = asked.tool
        self.arguments = asked.arguments
        self.where = asked.where
        self.function = function
        self.session = session
        self.run_id = new_run_id()
        self.path = trace_path(self.run_id, config.traces)
        # Room for every hop streamed and the outcome: sending never waits, even for a page
        # that stopped reading.
        self._send, self._receive = anyio.create_memory_object_stream[dict[str, Any] | _Done](
            MAX_HOPS + 1
        )
        self._loop_thread = threading.get_ident()
        self._hops = 0

    def start(self, group: anyio.abc.TaskGroup) -> None:
        """Start the call as a task of ``group`` (the page's lifespan: the call outlives a page
        closed mid-call, and ends with the page's server)."""
        self._loop_thread = threading.get_ident()
        group.start_soon(self._run, name=f"tools-call-{self.run_id}")

    async def lines(self) -> AsyncIterator[bytes]:
        """The stream the page reads: the run's id and trace file, each hop as it is recorded,
        then the outcome; one JSON object a line."""
        yield _line({"run": self.run_id, "trace": str(self.path), "where": self.where})
        deadline = time.monotonic() + self.config.call_timeout + _CONNECT
        with self._receive:
            while True:
                item = await self._next(deadline)
                if item is None:
                    message = f"no answer within {self.config.call_timeout:g} s"
                    yield _line({"done": {"error": message}})
                    return
                if isinstance(item, _Done):
                    yield _line({"done": item.body})
                    return
                yield _line({"hop": item})

    async def _next(self, deadline: float) -> dict[str, Any] | _Done | None:
        """The next item, or None once ``deadline`` has passed (or the call's task is gone)."""
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
            try:
                return await self._receive.receive()
            except anyio.EndOfStream:
                return None
        return None

    # --- the call, in its task -----------------------------------------------------------------

    async def _run(self) -> None:
        from schemawire.errors import one_line

        with self._send:
            try:
                body = await self._call()
            except Exception as error:  # the page shows it; the call's own hops are in the trace
                body = {"error": one_line(error)}
            self._put(_Done(body))

    def _put(self, item: dict[str, Any] | _Done) -> None:
        """Hand ``item`` to the page's stream; a page that went away gets nothing (the trace
        file has it all)."""
        try:
            if threading.get_ident() == self._loop_thread:
                self._send.send_nowait(item)
            else:  # a hop recorded in a worker thread
                anyio.from_thread.run_sync(self._send.send_nowait, item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.WouldBlock):
            pass

    def _on_hop(self, hop: Hop) -> None:
        if hop.protocol == "span":  # a span's start and end: structure, kept in the file
            return
        self._hops += 1
        if self._hops <= MAX_HOPS:
            self._put(_hop_json(hop))

    async def _call(self) -> dict[str, Any]:
        """The call in a ``tool`` span of its trace (the Runs page shows it like a loop's)."""
        with (
            Trace(self.run_id, path=self.path, keep=False, on_hop=self._on_hop) as trace,
            trace.span("tool", self.tool, where=self.where) as span,
        ):
            outcome = await (
                self._on_server(trace) if self.where == "mcp" else self._locally(trace)
            )
            if "error" in outcome:
                span.status = "error"
            elif not outcome["accepted"]:
                span.status = "refused"
            return outcome

    async def _locally(self, trace: Trace) -> dict[str, Any]:
        from schemawire.gates import ArgumentGate
        from schemawire.host import python_tools

        assert self.repository is not None  # the route checked both
        assert self.function is not None
        gate = ArgumentGate.from_repository(self.repository, self.tool)
        runner = python_tools(self.repository, {self.tool: self.function})[0]
        runner.timeout = self.config.call_timeout
        verdict = await anyio.to_thread.run_sync(gate.check, self.arguments)
        record_verdicts(trace, "host", verdict)
        if not verdict.accepted:
            return _outcome(verdict, None, sent=False)
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        result = await runner.run(call_id, verdict, trace)
        return _outcome(verdict, result, sent=True)

    async def _on_server(self, trace: Trace) -> dict[str, Any]:
        from schemawire.errors import ServerError

        assert self.session is not None  # the route checked it
        try:
            async with self.session.using(trace) as client:
                call = await client.call(self.tool, self.arguments)
        except ServerError as error:
            return {"error": f"MCP server {error.server}: {error.reason}"}
        return _outcome(call.argument_verdict, call.result, sent=call.sent)


def _outcome(arguments: Any, result: Any, *, sent: bool) -> dict[str, Any]:
    """What the page shows once the call is over: which gate refused (if one did), with its
    violations, and what the caller reads (the output, as JSON text)."""
    refused = arguments if not arguments.accepted else result
    if refused is not None and refused.accepted:
        refused = None
    rejection = refused.rejection if refused is not None else None
    if result is not None:
        value = result.value
        output = {"content": value.content, "isError": value.is_error}
        if value.structured is not None:
            output["structuredContent"] = value.structured
    else:
        output = {"content": rejection.to_json() if rejection else None, "isError": True}
    return {
        "accepted": refused is None,
        "sent": sent,
        "refused_by": refused.gate if refused is not None else None,
        "rejection": dumps(rejection.to_json()) if rejection is not None else None,
        "violations": [v.to_json() for v in rejection.violations] if rejection else [],
        "changes": [c.to_json() for c in result.changes] if result is not None else [],
        "output": dumps(output),
    }


def _hop_json(hop: Hop) -> dict[str, Any]:
    """A hop as the page lists it: its fields, and the whole hop as JSON text (exact)."""
    verdict = hop.verdict if isinstance(hop.verdict, dict) else None
    payload = hop.payload if isinstance(hop.payload, dict) else {}
    method = payload.get("method")
    return {
        "seq": hop.seq,
        "time": hop.time,
        "from": hop.source,
        "to": hop.target,
        "protocol": hop.protocol,
        "direction": hop.direction,
        "method": method if isinstance(method, str) else None,
        "gate": verdict.get("gate") if verdict else None,
        "outcome": verdict.get("outcome") if verdict else None,
        "json": dumps(hop.to_json()),
    }


def _line(value: dict[str, Any]) -> bytes:
    return (dumps(value, indent=False) + "\n").encode("utf-8")
