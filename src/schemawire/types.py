"""The core value types: small, frozen, and plain JSON at the edges.

Wire JSON stays as dicts and lists; these types carry what schemawire itself decides about it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "ArgumentRestorer",
    "Hop",
    "Loss",
    "Projection",
    "Rejection",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Violation",
]

_MCP_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})
"""The content block types MCP defines."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One way an instance breaks its schema.

    Attributes:
        pointer: RFC 6901 pointer to the offending value in the instance (for a missing required
            property or an unexpected one, the pointer names that property).
        keyword: the JSON Schema keyword that failed, such as ``"exclusiveMinimum"``.
        message: one sentence a person or a model can act on.
        expected: what the keyword asked for (its value in the schema, or a summary of it).
        got: the value found at ``pointer`` (None when the value is missing).
    """

    pointer: str
    keyword: str
    message: str
    expected: Any = None
    got: Any = None

    def to_json(self) -> dict[str, Any]:
        """The violation as a JSON object with all five fields."""
        return {
            "pointer": self.pointer,
            "keyword": self.keyword,
            "message": self.message,
            "expected": self.expected,
            "got": self.got,
        }


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the repository defines it: the single source of truth for every projection.

    Everything else about the tool is read from its input schema, in one place, so that no
    projection, gate or trace can say otherwise: write the description in the schema::

        ToolSpec("get_weather", {"description": "The weather in a city.", "type": "object", ...})

    A handoff or a state schema is a spec too (its input schema is the schema).

    Attributes:
        name: the tool's name, the file stem of its input schema.
        input_schema: the canonical input schema, exactly as in the file.
        output_schema: the canonical output schema (``<name>.output.json``), if any.
    """

    name: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        given: object = self.input_schema  # a caller may pass anything: say what it should be
        if not isinstance(given, dict):
            from schemawire.errors import UsageError

            raise UsageError(
                f"ToolSpec({self.name!r}, input_schema, output_schema): the input schema must be "
                'a JSON object (a dict); a description goes in it, as its "description"'
            )
        output: object = self.output_schema
        if output is not None and not isinstance(output, dict):
            from schemawire._json import quoted
            from schemawire.errors import UsageError

            raise UsageError(f"the output schema of {quoted(self.name)} must be a JSON object")

    @property
    def description(self) -> str:
        """What the tool does, for the model: the input schema's ``description``."""
        value = self.input_schema.get("description")
        return value if isinstance(value, str) else ""

    @property
    def annotations(self) -> dict[str, Any]:
        """The input schema's ``x-`` keywords, without the ``x-`` prefix."""
        return {k.removeprefix("x-"): v for k, v in self.input_schema.items() if k.startswith("x-")}

    @property
    def schema_id(self) -> str | None:
        """The input schema's ``$id``."""
        value = self.input_schema.get("$id")
        return value if isinstance(value, str) else None

    @property
    def version(self) -> str | None:
        """The input schema's ``x-version``."""
        value = self.input_schema.get("x-version")
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class Loss:
    """Something the canonical schema says that a projection does not (or says differently).

    Attributes:
        code: a stable code, such as ``"ONEOF_TO_ANYOF"`` (see `schemawire.project.LOSS_CODES`).
        pointer: where in the canonical schema, as a JSON Pointer.
        detail: one sentence for people.
        keyword: the keyword at ``pointer`` that was dropped or changed; None when the loss
            covers the whole subschema at ``pointer`` (or is not about a keyword at all).
        document: ``"input"`` or ``"output"`` (which of the tool's schemas), or ``"tool"`` for
            what is not in a schema (the tool's name, the request's limits).
        blocking: the target would refuse the payload (a limit it cannot take).
    """

    code: str
    pointer: str
    detail: str
    keyword: str | None = None
    document: str = "input"
    blocking: bool = False

    def to_json(self) -> dict[str, Any]:
        """The loss as a JSON object."""
        fields: dict[str, Any] = {
            "code": self.code,
            "document": self.document,
            "pointer": self.pointer,
            "keyword": self.keyword,
            "detail": self.detail,
            "blocking": self.blocking,
        }
        return fields


class ArgumentRestorer(Protocol):
    """Turns arguments sent under a projected schema back into the canonical shape.

    The projections make one (`schemawire.project`); the argument gate uses it. Declared here so
    that the type of `Projection.argument_map` names nothing above this module.
    """

    @property
    def is_identity(self) -> bool:
        """Whether restoring changes nothing (the gate then skips it)."""
        ...

    def restore(self, value: Any) -> Any:
        """``value``, as sent under the projection, in the canonical shape."""
        ...


