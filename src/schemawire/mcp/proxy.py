"""The gating proxy: an MCP server in front of any other MCP server.

Clients see the upstream's tools (with the repository's canonical schema in place of the
upstream's own, where the repository has the tool); every call is checked by the argument gate
before it goes upstream and by the result gate before it comes back, and every message on both
sides is a hop of the trace. This is the validation the MCP SDK's server advertises but never
applies.

What the proxy lists is what it sends: an output schema that is not an object is listed wrapped
as ``{"result": ...}`` to clients before 2026-07-28, and their structured results are wrapped to
match. A rejection (the proxy's own, or one the upstream sent) reaches the client whole.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import anyio

from schemawire.errors import ServerError
from schemawire.gates import Verdict
from schemawire.mcp._calls import refused_unchecked
from schemawire.mcp._problems import unknown_tool_error
from schemawire.mcp._tools import (
    OBJECT_OUTPUT_ONLY,
    RemoteTool,
    is_object_schema,
    wrapped_output,
)
from schemawire.mcp.client import McpClient
from schemawire.mcp.server import verdict_result
from schemawire.project.mcp import project_mcp
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from schemawire.types import Rejection, ToolResult

__all__ = ["RETRY_AFTER", "Restarts", "UpstreamTools", "listed_as", "unreachable"]

RETRY_AFTER = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Seconds before an upstream whose restart failed is tried again: after the first failure in
a row, the second, ...; the last for every one after."""


class Restarts:
    """An upstream's restarts: how many succeeded, and, after one failed, when the next may be
    tried (`RETRY_AFTER`, longer after each failure in a row)."""

    def __init__(self) -> None:
        self.count = 0
        """Restarts that succeeded."""
        self._failed: ServerError | None = None  # how the last restart failed, if it did
        self._failures = 0  # restarts failed in a row
        self._retry_at = 0.0  # when to try again (anyio's clock)

    def check(self) -> None:
        """Raise the last restart's error when it failed and it is too soon to try again.

        Raises:
            ServerError: how the last restart failed.
        """
        if self._failed is not None and anyio.current_time() < self._retry_at:
            raise self._failed

    def failed(self, error: ServerError) -> None:
        """A restart failed with ``error``: the next waits (the same error again, of one restart
        several callers shared, counts once)."""
        if error is self._failed:
            return
        self._failures += 1
        self._failed = error
        wait = RETRY_AFTER[min(self._failures, len(RETRY_AFTER)) - 1]
        self._retry_at = anyio.current_time() + wait

    def succeeded(self) -> None:
        """A restart succeeded: the next failure waits the shortest time again."""
        self._failures, self._failed = 0, None
        self.count += 1


