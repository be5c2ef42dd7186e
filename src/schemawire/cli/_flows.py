"""``schemawire run --flow`` and ``schemawire runs``: workflows that checkpoint and resume.

One id per run: ``run --flow`` picks it, the store keeps the run under it, every hop carries it,
and the trace is ``.schemawire/traces/<run id>.jsonl`` (unless ``--trace``), which ``runs
resume`` appends to. ``runs show`` and ``runs resume`` take the id or its start.
"""

from __future__ import annotations

import datetime
import shlex
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.markup import escape
from rich.table import Table

from schemawire.cli._hops import HopPrinter, shown
from schemawire.cli._output import (
    EXIT_FINDINGS,
    MachineJson,
    guarded,
    print_json,
    print_stopped,
    stdout,
)
from schemawire.errors import SchemawireError, UsageError
from schemawire.store import DEFAULT_STORE, RunLookupError
from schemawire.trace import Trace, new_run_id, trace_path

__all__ = ["run_flow", "runs_app"]

Store = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="SCHEMAWIRE_STORE",
        help="Where runs are kept: sqlite:PATH or postgresql://...",
    ),
]
RunId = Annotated[str, typer.Argument(help="The run: its id, or the first 4 or more characters.")]

runs_app = typer.Typer(
    name="runs",
    help="The runs of your flows: list them, show one, resume one after a crash.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    epilog="[bold]Examples[/]\n\n  schemawire runs list\n\n  schemawire runs show 3f2a9c\n\n"
    "  schemawire runs resume 3f2a9c --flow flows/refund.json",
)


def run_flow(
    flow_path: Path,
    question: str,
    *,
    store: str,
    model: str | None,
    repo: Path | None,
    trace: Path | None,
    json: bool,
    max_turns: int,
    stream: bool = True,
) -> None:
    """Start a run of a flow under a new id, print how it ended, and exit 1 if it failed
    (2 if a model or server could not be used)."""
    from schemawire.host import HostOptions

    run_id = new_run_id()
    printer = None if json else HopPrinter(stdout)
    recorded = Trace(run_id, path=trace or trace_path(run_id), on_hop=printer)
    options = HostOptions(max_turns=max_turns)
    resume = _resume_command(run_id, flow_path, store, model, repo)
    with _runner(flow_path, store, model, repo, recorded, options, stream) as runner:
        _drive(lambda: runner.start(question, run_id), recorded, resume, json)


@contextmanager
def _runner(
    flow_path: Path,
    store_url: str,
    model: str | None,
    repo: Path | None,
    trace: Trace,
    options: Any,
    stream: bool = True,
) -> Iterator[Any]:
    """A `FlowRunner` for a flow file, with its store, tools, models and trace, closed after."""
    from schemawire.flows.definition import load_flow
    from schemawire.host.workflow import FlowRunner
    from schemawire.schema.repository import Repository
    from schemawire.store import open_store

    with trace:
        flow = load_flow(flow_path)
        repository = Repository.load(repo if repo is not None else flow_path.parent)
        store = open_store(store_url)
        try:
            tools, models = _tools(repository), _models(flow, model, stream)
            yield FlowRunner(
                flow, repository, store, tools=tools, model=models, trace=trace, options=options
            )
        finally:
            store.close()


def _drive(go: Callable[[], Awaitable[Any]], trace: Trace, resume: str, json: bool) -> None:
    """Run ``go`` (a start or a resume) and print how the run ended (``resume``: the command
    that drives it on, should it stop).

    Raises:
        typer.Exit: 1 when the flow failed, 2 when a model, server or store could not be used.
    """
    try:
        result = anyio.run(go)
    except SchemawireError as error:
        print_stopped(trace, str(error), json=json, resume=resume)
    print_flow_result(result, trace, json)


def _resume_command(
    run_id: str, flow_path: Path, store: str, model: str | None, repo: Path | None
) -> str:
    """The ``schemawire runs resume`` command that drives run ``run_id`` on, as it was run."""
    words = ["schemawire", "runs", "resume", run_id, "--flow", str(flow_path)]
    if store != DEFAULT_STORE:
        words += ["--store", store]
    if model is not None:
        words += ["--model", model]
    if repo is not None:
        words += ["--repo", str(repo)]
    return shlex.join(words)


def _tools(repository: Any) -> dict[str, Any]:
    from schemawire.host import python_tools
    from schemawire.schema.implementations import load_implementations

    runners = python_tools(repository, load_implementations(repository))
    return {runner.spec.name: runner for runner in runners}


def _models(flow: Any, default: str | None, stream: bool = True) -> Any:
    """Each agent's model: its own (a script path read from the flow's folder), else --model.

    Every agent's model is made once here, before the run starts, so that an unknown provider
    or a missing key is said now rather than when that agent's turn comes.

    Raises:
        UsageError: an agent names no model and there is no --model, or a model cannot be made.
    """
    from schemawire.host import model_from_spec

    def model(agent: Any) -> Any:
        spec = agent.model or default
        if spec is None:
            raise UsageError(f"agent {agent.name} names no model: give --model")
        if spec.startswith("script:"):
            spec = "script:" + str(flow.path.parent / spec.removeprefix("script:"))
        return model_from_spec(spec, stream=stream)

    for agent in flow.agents.values():
        model(agent)
    return model


