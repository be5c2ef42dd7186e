"""Flows: agents, the handoff each emits, the routes it takes, the state a run checkpoints.

A flow file (``flows/<name>.json``) is itself checked against a JSON Schema schemawire ships
(`FLOW_SCHEMA`, documented in docs/flows.md). Its schemas are named as the repository names
them (``handoffs/triage_to_billing``, or an ``$id``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from schemawire._json import load_file, quoted
from schemawire.errors import ConfigError, ErrorCode, InputError, UsageError
from schemawire.gates import HandoffGate, Route
from schemawire.schema.repository import Repository, SchemaFile
from schemawire.schema.rules import Finding, rule
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import ToolSpec

__all__ = ["FLOW_SCHEMA", "AgentSpec", "Flow", "flow_findings", "load_flow"]

FLOW_SCHEMA: dict[str, Any] = json.loads(
    resources.files("schemawire.host").joinpath("flow.schema.json").read_text(encoding="utf-8")
)
END = "end"


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


# --- `schemawire check` -------------------------------------------------------------------------


def flow_findings(repository: Repository, directory: str = "flows") -> Iterator[Finding]:
    """What is wrong with the repository's flows: each file against the flow schema, the
    schemas it names, each route's ``when``, and each handoff fixture that declares a route
    (``valid/x.expect.json`` holding ``{"route": "billing"}``) against the route it reaches."""
    folder = repository.root / directory
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        relpath = path.relative_to(repository.root).as_posix()
        try:
            flow = load_flow(path)
        except InputError as error:
            yield _finding(relpath, error.message, error.pointer or "")
            continue
        yield from _flow_schemas(flow, repository, relpath)


def _flow_schemas(flow: Flow, repository: Repository, relpath: str) -> Iterator[Finding]:
    named = [("/state", flow.state)] + [
        (f"/agents/{a.name}/{key}", getattr(a, key))
        for a in flow.agents.values()
        for key in ("handoff", "output")
    ]
    for pointer, reference in named:
        if reference is not None and repository.find(reference) is None:
            yield _finding(relpath, f"no schema {quoted(reference)} in the repository", pointer)
    tools = {spec.name for spec in repository.tools()}
    for agent in flow.agents.values():
        for index, tool in enumerate(agent.tools):
            if tool not in tools:
                where = f"/agents/{agent.name}/tools/{index}"
                yield _finding(
                    relpath,
                    f"no tool schema {quoted(tool)} (tools are checked against the "
                    "repository's schemas)",
                    where,
                )
        yield from _routes(flow, agent, repository, relpath)


def _routes(
    flow: Flow, agent: AgentSpec, repository: Repository, relpath: str
) -> Iterator[Finding]:
    if agent.handoff is None or repository.find(agent.handoff) is None:
        return
    try:
        gate = flow.handoff_gate(repository, agent)
    except (InputError, UsageError) as error:
        yield _finding(
            relpath, getattr(error, "message", str(error)), f"/agents/{agent.name}/routes"
        )
        return
    assert gate is not None
    file = flow.schema(repository, agent.handoff)
    fixtures = repository.root / repository.config.fixtures / "handoffs" / file.name / "valid"
    for expect in sorted(fixtures.glob("*.expect.json")):
        fixture = expect.with_name(expect.name.removesuffix(".expect.json") + ".json")
        try:
            declared, handoff = load_file(expect), load_file(fixture)
        except (InputError, OSError) as error:
            where = fixture.relative_to(repository.root).as_posix()
            yield _finding(relpath, f"{where} cannot be read: {error}", f"/agents/{agent.name}")
            continue
        if not isinstance(declared, dict) or "route" not in declared:
            continue
        decision = gate.check(handoff)
        reached = decision.route.to if decision.route else None
        if reached != declared["route"]:
            where = fixture.relative_to(repository.root).as_posix()
            got = f"reaches {quoted(reached)}" if reached is not None else "no route takes it"
            yield _finding(
                relpath,
                f"{where} should reach route {quoted(declared['route'])} of agent "
                f"{quoted(agent.name)}, but {got}",
                f"/agents/{agent.name}/routes",
            )


def _finding(relpath: str, message: str, pointer: str) -> Finding:
    return Finding(rule("SW301"), relpath, pointer, message)
