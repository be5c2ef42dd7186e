"""One tool call as every integration makes it: the argument gate, the runner, the result gate,
all inside one tool span of a schemawire trace. The frameworks differ only in how they hand
the model our answer (a retry prompt, an error string, a tool message); what is checked and
what is recorded is this module's, so a call reads the same in the trace whichever framework
made it, and the same as the host's own loop."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemawire._json import dumps
from schemawire.gates import ArgumentGate, ArgumentOptions, ResultOptions
from schemawire.host.loop import CallRecord
from schemawire.host.tools import ToolRunner, python_tools
from schemawire.schema.repository import Repository
from schemawire.trace import CURRENT, Trace, record_verdicts
from schemawire.trace.spans import Current
from schemawire.types import Projection, ToolCall, ToolResult

__all__ = ["GatedTool", "gated_tools", "model_text"]

_CALL_IDS = itertools.count(1)


@dataclass(slots=True)
class GatedTool:
    """A tool runner behind our argument gate, traced: what each integration wraps in its
    framework's tool object.

    Attributes:
        runner: what runs the tool: a `PythonTool` or an `McpTool`.
        gate: the argument gate its calls pass (reading the projection the framework sends the
            model, when there is one: a strict schema's nulls are read as absent).
        trace: where the call's span and hops go.
    """

    runner: ToolRunner
    gate: ArgumentGate
    trace: Trace

    @classmethod
    def of(
        cls,
        runner: ToolRunner,
        trace: Trace,
        *,
        projection: Projection | None = None,
        options: ArgumentOptions | None = None,
    ) -> GatedTool:
        """The runner behind the gate of its own canonical schema (as ``projection`` sent it)."""
        repository = getattr(runner, "repository", None)
        documents = repository.documents if repository is not None else None
        gate = ArgumentGate(
            runner.spec, runner.validator, options, projection=projection, documents=documents
        )
        return cls(runner, gate, trace)

    @property
    def name(self) -> str:
        """The tool's canonical name."""
        return self.runner.spec.name

    @property
    def description(self) -> str:
        """The tool's description, as its schema gives it."""
        return self.runner.spec.description or ""

    async def call(
        self,
        arguments: Any,
        call_id: str | None = None,
        *,
        parent: str | Current | None = CURRENT,
    ) -> CallRecord:
        """Check ``arguments`` (a JSON text or a parsed value), run the tool when they pass,
        and check its result: the record of both verdicts. Never raises for what the model
        sent or the tool did; a refused call never reaches the runner.

        Args:
            arguments: as the framework received them from the model.
            call_id: the model's id for the call (default: a new one, ``sw_<n>``).
            parent: the span the tool span is in (default: the one open here; a framework
                whose run span a callback opened names it).
        """
        call = ToolCall(call_id or f"sw_{next(_CALL_IDS)}", self.name, arguments)
        with self.trace.span("tool", self.name, parent=parent, call=call.call_id) as span:
            verdict = self.gate.check(arguments)
            if not verdict.accepted:
                span.status = "refused"
                record_verdicts(self.trace, "host", verdict)
                return CallRecord(call, verdict, None)
            record = CallRecord(
                call, verdict, await self.runner.run(call.call_id, verdict, self.trace)
            )
            span.status = record.status
        return record


def gated_tools(
    repository: Repository,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    trace: Trace | None = None,
    *,
    results: ResultOptions | None = None,
    options: ArgumentOptions | None = None,
) -> list[GatedTool]:
    """The repository's Python tools, each behind its gates (see `python_tools`)."""
    trace = trace if trace is not None else Trace()
    runners: Sequence[ToolRunner] = python_tools(repository, functions, results)
    return [GatedTool.of(runner, trace, options=options) for runner in runners]


def model_text(record: CallRecord) -> str:
    """What the model reads back for one call, as JSON text: the result's structured content
    (else its content), or our structured refusal (``{"error": {...}}``) when a gate refused."""
    output: ToolResult = record.output
    value = output.structured if output.structured is not None else output.content
    return value if isinstance(value, str) else dumps(value, indent=False)
