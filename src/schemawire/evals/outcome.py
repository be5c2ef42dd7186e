"""What a run did, read from its hops: the tool calls that ran, the agents, the route, the end.

The same reading serves a run the eval just made (its in-memory trace) and a run recorded in a
trace file (``schemawire eval --from-trace``), so a case written from a trace expects exactly
what a run of that case is measured by.

The hops it reads (see `Host`, `FlowRunner` and the tool runners):

- ``flow`` (host → ``agent:NAME``): an agent starts; the step's input;
- ``text`` (user → host): the user's request;
- ``python`` send ``{"call", "tool", "arguments"}`` and ``mcp`` send ``tools/call``: a call that
  passed the argument gate and runs;
- ``handoff`` ``{"handoff", "route"}``: the handoff gate's decision (``route`` is the label of
  the route taken, None when refused);
- ``checkpoint`` ``{step, state, node, next_input}``: a step's end (``send``); ``node`` None
  ends the run. Received, it is the checkpoint a resumed run starts from: what the run did
  after that checkpoint, until it was interrupted, is read as undone (the resumed run does it
  again), except the calls the journal answers for it (``journal`` receive ``{"replayed",
  "tool", "arguments"}``), which count once, where the resumed run makes them. A received
  checkpoint the trace never saw written (its worker died just after writing it) ends the step
  before it, as if it had been;
- ``model:API`` receive: a model's response, in its API's format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from schemawire.errors import SchemawireError
from schemawire.types import Hop
from schemawire.wire import wire_format

if TYPE_CHECKING:
    from schemawire.flows.definition import Flow

__all__ = ["ModelResponse", "ObservedCall", "Outcome", "read_outcome", "route_targets"]

HandoffSeen = Literal["none", "refused", "routed"]


@dataclass(frozen=True, slots=True)
class ObservedCall:
    """One tool call that passed the argument gate and ran.

    Attributes:
        tool: the tool's name.
        arguments: the arguments it ran with (as the gate passed them on).
        agent: the flow agent that made it (None outside a flow).
        via: how it ran: a ``python`` function or an ``mcp`` server's tool.
    """

    tool: str
    arguments: Any
    agent: str | None = None
    via: Literal["python", "mcp"] = "python"

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"tool": self.tool, "arguments": self.arguments}
        return shown | ({"agent": self.agent} if self.agent is not None else {})


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One model response of a run, as the trace recorded it.

    Attributes:
        agent: the flow agent it answered (None outside a flow).
        api: its API (``openai.chat``...).
        model: the model's name in the request.
        body: the response body.
    """

    agent: str | None
    api: str
    model: str | None
    body: Any


