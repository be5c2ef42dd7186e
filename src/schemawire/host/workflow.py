"""Running a flow: one agent per step, handoffs gated and routed, state checkpointed, resumable.

A step is one agent's run, from its input (the user's request, or the handoff it was given) to
its final answer. After each step:

1. the answer is handed on: it must pass the agent's handoff gate, which also picks the route;
   no route and no fallback stops the run with the gate's error, never a guess;
2. the state is updated: each property the state schema declares takes the latest value of
   that name in the step's tool results and its answer;
3. the state must satisfy the state schema, or the run stops (``state_invalid``) and nothing is
   written: a checkpoint is always valid;
4. the checkpoint is written, only if the run is still at the step before (two workers never
   both write a step).

Tool calls go through a journal: recorded before they run and after, under an idempotency key
(run, step, tool, arguments). A resumed step re-runs its agent from the step's start; a call the
journal has completed is answered from the journal, not run again (a failed one too, unless its
tool is idempotent); a call it recorded as started but never ended was interrupted: it is
retried only when its tool is annotated idempotent (``x-idempotent: true``), and otherwise
answered with ``tool_interrupted``. The same call twice in one turn runs once.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import anyio

from schemawire._json import dumps
from schemawire.errors import FlowError, SchemawireError, StoreError, UsageError
from schemawire.flows.definition import END, AgentSpec, Flow
from schemawire.gates import Verdict
from schemawire.host.loop import Host, HostOptions, RunResult
from schemawire.host.models import Model
from schemawire.host.tools import ToolRunner, current_idempotency_key
from schemawire.schema.repository import Repository
from schemawire.schema.validator import CompiledSchema
from schemawire.store._offloop import OffLoop
from schemawire.store.base import (
    CallStatus,
    Checkpoint,
    JournalEntry,
    Store,
    idempotency_key,
)
from schemawire.trace import Trace, new_run_id
from schemawire.types import Rejection, ToolResult, ToolSpec

__all__ = ["FlowError", "FlowResult", "FlowRunner", "JournaledTool"]


@dataclass(slots=True)
class FlowResult:
    """How a run ended.

    Attributes:
        run_id: the run.
        status: ``done`` or ``failed``.
        state: the last checkpointed state.
        output: the last agent's answer (its parsed output when it has an output schema).
        steps: the steps taken in this call (not those of an earlier, interrupted one).
        error: why it failed.
    """

    run_id: str
    status: Literal["done", "failed"]
    state: Any
    output: Any = None
    steps: list[str] = field(default_factory=list[str])
    error: str | None = None


class FlowRunner:
    """Runs (and resumes) the runs of one flow against one store."""

    def __init__(
        self,
        flow: Flow,
        repository: Repository,
        store: Store,
        *,
        tools: Mapping[str, ToolRunner],
        model: Callable[[AgentSpec], Model],
        trace: Trace | None = None,
        options: HostOptions | None = None,
        worker: str | None = None,
        max_steps: int = 50,
    ) -> None:
        """
        Args:
            flow: the flow.
            repository: its schemas (state, handoffs, outputs, tools).
            store: where checkpoints and the journal go.
            tools: every tool the flow's agents may call, by name.
            model: the model of each agent.
            trace: where hops go.
            options: how each agent's host runs.
            worker: this worker's name in claims (default: host, pid and a part of its own,
                so that two runners of one process never both hold a run).
            max_steps: steps one run may take: a flow whose routes loop stops there.

        Raises:
            ConfigError: the flow names a schema that is not there, or a route out of place.
            SchemaError: a schema or a route's ``when`` does not compile.
            UsageError: the flow names a tool that ``tools`` does not implement.
        """
        self.flow = flow
        self.repository = repository
        self.store = store
        self._io = OffLoop(store)  # store calls run in a thread: the loop never waits
        self.tools = dict(tools)
        self.model = model
        self.trace = trace if trace is not None else Trace()
        self.options = options or HostOptions()
        self.worker = worker or f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.max_steps = max_steps
        self._state = self._state_schema()
        missing = sorted({t for a in flow.agents.values() for t in a.tools} - set(self.tools))
        if missing:
            raise UsageError(f"flow {flow.name}: no implementation for tools {', '.join(missing)}")
        # Every schema the flow names, resolved now: a missing one fails before any tool runs.
        self._gates = {
            name: flow.handoff_gate(repository, agent) for name, agent in flow.agents.items()
        }
        self._contracts = {name: self._contract(agent) for name, agent in flow.agents.items()}

    def _contract(self, agent: AgentSpec) -> tuple[ToolSpec, CompiledSchema] | None:
        """The schema of an agent's final answer (its handoff, or its output), compiled."""
        reference = agent.handoff or agent.output
        if reference is None:
            return None
        file = self.flow.schema(self.repository, reference)
        return self.flow.spec(self.repository, reference), self.repository.validator(file)

    def _state_schema(self) -> tuple[ToolSpec, CompiledSchema] | None:
        if self.flow.state is None:
            return None
        file = self.flow.schema(self.repository, self.flow.state)
        return self.flow.spec(self.repository, self.flow.state), self.repository.validator(file)

    # --- runs ----------------------------------------------------------------------------------

    async def start(self, user_input: str, run_id: str | None = None) -> FlowResult:
        """Start a run with the user's request and drive it to its end.

        Args:
            user_input: the user's request: the first agent's input.
            run_id: the run's id (default: a new one); the trace records the run's hops under
                it.

        Raises:
            StoreError: a run with that id exists, or the store cannot be written.
            SchemawireError: a model or tool server that cannot be used (the run is marked
                failed, with the error, and can be resumed).
        """
        run_id = run_id or new_run_id()
        spec = self._state[0] if self._state else None
        first = Checkpoint(
            run_id,
            0,
            {},
            spec.schema_id if spec else None,
            spec.version if spec else None,
            self.flow.start,
            user_input,
        )
        await self._io.run(self.store.create_run, run_id, self.flow.name, first)
        return await self._claimed(run_id, resumed=False)

    async def resume(self, run_id: str) -> FlowResult:
        """Drive a run on from its last checkpoint (after a crash, for one).

        Its hops are recorded under its id, after a ``checkpoint`` hop (``receive``) that says
        which checkpoint it resumed from.

        Raises:
            StoreError: no such run, or another worker holds it.
            SchemawireError: a model or tool server that cannot be used (the run is marked
                failed, with the error, and can be resumed again).
        """
        return await self._claimed(run_id, resumed=True)

    async def _claimed(self, run_id: str, *, resumed: bool) -> FlowResult:
        """Claim the run, drive it, release it."""
        run = await self._io.run(self.store.run, run_id)
        if run is None:
            raise StoreError(f"no run {run_id}")
        if not await self._io.claim(run_id, self.worker):  # given up again if cancelled
            raise StoreError(f"run {run_id} is being run by another worker")
        self.trace.begin(run_id)
        try:
            with self.trace.span("flow", self.flow.name, resumed=resumed) as span:
                checkpoint = await self._io.run(self.store.latest, run_id)
                assert checkpoint is not None
                if resumed:
                    received = checkpoint.to_json()
                    self.trace.record("store", "host", "checkpoint", "receive", received)
                if run.status == "failed":  # driven again: running until it ends
                    await self._io.run(self.store.finish, run_id, "running")
                result = await self._drive(checkpoint)
                if result.status == "failed":
                    span.status = "error"
                    span.error = {"code": "flow_failed", "message": result.error}
                return result
        finally:
            with anyio.CancelScope(shield=True):  # a cancelled run still gives up its claim
                await self._io.run(self.store.release, run_id, self.worker)

    async def _drive(self, checkpoint: Checkpoint) -> FlowResult:
        """Step the run on from ``checkpoint`` to its end, and mark how it ended.

        Raises:
            StoreError: the store cannot be written, or another worker moved the run on (the
                run is left as it is).
            SchemawireError: anything else that stops a step, such as a model that cannot be
                reached (the run is marked failed with it).
        """
        run_id = checkpoint.run_id
        steps: list[str] = []
        output: Any = checkpoint.next_input if checkpoint.node is None else None
        try:
            while checkpoint.node is not None:
                if checkpoint.step >= self.max_steps:
                    raise FlowError(
                        f"flow {self.flow.name} took {checkpoint.step} steps without "
                        "reaching its end: check its routes for a loop, or raise "
                        "max_steps"
                    )
                steps.append(checkpoint.node)
                checkpoint, output = await self._step(checkpoint)
        except FlowError as error:
            await self._io.run(self.store.finish, run_id, "failed", str(error))
            return FlowResult(run_id, "failed", checkpoint.state, None, steps, str(error))
        except StoreError:
            raise
        except SchemawireError as error:
            await self._io.run(self.store.finish, run_id, "failed", str(error))
            raise
        await self._io.run(self.store.finish, run_id, "done")
        return FlowResult(run_id, "done", checkpoint.state, output, steps)

    async def _step(self, checkpoint: Checkpoint) -> tuple[Checkpoint, Any]:
        """Run the agent ``checkpoint`` points at; the next checkpoint, and the agent's answer."""
        assert checkpoint.node is not None
        agent = self.flow.agents[checkpoint.node]
        with self.trace.span("agent", agent.name, step=checkpoint.step + 1):
            return await self._agent_step(checkpoint, agent)

    async def _agent_step(self, checkpoint: Checkpoint, agent: AgentSpec) -> tuple[Checkpoint, Any]:
        step = checkpoint.step + 1
        journaled = [
            JournaledTool(self.tools[name], self.store, checkpoint.run_id, step, off_loop=self._io)
            for name in agent.tools
        ]
        answer = await self._run_agent(agent, journaled, checkpoint.next_input)
        node, handed = self._hand_on(agent, answer)
        state = self._next_state(checkpoint.state, journaled, answer)
        spec = self._state[0] if self._state else None
        next_checkpoint = Checkpoint(
            checkpoint.run_id,
            step,
            state,
            spec.schema_id if spec else None,
            spec.version if spec else None,
            None if node == END else node,
            handed,
        )
        written = await self._io.run(
            self.store.save, next_checkpoint, expected_step=checkpoint.step
        )
        self.trace.record("host", "store", "checkpoint", "send", written.to_json())
        return written, answer.output if answer.output is not None else answer.answer

    async def _run_agent(
        self, agent: AgentSpec, tools: list[JournaledTool], given: Any
    ) -> RunResult:
        contract = self._contracts[agent.name]  # compiled up front: a flow fails before it runs
        output = contract[0] if contract is not None else None
        options = replace(self.options, system=agent.instructions)
        host = Host(
            self.model(agent),
            tools,
            repository=self.repository,
            trace=self.trace,
            options=options,
            output=output,
        )
        self.trace.record("host", f"agent:{agent.name}", "flow", "send", {"input": given})
        result = await host.run(given if isinstance(given, str) else _handed(given))
        if result.stopped != "answer":
            raise FlowError(
                f"agent {agent.name} gave no answer ({result.stopped} after {result.turns} turns)"
            )
        return result

    def _hand_on(self, agent: AgentSpec, answer: RunResult) -> tuple[str, Any]:
        """Where the run goes after ``agent``, and what it hands on."""
        gate = self._gates[agent.name]
        if gate is None:
            return END, answer.output if answer.output is not None else answer.answer
        decision = gate.check(answer.output)
        self.trace.record(
            f"agent:{agent.name}",
            "host",
            "handoff",
            "check",
            {"handoff": answer.output, "route": decision.route.label if decision.route else None},
            verdict=decision.verdict.to_json(),
        )
        if decision.route is None:
            rejection = decision.verdict.rejection
            line = rejection.violations[0].message if rejection else "refused"
            raise FlowError(f"agent {agent.name}'s handoff was refused: {line}", rejection)
        return decision.route.to, decision.verdict.value

    def _next_state(self, state: Any, tools: list[JournaledTool], answer: RunResult) -> Any:
        """The state after a step, checked against the state schema.

        Raises:
            FlowError: it breaks the schema (``state_invalid``); nothing is checkpointed.
        """
        if self._state is None:
            return state
        spec, validator = self._state
        names = set((spec.input_schema.get("properties") or {}).keys())
        updated = dict(state) if isinstance(state, dict) else {}
        found = [value for tool in tools for value in tool.structured] + [answer.output]
        for value in found:
            if isinstance(value, dict):
                updated.update({k: v for k, v in value.items() if k in names})
        violations = validator.violations(updated)
        if violations:
            rejection = Rejection.for_spec(
                spec,
                gate="state",
                code="state_invalid",
                violations=violations,
                hint="Fix the flow or its tools: the state must satisfy its schema after "
                "every step.",
            )
            first = violations[0]
            raise FlowError(
                f"the state after this step breaks {spec.name}: "
                f"{first.pointer or '/'} {first.message}",
                rejection,
            )
        return updated