@dataclass(frozen=True, slots=True)
class Projection:
    """One canonical schema as one target takes it: the exact payload and what it lost.

    Attributes:
        target: the target's name, such as ``"openai.chat"``.
        name: the canonical name of the tool or schema.
        payload: the exact JSON to send.
        losses: everything the payload does not say as the canonical schema does.
        projected_name: the name the target sees (differs when the name had to change).
        argument_map: turns arguments sent under the projection back into canonical ones
            (renamed keys, nulls for optional properties).
        origins: for each schema in the payload, by its pointer in the payload, the canonical
            subschemas it came from (``"input:/properties/a"``); ``envelope:<field>`` for root
            annotations the envelope carries.
    """

    target: str
    name: str
    payload: dict[str, Any]
    losses: tuple[Loss, ...]
    projected_name: str
    argument_map: ArgumentRestorer
    origins: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])

    @property
    def lossless(self) -> bool:
        """Whether the payload says everything the canonical schema says, as it says it."""
        return not self.losses

    @property
    def blocked(self) -> bool:
        """Whether the target would refuse the payload."""
        return any(loss.blocking for loss in self.losses)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejection:
    """Why a gate refused a value: what the model (or the next agent) reads instead.

    Made by keyword, or by `for_spec` (a value checked against a spec's schema) or `for_tool`
    (a call refused for what it names, not for its value).

    Attributes:
        gate: the gate that refused it: ``"arguments"``, ``"results"``, ``"handoff"``...
        code: a stable code, such as ``"arguments_invalid"`` (see `schemawire.gates.CODES`).
        tool: the tool (or handoff) the value was for.
        schema_id: the ``$id`` of the schema it was checked against.
        version: that schema's ``x-version``.
        violations: every violation found, each with a pointer into the value.
        hint: one sentence saying what to do next.
    """

    gate: str
    code: str
    tool: str
    schema_id: str | None
    version: str | None
    violations: tuple[Violation, ...]
    hint: str

    @classmethod
    def for_spec(
        cls, spec: ToolSpec, *, gate: str, code: str, violations: Sequence[Violation], hint: str
    ) -> Rejection:
        """A value refused against ``spec``'s schema: the tool, ``$id`` and version are its."""
        return cls(
            gate=gate,
            code=code,
            tool=spec.name,
            schema_id=spec.schema_id,
            version=spec.version,
            violations=tuple(violations),
            hint=hint,
        )

    @classmethod
    def for_tool(cls, tool: str, *, gate: str, code: str, line: str, hint: str) -> Rejection:
        """A call refused for the tool it names (unknown, unreachable, spent), not for its
        value: one violation at the root, keyword ``tool``, saying ``line``; no schema."""
        return cls(
            gate=gate,
            code=code,
            tool=tool,
            schema_id=None,
            version=None,
            violations=(Violation("", "tool", line),),
            hint=hint,
        )

    def to_json(self) -> dict[str, Any]:
        """The model-facing error object: ``{"error": {"code", "tool", "schema", "version",
        "violations", "hint"}}``, a stable shape (docs/gates.md)."""
        return {
            "error": {
                "code": self.code,
                "tool": self.tool,
                "schema": self.schema_id,
                "version": self.version,
                "violations": [violation.to_json() for violation in self.violations],
                "hint": self.hint,
            }
        }


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as a model sent it.

    Attributes:
        call_id: the model's id for the call; its result is matched back by it.
        name: the tool's canonical name (a renamed tool is already mapped back).
        arguments: the arguments as received: a JSON string (OpenAI), or an object (Anthropic,
            Gemini).
        provider: the API it came from, such as ``"openai.chat"``.
    """

    call_id: str
    name: str
    arguments: Any
    provider: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool gave back, as the host received it.

    Attributes:
        call_id: the id of the call it answers.
        content: the result's content: a JSON value, or MCP content blocks
            (``[{"type": "text", "text": ...}, ...]``).
        is_error: the tool says it failed.
        structured: the structured result (MCP ``structuredContent``), when there is one.
    """

    call_id: str
    content: Any
    is_error: bool = False
    structured: Any = None

    @property
    def has_content_blocks(self) -> bool:
        """Whether ``content`` is a non-empty list of MCP content blocks: objects whose ``type``
        is one MCP defines (text, image, audio, resource, resource_link). Any other value, a list
        of other objects too, is a JSON value: the gates check it as one, and an MCP server sends
        it as its JSON text, never as blocks a client would refuse."""
        content = self.content
        return (
            isinstance(content, list)
            and bool(content)
            and all(isinstance(b, dict) and b.get("type") in _MCP_BLOCK_TYPES for b in content)
        )


@dataclass(frozen=True, slots=True)
class Hop:
    """One message crossing one hop of the wire, as the trace records it.

    Attributes:
        run_id: the run (or connection) the hop belongs to.
        seq: its place in the run, from 1.
        time: when it was recorded, in seconds since the epoch (UTC).
        source: who sent it, such as ``"host"`` or ``"mcp:everything"``.
        target: who it was for.
        protocol: ``"mcp"``, ``"openai.chat"``, ``"handoff"``...
        direction: ``"send"`` (the host sent it) or ``"receive"`` (the host received it).
        payload: the message as JSON, with secrets already redacted.
        verdict: what a gate decided about it (`Verdict.to_json`), when a gate looked.
        span: the id of the span it belongs to (16 lowercase hexadecimal characters), when it
            was recorded inside one (`schemawire.trace.Trace.span`); a line holds it only then.
    """

    run_id: str
    seq: int
    time: float
    source: str
    target: str
    protocol: str
    direction: str
    payload: Any
    verdict: dict[str, Any] | None = None
    span: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The hop as one JSON object (one line of a trace file); ``span`` only when it has one,
        so a hop outside every span is written as it was before spans."""
        line = {
            "run": self.run_id,
            "seq": self.seq,
            "time": self.time,
            "from": self.source,
            "to": self.target,
            "protocol": self.protocol,
            "direction": self.direction,
            "payload": self.payload,
            "verdict": self.verdict,
        }
        if self.span is not None:
            line["span"] = self.span
        return line
