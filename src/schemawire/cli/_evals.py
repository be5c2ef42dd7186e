"""``schemawire eval``: run eval cases, or write one from a recorded run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from schemawire._json import dumps
from schemawire.cli._output import EXIT_FINDINGS, EXIT_INPUT, guarded, print_json, stderr, stdout
from schemawire.errors import UsageError

__all__ = ["eval_command"]

_STYLE = {"passed": "green", "failed": "bold red", "error": "bold red"}
_TRACE_ONLY = ("--out", "--flow", "--repo", "--name")


CasePaths = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Case files or folders (default: evals/*.json of this repository).",
        show_default=False,
    ),
]
JUnit = Annotated[
    Path | None, typer.Option("--junit", help="Also write the results as JUnit XML here.")
]
Json = Annotated[bool, typer.Option("--json", help="Print the results as JSON.")]
FromTrace = Annotated[
    Path | None,
    typer.Option("--from-trace", help="Write a case that replays this recorded run."),
]
Out = Annotated[
    Path | None, typer.Option("--out", help="With --from-trace: the case file to write.")
]
FlowFile = Annotated[
    Path | None, typer.Option("--flow", help="With --from-trace: the run's flow file.")
]
Repo = Annotated[Path | None, typer.Option("--repo", help="With --from-trace: the repository.")]
Name = Annotated[str | None, typer.Option("--name", help="With --from-trace: the case's name.")]


@guarded
def eval_command(
    paths: CasePaths = None,
    junit: JUnit = None,
    json: Json = False,
    from_trace: FromTrace = None,
    out: Out = None,
    flow: FlowFile = None,
    repo: Repo = None,
    name: Name = None,
) -> None:
    """Run eval cases: a flow or an agent run, the tool calls, route, output and state expected.

    Exit 0 when every case passes, 1 when one fails, 2 when a case cannot be run. With
    --from-trace, write a case from a recorded run instead (to stdout, or to --out).
    """
    if from_trace is not None:
        _refuse_run_options(paths, json=json, junit=junit)
        _write_case(from_trace, out=out, flow=flow, repo=repo, name=name)
        return
    given = [o for o, v in zip(_TRACE_ONLY, (out, flow, repo, name), strict=True) if v]
    if given:
        raise UsageError(f"{', '.join(given)}: only with --from-trace")
    _run_cases(paths or [], junit=junit, json=json)


def _refuse_run_options(paths: list[Path] | None, *, json: bool, junit: Path | None) -> None:
    """With ``--from-trace`` no case runs: the options of a run are usage errors.

    Raises:
        UsageError: case paths, ``--json`` or ``--junit`` were given.
    """
    if paths:
        raise UsageError("--from-trace writes a case; give no case paths with it")
    runs_only = [o for o, v in (("--json", json), ("--junit", junit)) if v]
    if runs_only:
        raise UsageError(
            f"{', '.join(runs_only)}: not with --from-trace, which writes a case and runs none"
        )


def _run_cases(paths: list[Path], *, junit: Path | None, json: bool) -> None:
    """Run the cases found in ``paths``, show the results; exit 2 on an error, 1 on a failure."""
    from schemawire.evals import find_cases, junit_xml, run_cases

    results = run_cases(find_cases(paths))
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(junit_xml(results), encoding="utf-8")
    if json:
        print_json(_results_json(results))
    else:
        _print_table(results)
    statuses = {result.status for result in results}
    if "error" in statuses:
        raise typer.Exit(EXIT_INPUT)
    if "failed" in statuses:
        raise typer.Exit(EXIT_FINDINGS)


def _write_case(
    trace: Path, *, out: Path | None, flow: Path | None, repo: Path | None, name: str | None
) -> None:
    from schemawire.evals import case_from_trace, check_case

    if out is not None and out.exists():
        raise UsageError(f"{out} exists: remove it, or give another --out")
    recorded = case_from_trace(trace, flow=flow, repo=repo, out=out, name=name)
    for note in recorded.notes:
        stderr.print(f"[yellow]note:[/] {escape(note)}")
    check_case(recorded.document, recorded.path)  # only a case that can be run is written
    if out is None:
        print_json(recorded.document)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dumps(recorded.document) + "\n", encoding="utf-8")
    stdout.print(
        f"wrote {escape(str(out))}: run it with [bold]schemawire eval {escape(str(out))}[/]"
    )


def _results_json(results: list[Any]) -> dict[str, Any]:
    passed, failed, errors = (
        sum(r.status == status for r in results) for status in ("passed", "failed", "error")
    )
    return {
        "ok": passed == len(results),
        "passed": passed,
        "failed": failed,
        "errors": errors,
        "cases": [result.to_json() for result in results],
    }


def _print_table(results: list[Any]) -> None:
    """A row per case (the first failure in it), then every failure where it is written, one
    per line, as editors and grep read them."""
    table = Table(title="schemawire eval", title_justify="left")
    table.add_column("case", overflow="fold")
    table.add_column("status")
    table.add_column("time", justify="right")
    table.add_column("failures", overflow="fold")
    for result in results:
        style = _STYLE[result.status]
        table.add_row(
            f"{escape(result.name)}\n[dim]{escape(_shown(result.path))}[/]",
            f"[{style}]{result.status}[/]",
            f"{result.seconds:.2f} s",
            _first_failure(result),
        )
    stdout.print(table)
    for result in results:
        for failure in result.failures:
            where = f"{_shown(result.path)}:{failure.line}:{failure.column}"
            stdout.print(
                f"[bold]{escape(where)}[/] [dim]#{escape(failure.pointer or '/')}[/]: "
                f"{escape(failure.message)}"
            )
        if result.error is not None:
            stdout.print(f"[bold red]cannot run:[/] {escape(result.error)}")
    counts = _results_json(results)
    total = sum(r.seconds for r in results)
    stdout.print(
        f"{counts['passed']} passed, {counts['failed']} failed, {counts['errors']} "
        f"could not run, in {total:.2f} s"
    )


def _first_failure(result: Any) -> str:
    if result.status == "error":
        return escape(result.summary)
    if not result.failures:
        return ""
    first, more = result.failures[0], len(result.failures) - 1
    line = f"[cyan]{escape(first.pointer or '/')}[/] {escape(first.message)}"
    return line + (f" [dim](and {more} more)[/]" if more else "")


def _shown(path: Path) -> str:
    """``path`` relative to the current folder, when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