def print_flow_result(result: Any, trace: Trace, json: bool) -> None:
    """How a run ended: its steps, state and output (as JSON values), and its trace.

    Raises:
        typer.Exit: 1 when the run failed.
    """
    where = str(trace.path) if trace.written else None
    if json:
        print_json(
            {
                "run_id": result.run_id,
                "status": result.status,
                "steps": result.steps,
                "state": result.state,
                "output": result.output,
                "error": result.error,
                "trace": where,
            }
        )
    elif result.status == "done":
        steps = " → ".join(result.steps) or "it had ended already"
        stdout.print(f"\n[bold green]done[/] run {escape(result.run_id)}: {escape(steps)}")
        stdout.print(f"[bold]state:[/] {escape(shown(result.state))}")
        stdout.print(f"[bold]output:[/] {escape(shown(result.output))}")
    else:
        error = escape(result.error or "")
        stdout.print(f"\n[bold red]failed[/] run {escape(result.run_id)}: {error}")
    if where is not None and not json:
        stdout.print(f"[bold]trace:[/] {escape(where)}")
    if result.status != "done":
        raise typer.Exit(EXIT_FINDINGS)


# --- schemawire runs -----------------------------------------------------------------------------


@runs_app.command("list", epilog="[bold]Examples[/]\n\n  schemawire runs list --status failed")
@guarded
def list_command(
    store: Store = DEFAULT_STORE,
    status: Annotated[str | None, typer.Option("--status", help="running, done or failed.")] = None,
    json: MachineJson = False,
) -> None:
    """The newest runs first."""
    from schemawire.store import open_store

    opened = open_store(store)
    try:
        runs = opened.runs(status)  # type: ignore[arg-type]
    finally:
        opened.close()
    if json:
        print_json([run.to_json() for run in runs])
        return
    table = Table()
    # The id whole, on one line: it is what people copy into runs show and runs resume.
    table.add_column("run", no_wrap=True, min_width=max((len(r.run_id) for r in runs), default=3))
    for column in ("flow", "status", "step", "next", "updated", "error"):
        table.add_column(column)
    for run in runs:
        updated = datetime.datetime.fromtimestamp(run.updated).isoformat(timespec="seconds")
        error = escape(" ".join((run.error or "").split())[:60])
        table.add_row(
            run.run_id, run.flow, run.status, str(run.step), run.node or "", updated, error
        )
    stdout.print(table)


@runs_app.command("show", epilog="[bold]Examples[/]\n\n  schemawire runs show 3f2a9c --json")
@guarded
def show_command(
    run_id: RunId,
    store: Store = DEFAULT_STORE,
    json: MachineJson = False,
) -> None:
    """A run: its checkpoints, and the journal of its tool calls."""
    from schemawire.store import open_store

    opened = open_store(store)
    try:
        run = _find(opened, run_id, store)
        checkpoints, journal = opened.checkpoints(run.run_id), opened.journal(run.run_id)
    finally:
        opened.close()
    path = trace_path(run.run_id)
    where = str(path) if path.is_file() else None
    if json:
        calls = [
            {
                "key": e.key,
                "step": e.step,
                "tool": e.tool,
                "arguments": e.arguments,
                "status": e.status,
                "result": e.result,
            }
            for e in journal
        ]
        print_json(
            {
                "run": run.to_json(),
                "checkpoints": [c.to_json() for c in checkpoints],
                "journal": calls,
                "trace": where,
            }
        )
        return
    stdout.print(f"[bold]{escape(run.run_id)}[/] {escape(run.flow)}: {run.status}, step {run.step}")
    if run.error:
        stdout.print(f"  [red]error:[/] {escape(run.error)}")
    for checkpoint in checkpoints:
        node, state = checkpoint.node or "end", shown(checkpoint.state)
        stdout.print(f"  step {checkpoint.step} → {escape(node)}: {escape(state)}")
    for entry in journal:
        stdout.print(f"  call {escape(entry.tool)} (step {entry.step}) {entry.status}")
    if where is not None:
        stdout.print(f"[bold]trace:[/] {escape(where)}")


@runs_app.command(
    "resume",
    epilog="[bold]Examples[/]\n\n  schemawire runs resume 3f2a9c --flow flows/refund.json",
)
@guarded
def resume_command(
    run_id: RunId,
    flow: Annotated[Path, typer.Option("--flow", help="The run's flow file.")],
    store: Store = DEFAULT_STORE,
    model: Annotated[str | None, typer.Option("--model", "-m", help="The default model.")] = None,
    repo: Annotated[Path | None, typer.Option("--repo", help="The repository.")] = None,
    trace: Annotated[
        Path | None,
        typer.Option("--trace", help="The trace file (default: the run's, appended to)."),
    ] = None,
    json: MachineJson = False,
) -> None:
    """Drive a run on from its last checkpoint: completed tool calls are not repeated."""
    from schemawire.host import HostOptions
    from schemawire.store import open_store

    opened = open_store(store)
    try:
        found = _find(opened, run_id, store).run_id
    finally:
        opened.close()
    printer = None if json else HopPrinter(stdout)
    resumed = Trace(found, path=trace or trace_path(found), on_hop=printer)
    again = _resume_command(found, flow, store, model, repo)
    with _runner(flow, store, model, repo, resumed, HostOptions()) as runner:
        _drive(lambda: runner.resume(found), resumed, again, json)


def _find(opened: Any, given: str, store: str) -> Any:
    """The run ``given`` names in ``opened``.

    Raises:
        UsageError: no run, or several, have ids that start with ``given``.
    """
    from schemawire.store import find_run

    try:
        return find_run(opened, given)
    except RunLookupError as error:
        raise UsageError(f"{error} (in {store}; schemawire runs list shows its runs)") from None
