"""One gated ``tools/call`` (`McpCall`), and the refusals of calls that cannot be made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types

from schemawire._json import quoted
from schemawire.gates import Verdict
from schemawire.mcp._tools import RemoteTool
from schemawire.types import Rejection, ToolResult

__all__ = [
    "McpCall",
    "call_request",
    "refused_unchecked",
    "refused_unknown",
    "refused_unreachable",
]


@dataclass(frozen=True, slots=True)
class McpCall:
    """One gated ``tools/call``.

    Attributes:
        tool: the tool's name.
        call_id: the host's id of the call.
        argument_verdict: the argument gate's verdict.
        result: the result gate's verdict; None when the call was not sent.
        raw: the ``CallToolResult`` exactly as the server sent it (None when none came).
        sent: whether ``tools/call`` was sent (never when the arguments were refused).
    """

    tool: str
    call_id: str
    argument_verdict: Verdict
    result: Verdict | None = None
    raw: dict[str, Any] | None = None
    sent: bool = False

    @property
    def accepted(self) -> bool:
        """Whether both gates passed: the output is the tool's result."""
        return self.argument_verdict.accepted and self.result is not None and self.result.accepted

    @property
    def rejection(self) -> Rejection | None:
        """Why the call was refused: by the argument gate, the result gate, or (passed on
        whole) by the server's own gates; None when both gates passed."""
        if not self.argument_verdict.accepted:
            return self.argument_verdict.rejection
        return self.result.rejection if self.result is not None else None

    @property
    def output(self) -> ToolResult:
        """What the model reads: the (redacted, cut) result, or the error object of the gate
        that refused."""
        if self.result is not None:
            result: ToolResult = self.result.value
            return result
        assert self.argument_verdict.rejection is not None
        return ToolResult(self.call_id, self.argument_verdict.rejection.to_json(), True)

    def to_json(self) -> dict[str, Any]:
        """The call, both verdicts and the output, as JSON (``schemawire call --json``)."""
        output = self.output
        return {
            "tool": self.tool,
            "call_id": self.call_id,
            "sent": self.sent,
            "accepted": self.accepted,
            "arguments": self.argument_verdict.to_json(),
            "result": self.result.to_json() if self.result is not None else None,
            "output": {
                "content": output.content,
                "isError": output.is_error,
                "structuredContent": output.structured,
            },
        }


def call_request(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolRequest:
    """The ``tools/call`` request that sends ``arguments`` to tool ``name``."""
    return mcp_types.CallToolRequest(
        params=mcp_types.CallToolRequestParams(name=name, arguments=arguments)
    )


def refused_unreachable(name: str, call_id: str, reason: str) -> McpCall:
    """A call that could not be made at all: the server is gone."""
    hint = f"{name} could not be reached; tell the user."
    rejection = Rejection.for_tool(
        name, gate="arguments", code="tool_unavailable", line=reason, hint=hint
    )
    return McpCall(name, call_id, refused_unchecked(rejection))


def refused_unknown(
    name: str, call_id: str, tools: dict[str, RemoteTool], tool: RemoteTool | None
) -> McpCall:
    """A call of a tool the server does not list (``tool`` None), or lists with a schema that
    cannot be used."""
    if tool is not None:
        code = "tool_unusable"
        line = f"the server's schema for {name} cannot be used: {tool.problem}"
        hint = f"{name} cannot be called safely; tell the user."
    else:
        known = ", ".join(sorted(tools)) or "none"
        code = "tool_unknown"
        line = f"the server has no tool {quoted(name)} (its tools: {known})"
        hint = "Call one of the server's tools."
    rejection = Rejection.for_tool(name, gate="arguments", code=code, line=line, hint=hint)
    return McpCall(name, call_id, refused_unchecked(rejection))


def refused_unchecked(rejection: Rejection) -> Verdict:
    """A call refused before its arguments were checked (no schema to say they conform)."""
    return Verdict.reject(rejection, gate="arguments", tool=rejection.tool, conforms=None)
