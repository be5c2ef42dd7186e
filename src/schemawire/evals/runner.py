"""Running a case: its run, in a fresh store with an in-memory trace, then its expectations.

A flow case runs the flow with `FlowRunner`; any other case is one `Host` run with the
repository's ``[serve.tools]`` functions. Everything a case names (the flow, the scripts, the
tools and agents its expectations name, the schemas) is checked before the run: a case that
cannot pass whatever the run does is unusable (`ConfigError`), not failed.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

from schemawire._json import quoted
from schemawire.errors import InputError, SchemawireError, UsageError
from schemawire.evals.case import Case, load_case
from schemawire.evals.expect import Failure, check_expectations
from schemawire.evals.outcome import Outcome, read_outcome, route_targets
from schemawire.flows.definition import AgentSpec, Flow, load_flow
from schemawire.host import Host, HostOptions, Model, ScriptedModel, model_from_spec, python_tools
from schemawire.host.tools import PythonTool, ToolRunner
from schemawire.host.workflow import FlowRunner
from schemawire.schema.implementations import load_implementations
from schemawire.schema.repository import Repository
from schemawire.store import SqliteStore
from schemawire.trace import Trace

__all__ = ["CaseResult", "run_case", "run_case_async", "run_cases"]

CaseStatus = Literal["passed", "failed", "error"]
_DEFAULT_TURNS = 10


@dataclass(slots=True)
class CaseResult:
    """How one case went.

    Attributes:
        path: the case file.
        name: the case's name.
        status: ``passed``, ``failed`` (see ``failures``), or ``error``: the case could not be
            run (see ``error``).
        failures: every expectation the run did not meet.
        seconds: how long the case took.
        outcome: what the run did (None when it could not run).
        error: why the case could not be run.
    """

    path: Path
    name: str
    status: CaseStatus
    failures: list[Failure] = field(default_factory=list[Failure])
    seconds: float = 0.0
    outcome: Outcome | None = None
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def summary(self) -> str:
        """Why the case could not be run, in one line: the first line of ``error`` (empty when
        it ran)."""
        return next(iter((self.error or "").splitlines()), "")

    def to_json(self) -> dict[str, Any]:
        """The result as JSON, for ``schemawire eval --json``."""
        return {
            "name": self.name,
            "path": str(self.path),
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "failures": [f.to_json() for f in self.failures],
            "error": self.error,
            "outcome": self.outcome.to_json() if self.outcome else None,
        }


def run_case(case: str | Path | Case) -> CaseResult:
    """Run one case (a case file, or a loaded `Case`) and check what it expects.

    Raises:
        InputError: the case file is not JSON, breaks the case schema, or names what is not
            there (a flow, a script, a tool, an agent, a schema).
        UsageError: the repository or flow cannot be used as the case says.
        OSError: a file cannot be read.
    """
    return anyio.run(run_case_async, case)


async def run_case_async(case: str | Path | Case) -> CaseResult:
    """`run_case`, in a running event loop."""
    started = time.perf_counter()
    loaded = case if isinstance(case, Case) else load_case(case)
    repository = Repository.load(loaded.root)
    run = _prepare(loaded, repository)
    outcome = await run()
    found = check_expectations(loaded.expect, outcome, repository)
    failures = [Failure(message, pointer, *loaded.line_of(pointer)) for pointer, message in found]
    return CaseResult(
        loaded.path,
        loaded.name,
        "failed" if failures else "passed",
        failures,
        time.perf_counter() - started,
        outcome,
    )


def run_cases(paths: Iterable[str | Path]) -> list[CaseResult]:
    """Run every case; a case that cannot be run is a result with status ``error``, so one bad
    file hides none of the others."""
    results = []
    for path in paths:
        started = time.perf_counter()
        try:
            results.append(run_case(path))
        except (InputError, UsageError, OSError) as error:
            message = str(error) if not isinstance(error, OSError) else _os_error(error)
            results.append(
                CaseResult(
                    Path(path),
                    Path(path).stem,
                    "error",
                    error=message,
                    seconds=time.perf_counter() - started,
                )
            )
    return results


def _os_error(error: OSError) -> str:
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{error.strerror or error}"


# --- preparing ----------------------------------------------------------------------------------

Run = Callable[[], Awaitable[Outcome]]


def _prepare(case: Case, repository: Repository) -> Run:
    """The case's run, with everything it names checked first."""
    if case.flow is not None:
        return _prepare_flow(case, repository, case.flow)
    return _prepare_single(case, repository)


