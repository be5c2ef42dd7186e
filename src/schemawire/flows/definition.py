"""Flow files: agents, the handoff each emits, the routes it takes, the state a run checkpoints.

A flow file (``flows/<name>.json``) is itself checked against a JSON Schema schemawire ships
(`FLOW_SCHEMA`, documented in docs/flows.md). Its schemas are named as the repository names
them (``handoffs/triage_to_billing``, or an ``$id``).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from schemawire._json import load_file, quoted
from schemawire.errors import ConfigError, ErrorCode
from schemawire.gates import HandoffGate, Route
from schemawire.schema.repository import Repository
from schemawire.schema.schema_file import SchemaFile
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import ToolSpec

__all__ = ["END", "FLOW_SCHEMA", "AgentSpec", "Flow", "load_flow"]

FLOW_SCHEMA: dict[str, Any] = json.loads(
    resources.files("schemawire.flows").joinpath("flow.schema.json").read_text(encoding="utf-8")
)
END = "end"
"""The route target that ends a flow."""


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One agent of a flow.

    Attributes:
        name: its name in the flow.
        instructions: its system prompt.
        model: its model (a ``--model`` value), or None for the run's.
        tools: the tools it may call, by name.
        handoff: the schema of what it hands on (a repository name), if it hands on.
        routes: where its handoff goes, in order.
        output: the schema of its final answer, when it ends the flow.
    """

    name: str
    instructions: str | None
    model: str | None
    tools: tuple[str, ...]
    handoff: str | None
    routes: tuple[Route, ...]
    output: str | None


@dataclass(frozen=True, slots=True)
class Flow:
    """A flow as its file describes it."""

    name: str
    path: Path
    start: str
    agents: dict[str, AgentSpec]
    state: str | None = None
    description: str = ""

    def schema(self, repository: Repository, reference: str) -> SchemaFile:
        """The repository schema a flow names.

        Raises:
            ConfigError: no such schema.
        """
        file = repository.find(reference)
        if file is None:
            raise ConfigError(
                ErrorCode.SCHEMA_UNKNOWN,
                f"no schema {quoted(reference)} in {repository.root}",
                source=str(self.path),
            )
        return file

    def spec(self, repository: Repository, reference: str) -> ToolSpec:
        """A schema the flow names, as a spec for a gate."""
        file = self.schema(repository, reference)
        return ToolSpec(file.name, file.document)

    def handoff_gate(self, repository: Repository, agent: AgentSpec) -> HandoffGate | None:
        """The gate of an agent's handoff, or None when it ends the flow."""
        if agent.handoff is None:
            return None
        file = self.schema(repository, agent.handoff)
        return HandoffGate(
            self.spec(repository, agent.handoff), agent.routes, repository.validator(file)
        )


def load_flow(path: str | Path) -> Flow:
    """The flow in ``path``.

    Raises:
        InputError: the file is not JSON.
        ConfigError: it breaks the flow schema, or names an agent it does not define.
    """
    path = Path(path)
    document: Any = load_file(path)
    violations = _flow_validator().violations(document)
    if violations:
        first = violations[0]
        raise ConfigError(
            ErrorCode.CONFIG_INVALID,
            f"{first.pointer or '/'}: {first.message}",
            source=str(path),
            pointer=first.pointer,
        )
    assert isinstance(document, dict)
    agents = {name: _agent(name, body) for name, body in document["agents"].items()}
    flow = Flow(
        document["name"],
        path,
        document["start"],
        agents,
        document.get("state"),
        document.get("description", ""),
    )
    _check_names(flow)
    return flow


@functools.cache
def _flow_validator() -> CompiledSchema:
    return compile_schema(FLOW_SCHEMA, source="flow.schema.json")


def _agent(name: str, body: dict[str, Any]) -> AgentSpec:
    routes = tuple(Route(r["to"], r.get("when"), r.get("name")) for r in body.get("routes", ()))
    return AgentSpec(
        name,
        body.get("instructions"),
        body.get("model"),
        tuple(body.get("tools", ())),
        body.get("handoff"),
        routes,
        body.get("output"),
    )


def _check_names(flow: Flow) -> None:
    """Every agent a flow names (start, route targets) is defined, or is ``end``; a fallback
    route comes last."""
    for agent in flow.agents.values():
        for index, route in enumerate(agent.routes[:-1]):
            if route.fallback:
                pointer = f"/agents/{agent.name}/routes/{index}"
                raise ConfigError(
                    ErrorCode.CONFIG_INVALID,
                    f"{pointer}: a fallback route must be the last route: move it last",
                    source=str(flow.path),
                    pointer=pointer,
                )
    targets = [("/start", flow.start)] + [
        (f"/agents/{agent.name}/routes/{i}/to", route.to)
        for agent in flow.agents.values()
        for i, route in enumerate(agent.routes)
    ]
    for pointer, name in targets:
        if name != END and name not in flow.agents:
            raise ConfigError(
                ErrorCode.CONFIG_INVALID,
                f"{pointer}: no agent {quoted(name)} in the flow",
                source=str(flow.path),
                pointer=pointer,
            )
