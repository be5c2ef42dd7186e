"""``schemawire init``, ``check`` and ``lint``: a schema repository and its CI gate."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from schemawire.check import CheckReport, check_repository
from schemawire.cli.output import (
    EXIT_FINDINGS,
    ReportFormat,
    fail,
    guarded,
    render_check,
    stderr,
    stdout,
)
from schemawire.schema.rules import Severity

__all__ = ["check", "init", "lint"]

Directory = Annotated[
    Path, typer.Argument(help="A directory in the repository (its root is found upwards).")
]
Format = Annotated[
    ReportFormat, typer.Option("--format", "-f", help="text for people; json or sarif for tools.")
]
Json = Annotated[bool, typer.Option("--json", help="Same as --format json.")]
FailOn = Annotated[
    Severity, typer.Option("--fail-on", help="Exit 1 on findings of this severity or worse.")
]


@guarded
def init(
    directory: Annotated[Path, typer.Argument(help="Where to create the repository.")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
) -> None:
    """Create a working example repository: schemas, fixtures and settings.

    It holds the tools get_weather and create_refund (each with an output schema), the handoff
    triage_to_billing, the state refund_flow and shared order definitions, with fixtures that
    pass and fail.
    """
    template = resources.files("schemawire") / "scaffold"
    with resources.as_file(template) as source:
        files = sorted(p.relative_to(source) for p in source.rglob("*")
                       if p.is_file() and "__pycache__" not in p.parts)  # fmt: skip
        clashes = [f for f in files if (directory / f).exists()]
        if clashes and not force:
            fail(f"{directory / clashes[0]} exists (and {len(clashes) - 1} more); "
                 "use --force to overwrite")  # fmt: skip
        for relative in files:
            target = directory / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / relative, target)
    stdout.print(f"created {len(files)} files in {directory}")
    stdout.print(f"next: [bold]schemawire check {directory}[/]")


@guarded
def check(
    directory: Directory = Path("."),
    report_format: Format = ReportFormat.TEXT,
    json: Json = False,
    fail_on: FailOn = Severity.ERROR,
    no_fixtures: Annotated[bool, typer.Option("--no-fixtures", help="Skip fixtures.")] = False,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="REV",
            help="Also compare every schema with git revision REV: a breaking change needs a "
            "major x-version bump.",
        ),
    ] = None,
) -> None:
    """Check every schema: JSON, metaschema, $id, x-version, $refs, lint rules and fixtures.

    With --since REV, each schema is compared with git revision REV too (see schemawire diff
    --since): a breaking change without a major x-version bump is an error (SW401), another
    change without a bump a warning (SW402).

    Exit 0 when clean, 1 on findings (errors by default), 2 when the settings cannot be read or
    REV cannot.
    """
    _run_check(directory, ReportFormat.JSON if json else report_format, fail_on,
               fixtures=not no_fixtures, title="schemawire check", since=since)  # fmt: skip


@guarded
def lint(
    directory: Directory = Path("."),
    report_format: Format = ReportFormat.TEXT,
    json: Json = False,
    fail_on: FailOn = Severity.ERROR,
) -> None:
    """Check the schemas and their lint rules, without running fixtures."""
    _run_check(directory, ReportFormat.JSON if json else report_format, fail_on,
               fixtures=False, title="schemawire lint")  # fmt: skip


def _run_check(
    directory: Path,
    report_format: ReportFormat,
    fail_on: Severity,
    *,
    fixtures: bool,
    title: str,
    since: str | None = None,
) -> None:
    if not directory.is_dir():
        fail(f"{directory} is not a directory")
    if report_format == ReportFormat.TEXT and stdout.is_terminal:
        with stdout.status("checking schemas…"):
            report = check_repository(directory, fixtures=fixtures, since=since)
    else:
        report = check_repository(directory, fixtures=fixtures, since=since)
    render_check(_seen_from_here(report), report_format, title, fail_on)
    if not report.schemas:
        stderr.print(
            f"[yellow]warning:[/] no schema files found in {escape(str(report.root))}; "
            "schemawire looks in schemas/tools, schemas/handoffs, schemas/state and "
            + escape("schemas/common unless [repository] in schemawire.toml says otherwise")
        )
    if report.failed(fail_on):
        raise typer.Exit(EXIT_FINDINGS)


def _seen_from_here(report: CheckReport) -> CheckReport:
    """``report`` with file paths relative to the current directory, as editors and code
    scanning expect them (the library keeps them relative to the repository root)."""
    here = Path.cwd()
    findings = tuple(
        replace(f, file=os.path.relpath(report.root / f.file, here)) for f in report.findings
    )
    return replace(report, findings=findings)