def _prepare_flow(case: Case, repository: Repository, flow_path: Path) -> Run:
    if not flow_path.is_file():
        raise case.error(
            "/flow",
            f"no flow file {flow_path} (a case's paths are relative to "
            f"the repository root, {case.root})",
        )
    flow = load_flow(flow_path)
    tools = {runner.spec.name: runner for runner in _python_tools(case, repository, None)}
    missing = sorted({t for a in flow.agents.values() for t in a.tools} - set(tools))
    if missing:
        raise case.error(
            "/flow",
            f"flow {flow.name} calls tools the repository implements "
            f"nowhere under [serve.tools]: {', '.join(missing)}",
        )
    models = _agent_models(case, flow)
    _check_flow_expectations(case, flow)
    _check_schemas(case, repository)

    async def run() -> Outcome:
        with tempfile.TemporaryDirectory(prefix="schemawire-eval-") as folder:
            store = SqliteStore(Path(folder) / "runs.db")
            trace = Trace()
            try:
                runner = _flow_runner(
                    case,
                    flow,
                    repository=repository,
                    store=store,
                    tools=tools,
                    models=models,
                    trace=trace,
                )
                try:
                    result = await runner.start(case.input)
                except SchemawireError as error:  # the model could not answer, for one
                    return _broken(read_outcome(trace.hops, route_targets(flow)), error)
            finally:
                store.close()
        outcome = read_outcome(trace.hops, route_targets(flow))
        outcome.status, outcome.error = result.status, result.error
        outcome.output, outcome.state, outcome.steps = result.output, result.state, result.steps
        return outcome

    return run


def _flow_runner(
    case: Case,
    flow: Flow,
    *,
    repository: Repository,
    store: SqliteStore,
    tools: Mapping[str, ToolRunner],
    models: Mapping[str, Callable[[], Model]],
    trace: Trace,
) -> FlowRunner:
    """The flow's runner. A flow it cannot run (a schema that is not there, a tool without an
    implementation) makes the case unusable, not its run failed.

    Raises:
        ConfigError: the flow names what the repository does not hold.
    """
    try:
        return FlowRunner(
            flow,
            repository,
            store,
            tools=tools,
            model=lambda agent: models[agent.name](),
            trace=trace,
            options=_options(case),
        )
    except (InputError, UsageError) as error:
        raise case.error("/flow", f"flow {flow.name} cannot run: {error}") from None


def _prepare_single(case: Case, repository: Repository) -> Run:
    runners = _python_tools(case, repository, case.document.get("tools"))
    if not runners:
        where = "/repo" if "repo" in case.document else ""
        raise case.error(
            where,
            f"the repository {repository.root} names no tool functions "
            "under [serve.tools]: a case without a flow runs them",
        )
    if "model" not in case.document:
        raise case.error("", 'a case without a flow needs a "model"')
    make_model = _model(case, case.document["model"], "/model")
    offered = {runner.spec.name for runner in runners}
    _check_called_tools(case, offered)
    _check_schemas(case, repository)

    async def run() -> Outcome:
        trace = Trace()
        options = _options(case, case.document.get("instructions"))
        host = Host(make_model(), runners, repository=repository, trace=trace, options=options)
        try:
            result = await host.run(case.input)
        except SchemawireError as error:
            return _broken(read_outcome(trace.hops), error)
        outcome = read_outcome(trace.hops)
        outcome.status = "done" if result.stopped == "answer" else "failed"
        outcome.error = (
            None if result.stopped == "answer" else (f"{result.stopped} after {result.turns} turns")
        )
        outcome.output = result.output if result.output is not None else result.answer
        return outcome

    return run


def _broken(outcome: Outcome, error: SchemawireError) -> Outcome:
    """The outcome of a run that raised: failed, with the error."""
    outcome.status, outcome.output = "failed", None
    outcome.error = f"{type(error).__name__}: {error}"
    return outcome


def _options(case: Case, system: str | None = None) -> HostOptions:
    return HostOptions(max_turns=case.document.get("max_turns", _DEFAULT_TURNS), system=system)


def _python_tools(case: Case, repository: Repository, chosen: list[str] | None) -> list[PythonTool]:
    """The repository's ``[serve.tools]`` functions as tools: those ``chosen``, or all."""
    functions = load_implementations(repository)
    if chosen is not None:
        for index, name in enumerate(chosen):
            if name not in functions:
                shown = ", ".join(functions) or "none"
                raise case.error(
                    f"/tools/{index}",
                    f"no tool {quoted(name)} under [serve.tools] of {repository.root} "
                    f"(there are: {shown})",
                )
        functions = {name: functions[name] for name in chosen}
    return python_tools(repository, functions)