@dataclass(slots=True)
class Outcome:
    """What one run did.

    Attributes:
        status: ``done`` (the flow reached its end; one agent: the model answered) or
            ``failed``.
        error: why it failed, when known.
        calls: the tool calls that ran, in the order they were sent.
        steps: the flow agents that ran, in order (empty outside a flow).
        route: where the first handoff went (an agent, or ``end``); None when it was refused
            or there was none (`handoff` says which).
        handoff: whether the first handoff was ``routed``, ``refused``, or there was ``none``.
        output: the final output: the last agent's answer (parsed, when it has a schema).
        state: the last checkpointed state (None outside a flow).
        input: the user's request.
        responses: every model response, in order.
    """

    status: Literal["done", "failed"]
    error: str | None = None
    calls: list[ObservedCall] = field(default_factory=list[ObservedCall])
    steps: list[str] = field(default_factory=list[str])
    route: str | None = None
    handoff: HandoffSeen = "none"
    output: Any = None
    state: Any = None
    input: str | None = None
    responses: list[ModelResponse] = field(default_factory=list[ModelResponse])

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON (without the model responses), for ``--json`` and reports."""
        return {
            "status": self.status,
            "error": self.error,
            "steps": self.steps,
            "route": self.route,
            "calls": [c.to_json() for c in self.calls],
            "output": self.output,
            "state": self.state,
        }


class _Reader:
    """Walks the hops once, keeping what an outcome needs."""

    def __init__(self, routes: Mapping[tuple[str, str], str]) -> None:
        self.outcome = Outcome("failed")
        self.routes = routes
        self.agent: str | None = None
        self.model: str | None = None
        self.pending_route: str | None = None  # a routed handoff's label, until its checkpoint
        self.checkpoint: dict[str, Any] | None = None
        # What the run had done at each checkpoint (step -> outcome), to rewind a resumed run
        # to, and the calls a rewind undid, which the journal may answer again.
        self.saved: dict[Any, Outcome] = {0: _copy(self.outcome)}
        self.undone: list[ObservedCall] = []
        self.table: dict[str, Callable[[Hop, dict[str, Any]], None]] = {
            "flow": self._flow,
            "text": self._text,
            "python": self._python,
            "mcp": self._mcp,
            "handoff": self._handoff,
            "checkpoint": self._checkpoint,
            "journal": self._journal,
        }

    def read(self, hop: Hop) -> None:
        payload = hop.payload if isinstance(hop.payload, dict) else {}
        if hop.target.startswith("model:") and hop.direction == "send":
            self.model = payload.get("model") if isinstance(payload.get("model"), str) else None
        elif hop.source.startswith("model:") and hop.direction == "receive":
            self.outcome.responses.append(
                ModelResponse(self.agent, hop.protocol, self.model, hop.payload)
            )
        else:
            read = self.table.get(hop.protocol)
            if read is not None:
                read(hop, payload)

    def _flow(self, hop: Hop, payload: dict[str, Any]) -> None:
        if hop.direction == "send" and hop.target.startswith("agent:"):
            self.agent = hop.target.removeprefix("agent:")
            self.outcome.steps.append(self.agent)
            given = payload.get("input")
            if self.outcome.input is None and isinstance(given, str):
                self.outcome.input = given

    def _text(self, hop: Hop, payload: dict[str, Any]) -> None:
        text = payload.get("text")
        if self.outcome.input is None and hop.source == "user" and isinstance(text, str):
            self.outcome.input = text

    def _python(self, hop: Hop, payload: dict[str, Any]) -> None:
        if hop.direction == "send" and isinstance(payload.get("tool"), str):
            self._call(payload["tool"], payload.get("arguments"), "python")

    def _mcp(self, hop: Hop, payload: dict[str, Any]) -> None:
        params = payload.get("params")
        if (
            hop.direction == "send"
            and payload.get("method") == "tools/call"
            and isinstance(params, dict)
        ):
            self._call(str(params.get("name")), params.get("arguments", {}), "mcp")

    def _call(self, tool: str, arguments: Any, via: Literal["python", "mcp"]) -> None:
        self.outcome.calls.append(ObservedCall(tool, arguments, self.agent, via))

    def _handoff(self, hop: Hop, payload: dict[str, Any]) -> None:
        if self.outcome.handoff != "none":
            return
        label = payload.get("route")
        if not isinstance(label, str):
            self.outcome.handoff = "refused"
            return
        self.outcome.handoff = "routed"
        agent = hop.source.removeprefix("agent:")
        self.outcome.route = self.routes.get((agent, label), label)
        self.pending_route = label

    def _checkpoint(self, hop: Hop, payload: dict[str, Any]) -> None:
        if hop.direction == "receive" and payload.get("step") in self.saved:
            self._resume(payload)
            return
        # A checkpoint written; or one a resumed run starts from that the trace never saw
        # written (the worker died just after writing it): the step before it ended there.
        self.checkpoint = payload
        if self.pending_route is not None:  # the checkpoint names where the handoff went
            node = payload.get("node")
            self.outcome.route = node if isinstance(node, str) else "end"
            self.pending_route = None
        self.saved[payload.get("step")] = _copy(self.outcome)

    def _resume(self, payload: dict[str, Any]) -> None:
        """Rewind to the checkpoint a resumed run starts from."""
        saved = self.saved[payload.get("step")]
        self.undone += self.outcome.calls[len(saved.calls) :]
        self.outcome = replace(_copy(saved), input=self.outcome.input)
        self.checkpoint = payload if payload.get("step") else None
        self.pending_route = None

    def _journal(self, hop: Hop, payload: dict[str, Any]) -> None:
        """A call the journal answered: it counts when a rewind undid it (it ran before the
        run was interrupted); a call made twice in one turn ran once, and counts once."""
        if hop.direction != "receive" or not payload.get("replayed"):
            return
        tool, arguments = payload.get("tool"), payload.get("arguments")
        for index, call in enumerate(self.undone):
            if call.tool == tool and call.arguments == arguments:
                del self.undone[index]
                self._call(call.tool, call.arguments, call.via)
                return

    def finish(self) -> Outcome:
        outcome = self.outcome
        if outcome.steps:  # a flow: its checkpoints say how far it went
            last = self.checkpoint or {}
            outcome.state = last.get("state")
            ended = bool(last) and last.get("node") is None
            outcome.status = "done" if ended else "failed"
            outcome.output = last.get("next_input") if ended else None
        else:
            outcome.status, outcome.output = _answered(outcome.responses)
        return outcome


def _copy(outcome: Outcome) -> Outcome:
    """``outcome`` with lists of its own."""
    return replace(
        outcome,
        calls=list(outcome.calls),
        steps=list(outcome.steps),
        responses=list(outcome.responses),
    )


def _answered(responses: list[ModelResponse]) -> tuple[Literal["done", "failed"], Any]:
    """Whether one agent's last response answers (no tool calls), and its text."""
    if not responses:
        return "failed", None
    last = responses[-1]
    try:
        turn = wire_format(last.api).turn(last.body, ())
    except SchemawireError:
        return "failed", None
    return ("failed", None) if turn.tool_calls else ("done", turn.text)


def read_outcome(
    hops: Iterable[Hop], routes: Mapping[tuple[str, str], str] | None = None
) -> Outcome:
    """What the run whose hops these are did.

    Args:
        hops: the run's hops, in order (a `Trace`'s, or `read_trace`'s).
        routes: ``(agent, route label) -> target``, to name where a handoff went when no
            checkpoint followed it (the run failed right after). Without it, the label.

    A flow's status is read from its checkpoints: a run whose last checkpoint has no next
    agent is ``done``; any other (failed, or cut short by a crash) is ``failed``. One agent's
    status is read from the model's last response.
    """
    reader = _Reader(routes or {})
    for hop in hops:
        reader.read(hop)
    return reader.finish()


def route_targets(flow: Flow) -> dict[tuple[str, str], str]:
    """``(agent, route label) -> target`` of every route of ``flow``, for `read_outcome`."""
    return {
        (agent.name, route.label): route.to
        for agent in flow.agents.values()
        for route in agent.routes
    }
