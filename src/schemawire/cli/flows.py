"""``schemawire run --flow`` and ``schemawire runs``: workflows that checkpoint and resume."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.markup import escape
from rich.table import Table

from schemawire.cli.hops import HopPrinter
from schemawire.cli.output import EXIT_FINDINGS, guarded, print_json, stdout
from schemawire.errors import UsageError
from schemawire.store import DEFAULT_STORE

__all__ = ["run_flow", "runs_app"]

Store = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="SCHEMAWIRE_STORE",
        help="Where runs are kept: sqlite:PATH or postgresql://...",
    ),
]

runs_app = typer.Typer(
    name="runs",
    help="The runs of your flows: list them, show one, resume one after a crash.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    epilog="[bold]Examples[/]\n\n  schemawire runs list\n\n  schemawire runs show 3f2a9c\n\n"
    "  schemawire runs resume 3f2a9c --flow flows/refund.json",
)


def run_flow(flow_path: Path, question: str, *, store: str, model: str | None, repo: Path | None,
             trace: Path | None, quiet: bool, max_turns: int) -> Any:  # fmt: skip
    """Start a run of a flow; its result."""
    from schemawire.host import HostOptions

    options = HostOptions(max_turns=max_turns)
    return anyio.run(_start, flow_path, question, store, model, repo, trace, quiet, options)


async def _start(flow_path: Path, question: str, store_url: str, model: str | None,
                 repo: Path | None, trace_path: Path | None, quiet: bool,
                 options: Any) -> Any:  # fmt: skip
    with _runner(flow_path, store_url, model, repo, trace_path, quiet, options) as runner:
        return await runner.start(question)


@contextmanager
def _runner(flow_path: Path, store_url: str, model: str | None, repo: Path | None,
            trace_path: Path | None, quiet: bool, options: Any) -> Iterator[Any]:  # fmt: skip
    """A `FlowRunner` for a flow file, with its store, tools, models and trace, closed after."""
    from schemawire.host.flow import load_flow
    from schemawire.host.workflow import FlowRunner
    from schemawire.schema.repository import Repository
    from schemawire.store import open_store
    from schemawire.trace import Trace

    flow = load_flow(flow_path)
    repository = Repository.load(repo if repo is not None else flow_path.parent)
    store = open_store(store_url)
    path = trace_path or Path(".schemawire") / "traces" / f"{flow.name}.jsonl"
    trace = Trace(path=path, on_hop=None if quiet else HopPrinter(stdout))
    try:
        yield FlowRunner(flow, repository, store, tools=_tools(repository),
                         model=_models(flow, model), trace=trace, options=options)  # fmt: skip
    finally:
        trace.close()
        store.close()


def _tools(repository: Any) -> dict[str, Any]:
    from schemawire.host import python_tools
    from schemawire.mcp.serve import load_implementations

    runners = python_tools(repository, load_implementations(repository))
    return {runner.spec.name: runner for runner in runners}


def _models(flow: Any, default: str | None) -> Any:
    """Each agent's model: its own (a script path read from the flow's folder), else --model."""
    from schemawire.host import model_from_spec

    def model(agent: Any) -> Any:
        spec = agent.model or default
        if spec is None:
            raise UsageError(f"agent {agent.name} names no model: give --model")
        if spec.startswith("script:"):
            spec = "script:" + str(flow.path.parent / spec.removeprefix("script:"))
        return model_from_spec(spec)

    return model


def print_flow_result(result: Any, json: bool) -> None:
    if json:
        print_json({"run_id": result.run_id, "status": result.status, "steps": result.steps,
                    "state": result.state, "output": result.output,
                    "error": result.error})  # fmt: skip
    elif result.status == "done":
        stdout.print(f"\n[bold green]done[/] run {escape(result.run_id)}: "
                     f"{escape(' → '.join(result.steps))}")  # fmt: skip
        stdout.print(f"[bold]state:[/] {escape(str(result.state))}")
        stdout.print(f"[bold]output:[/] {escape(str(result.output))}")
    else:
        stdout.print(
            f"\n[bold red]failed[/] run {escape(result.run_id)}: {escape(result.error or '')}"
        )
    if result.status != "done":
        raise typer.Exit(EXIT_FINDINGS)


# --- schemawire runs -----------------------------------------------------------------------------


@runs_app.command("list", epilog="[bold]Examples[/]\n\n  schemawire runs list --status failed")
@guarded
def list_command(
    store: Store = DEFAULT_STORE,
    status: Annotated[str | None, typer.Option("--status", help="running, done or failed.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
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
    for column in ("run", "flow", "status", "step", "next", "updated", "error"):
        table.add_column(column)
    for run in runs:
        updated = datetime.datetime.fromtimestamp(run.updated).isoformat(timespec="seconds")
        table.add_row(run.run_id, run.flow, run.status, str(run.step), run.node or "",
                      updated, escape((run.error or "")[:60]))  # fmt: skip
    stdout.print(table)


@runs_app.command("show", epilog="[bold]Examples[/]\n\n  schemawire runs show 3f2a9c --json")
@guarded
def show_command(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    store: Store = DEFAULT_STORE,
    json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """A run: its checkpoints, and the journal of its tool calls."""
    from schemawire.store import open_store

    opened = open_store(store)
    try:
        run = opened.run(run_id)
        if run is None:
            raise UsageError(f"no run {run_id} in {store}")
        checkpoints, journal = opened.checkpoints(run_id), opened.journal(run_id)
    finally:
        opened.close()
    if json:
        print_json({"run": run.to_json(), "checkpoints": [c.to_json() for c in checkpoints],
                    "journal": [{"key": e.key, "step": e.step, "tool": e.tool,
                                 "arguments": e.arguments, "status": e.status,
                                 "result": e.result} for e in journal]})  # fmt: skip
        return
    stdout.print(f"[bold]{escape(run.run_id)}[/] {escape(run.flow)}: {run.status}, step {run.step}")
    for checkpoint in checkpoints:
        stdout.print(f"  step {checkpoint.step} → {escape(str(checkpoint.node))}: "
                     f"{escape(str(checkpoint.state))}")  # fmt: skip
    for entry in journal:
        stdout.print(f"  call {escape(entry.tool)} (step {entry.step}) {entry.status}")


@runs_app.command("resume", epilog="[bold]Examples[/]\n\n  schemawire runs resume 3f2a9c "
                  "--flow flows/refund.json")  # fmt: skip
@guarded
def resume_command(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    flow: Annotated[Path, typer.Option("--flow", help="The run's flow file.")],
    store: Store = DEFAULT_STORE,
    model: Annotated[str | None, typer.Option("--model", "-m", help="The default model.")] = None,
    repo: Annotated[Path | None, typer.Option("--repo", help="The repository.")] = None,
    trace: Annotated[Path | None, typer.Option("--trace", help="The trace file.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Drive a run on from its last checkpoint: completed tool calls are not repeated."""
    from schemawire.host import HostOptions

    result = anyio.run(_resume, run_id, flow, store, model, repo, trace, json,
                       HostOptions())  # fmt: skip
    print_flow_result(result, json)


async def _resume(run_id: str, flow_path: Path, store_url: str, model: str | None,
                  repo: Path | None, trace_path: Path | None, quiet: bool,
                  options: Any) -> Any:  # fmt: skip
    with _runner(flow_path, store_url, model, repo, trace_path, quiet, options) as runner:
        return await runner.resume(run_id)