def _handed(value: Any) -> str:
    """What the next agent reads: the handoff object, as JSON."""
    return f"Handed over (JSON):\n{dumps(value, indent=False)}"


class JournaledTool:
    """A tool whose calls are journaled in the store: a completed call is never run twice."""

    def __init__(
        self,
        inner: ToolRunner,
        store: Store,
        run_id: str,
        step: int,
        *,
        off_loop: OffLoop | None = None,
    ) -> None:
        """
        Args:
            inner: the tool.
            store: the run's store (its calls run off the event loop).
            off_loop: the runner's way to the store, so that its calls and the journal's run
                one at a time, in order, whatever the store (default: one of the tool's own).
            run_id: the run.
            step: the step the calls belong to.
        """
        self.inner = inner
        self.spec = inner.spec
        self.validator = inner.validator
        self.repository = inner.repository
        self.store, self._io = store, off_loop or OffLoop(store)
        self.run_id, self.step = run_id, step
        self.structured: list[Any] = []  # the structured results of this step, for the state
        self._running: dict[str, anyio.Event] = {}  # calls in flight, by key
        self._idempotent = bool(self.spec.input_schema.get("x-idempotent"))

    async def run(self, call_id: str, accepted: Verdict, trace: Trace) -> Verdict:
        key = idempotency_key(self.run_id, self.step, self.spec.name, accepted.value)
        while key in self._running:  # the same call twice in one turn: the second waits
            await self._running[key].wait()
        self._running[key] = anyio.Event()  # taken before any await: the journal is read after
        try:
            return self._keep(await self._answer(key, call_id, accepted, trace))
        finally:
            self._running.pop(key).set()

    async def _answer(self, key: str, call_id: str, accepted: Verdict, trace: Trace) -> Verdict:
        """The call's answer from the journal, when the journal has it; else the call's own."""
        entry = await self._io.run(self.store.call, key)
        if entry is not None and (
            entry.status == "completed" or (entry.status == "failed" and not self._idempotent)
        ):
            replayed = {
                "key": key,
                "replayed": True,
                "tool": self.spec.name,
                "arguments": entry.arguments,
                "status": entry.status,
            }
            trace.record("store", "host", "journal", "receive", replayed)
            return _replayed(self.spec.name, call_id, entry)
        if entry is not None and entry.status == "started" and not self._idempotent:
            return _interrupted(self.spec.name, call_id, key)
        return await self._call(key, call_id, accepted, trace)

    async def _call(self, key: str, call_id: str, accepted: Verdict, trace: Trace) -> Verdict:
        """Run the call, journaled before and after."""
        await self._io.run(
            self.store.call_started,
            JournalEntry(key, self.run_id, self.step, self.spec.name, accepted.value, "started"),
        )
        token = current_idempotency_key.set(key)
        try:
            verdict = await self.inner.run(call_id, accepted, trace)
        finally:
            current_idempotency_key.reset(token)
        status: CallStatus = "completed" if verdict.accepted else "failed"
        trace.drain()  # write-ahead: the trace holds the call before the journal says it ended
        await self._io.run(self.store.call_ended, key, status, _stored(verdict.value))
        return verdict

    def _keep(self, verdict: Verdict) -> Verdict:
        value: ToolResult = verdict.value
        if verdict.accepted and value.structured is not None:
            self.structured.append(value.structured)
        return verdict


def _stored(result: ToolResult) -> dict[str, Any]:
    return {
        "content": result.content,
        "isError": result.is_error,
        "structuredContent": result.structured,
    }


def _replayed(tool: str, call_id: str, entry: JournalEntry) -> Verdict:
    stored = entry.result if isinstance(entry.result, dict) else {}
    result = ToolResult(
        call_id, stored.get("content"), bool(stored.get("isError")), stored.get("structuredContent")
    )
    return Verdict(gate="results", tool=tool, accepted=entry.status == "completed", value=result)


def _interrupted(tool: str, call_id: str, key: str) -> Verdict:
    line = (
        f"an earlier attempt of this call was interrupted (journal key {key}); whether it "
        f"took effect is unknown, and {tool} is not marked idempotent, so it is not repeated"
    )
    hint = "Tell the user the outcome is unknown; do not call it again."
    rejection = Rejection.for_tool(
        tool, gate="results", code="tool_interrupted", line=line, hint=hint
    )
    output = ToolResult(call_id, rejection.to_json(), True)
    return Verdict.reject(rejection, gate="results", tool=tool, value=output)
