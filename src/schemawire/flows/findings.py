"""What ``schemawire check`` finds wrong with a repository's flows (rule SW301).

Each flow file is read against the flow schema, every schema and tool it names must be in the
repository, each route's ``when`` must compile, and each handoff fixture that declares the route
it should reach (``valid/x.expect.json`` holding ``{"route": "billing"}``) must reach it.
"""

from __future__ import annotations

from collections.abc import Iterator

from schemawire._json import load_file, quoted
from schemawire.errors import InputError, UsageError
from schemawire.flows.definition import AgentSpec, Flow, load_flow
from schemawire.schema.repository import Repository
from schemawire.schema.rules import Finding, rule

__all__ = ["flow_findings"]


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