class UpstreamTools:
    """The tools of an upstream server, served through the gates of an `McpClient`."""

    def __init__(self, client: McpClient) -> None:
        """
        Args:
            client: connected to the upstream; its repository (if any) supplies canonical
                schemas, its gate options apply to every call.
        """
        self.client = client
        # (name, version) -> (the tool listed, as listed to that version, wrapped): projected
        # once per listing of the upstream, not on every call.
        self._shown: dict[tuple[str, str], tuple[RemoteTool, dict[str, Any], bool]] = {}
        self._restarts = Restarts()

    @property
    def restarts(self) -> int:
        """Restarts of the upstream that succeeded (its tools may have changed with each)."""
        return self._restarts.count

    async def list_tools(self, version: str) -> list[dict[str, Any]]:
        """The upstream's tools; a tool the repository defines is listed from its canonical
        schema (so clients see the schema the gate applies).

        Raises:
            ServerError: the upstream is gone and cannot be restarted.
        """
        return [self.listed(tool, version) for tool in await self.tools()]

    async def tools(self) -> tuple[RemoteTool, ...]:
        """The upstream's tools as its client lists them (started again first, if it stopped).

        Raises:
            ServerError: the upstream is gone and cannot be restarted (now, or lately: see
                `_ensure_connected`).
        """
        await self._ensure_connected()
        return await self.client.list_tools()

    def listed(self, tool: RemoteTool, version: str) -> dict[str, Any]:
        """``tool`` (one of `tools`) as listed to a client of ``version``."""
        return self._listed(tool, version)[0]

    def _listed(self, tool: RemoteTool, version: str) -> tuple[dict[str, Any], bool]:
        """``tool`` as listed to a client of ``version``, and whether its structured results
        are sent wrapped as ``{"result": ...}`` (because that is how it is listed)."""
        shown = self._shown.get((tool.name, version))
        if shown is None or shown[0] is not tool:  # a new listing makes new tools
            shown = (tool, *listed_as(tool, version, self.client.repository))
            self._shown[(tool.name, version)] = shown
        return shown[1], shown[2]

    # ToolBackend.call_tool's signature, which this implements.
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | str | None,
        *,
        version: str,
        trace: Trace,
        label: str,
        shown_as: str | None = None,
    ) -> dict[str, Any]:
        """One gated call of the upstream's tool ``name`` (`ToolBackend.call_tool`);
        ``shown_as``: the name the client calls it by, where that is another (a gateway's),
        for a refusal to name the tool the client knows."""
        try:
            await self._ensure_connected()
            tools = {tool.name: tool for tool in await self.client.list_tools()}
        except ServerError as error:
            rejection = unreachable(shown_as or name, error)
            return verdict_result(refused_unchecked(rejection))
        if name not in tools:
            raise unknown_tool_error(name)
        call = await self.client.call(name, arguments if arguments is not None else {})
        _, wrapped = self._listed(tools[name], version)
        # The client put both verdicts in the trace; the refusing one is what the client reads.
        verdict = call.result if call.result is not None else call.argument_verdict
        if shown_as is not None and verdict.rejection is not None:
            verdict = _renamed(verdict, verdict.rejection, shown_as)
        return verdict_result(verdict, wrap=wrapped)

    async def _ensure_connected(self) -> None:
        """Restart an upstream that went away: a crashed stdio server, or one the client
        stopped because it stopped reading its input, comes back for the next call. Calls that
        find it gone at the same time share one restart (`McpClient.reconnect`).

        A restart that failed is not tried again for a while (`RETRY_AFTER`, longer after each
        failure in a row): until then, every call and listing gets the same error at once,
        instead of each waiting for a server that may hang in its handshake.

        Raises:
            ServerError: the upstream cannot be started again (or could not, lately).
        """
        if self.client.connected:
            return
        self._restarts.check()
        try:
            await self.client.reconnect()
        except ServerError as error:
            self._restarts.failed(error)
            raise
        self._restarts.succeeded()


def listed_as(
    tool: RemoteTool, version: str, repository: Repository | None
) -> tuple[dict[str, Any], bool]:
    """``tool`` as listed to a client of ``version``, and whether its structured results are
    sent wrapped as ``{"result": ...}`` (because that is how it is listed): a tool the
    repository defines is listed from its canonical schema."""
    if tool.canonical and tool.spec is not None:
        documents = repository.documents if repository else None
        projection = project_mcp(tool.spec, version=version, documents=documents)
        wrapped = any(loss.code == "OUTPUT_SCHEMA_WRAPPED" for loss in projection.losses)
        return projection.payload, wrapped
    output = tool.listed.get("outputSchema")
    if output is None or is_object_schema(output) or version not in OBJECT_OUTPUT_ONLY:
        return tool.listed, False
    return {**tool.listed, "outputSchema": wrapped_output(output)}, True


def unreachable(name: str, error: ServerError) -> Rejection:
    """The refusal of a call the upstream cannot take. (The reason, which may quote the
    upstream's stderr, was redacted whole when the error was made: `ServerError`.)"""
    line = f"the upstream server is unavailable: {error.reason}"
    hint = f"{name} cannot be reached now; tell the user."
    return Rejection.for_tool(name, gate="arguments", code="tool_unavailable", line=line, hint=hint)


def _renamed(verdict: Verdict, rejection: Rejection, name: str) -> Verdict:
    """``verdict`` with its rejection naming the tool ``name`` (in its hint too: "Call echo
    again" is "Call everything_echo again")."""
    called = re.compile(rf"(?<![\w-]){re.escape(rejection.tool)}(?![\w-])")
    renamed = replace(rejection, tool=name, hint=called.sub(name, rejection.hint))
    value = verdict.value
    if isinstance(value, ToolResult) and value.content == rejection.to_json():
        value = replace(value, content=renamed.to_json())  # a refused result: the refusal
    return verdict.replace(tool=name, rejection=renamed, value=value)