# --- models -------------------------------------------------------------------------------------


def _model(case: Case, value: Any, pointer: str) -> Callable[[], Model]:
    """A fresh model each time (a script plays from its start), as the case writes it: a
    ``--model`` value (a script path relative to the repository root) or a script inline."""
    if isinstance(value, dict):
        api, responses = value["api"], value["responses"]
        name = value.get("model", "scripted")
        return lambda: ScriptedModel(api, responses, name)
    spec = str(value)
    if spec.startswith("script:"):
        path = case.root / spec.removeprefix("script:")
        if not path.is_file():
            raise case.error(
                pointer,
                f"no script {path} (a case's paths are relative to the "
                f"repository root, {case.root})",
            )
        spec = f"script:{path}"
    try:
        first = model_from_spec(spec)
    except (UsageError, InputError) as error:
        raise case.error(pointer, str(error)) from None
    if isinstance(first, ScriptedModel):
        script = first
        return lambda: ScriptedModel(script.api, script.responses, script.name)
    return lambda: model_from_spec(spec)


def _agent_models(case: Case, flow: Flow) -> dict[str, Callable[[], Model]]:
    """Each agent's model: the case's for that agent, else the agent's own, else the case's
    ``model``."""
    given: Mapping[str, Any] = case.document.get("models", {})
    for name in given:
        if name not in flow.agents:
            raise case.error(
                f"/models/{name}",
                f"flow {flow.name} has no agent {quoted(name)} (its agents: "
                f"{', '.join(flow.agents)})",
            )
    return {name: _agent_model(case, flow, agent, given) for name, agent in flow.agents.items()}


def _agent_model(
    case: Case, flow: Flow, agent: AgentSpec, given: Mapping[str, Any]
) -> Callable[[], Model]:
    if agent.name in given:
        return _model(case, given[agent.name], f"/models/{agent.name}")
    if agent.model is not None:
        spec = agent.model
        if spec.startswith("script:"):  # a flow's script path is relative to the flow file
            spec = "script:" + str(flow.path.parent / spec.removeprefix("script:"))
        try:
            first = model_from_spec(spec)
        except (UsageError, InputError, OSError) as error:
            raise case.error("/flow", f"agent {agent.name}'s model: {error}") from None
        if isinstance(first, ScriptedModel):
            script = first
            return lambda: ScriptedModel(script.api, script.responses, script.name)
        return lambda: model_from_spec(spec)
    if "model" in case.document:
        return _model(case, case.document["model"], "/model")
    raise case.error(
        "",
        f'agent {agent.name} names no model: give the case a "model", or '
        f'"models": {{"{agent.name}": ...}}',
    )


# --- what the expectations name -----------------------------------------------------------------


def _check_flow_expectations(case: Case, flow: Flow) -> None:
    agents = set(flow.agents)
    expect = case.expect
    for index, step in enumerate(expect.get("steps", [])):
        if step not in agents:
            raise case.error(
                f"/expect/steps/{index}", f"flow {flow.name} has no agent {quoted(step)}"
            )
    route = expect.get("route")
    if route is not None and route not in agents | {"end"}:
        raise case.error(
            "/expect/route",
            f'flow {flow.name} has no agent {quoted(route)}; a route goes to an agent or to "end"',
        )
    for index, call in enumerate(expect.get("calls", [])):
        agent = call.get("agent")
        if agent is not None and agent not in agents:
            raise case.error(
                f"/expect/calls/{index}/agent", f"flow {flow.name} has no agent {quoted(agent)}"
            )
    _check_called_tools(case, {tool for a in flow.agents.values() for tool in a.tools})


def _check_called_tools(case: Case, offered: set[str]) -> None:
    for index, call in enumerate(case.expect.get("calls", [])):
        if call["tool"] not in offered:
            shown = ", ".join(sorted(offered)) or "none"
            raise case.error(
                f"/expect/calls/{index}/tool",
                f"the run offers no tool {quoted(call['tool'])} (it offers: {shown})",
            )


def _check_schemas(case: Case, repository: Repository) -> None:
    for key in ("output", "state"):
        reference = case.expect.get(key, {}).get("schema")
        if reference is not None and repository.find(reference) is None:
            raise case.error(
                f"/expect/{key}/schema", f"no schema {quoted(reference)} in {repository.root}"
            )
