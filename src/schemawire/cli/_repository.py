"""``schemawire init``, ``check`` and ``lint``: a schema repository and its CI gate."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from schemawire.cli._findings import ReportFormat, render_check
from schemawire.cli._output import EXIT_FINDINGS, fail, guarded, stdout
from schemawire.schema.rules import Severity

if TYPE_CHECKING:  # `init` never checks: it does not import the checker
    from schemawire.application.check import CheckReport

__all__ = ["check", "init", "lint"]

Directory = Annotated[
    Path, typer.Argument(help="A directory in the repository (its root is found upwards).")
]
Format = Annotated[
    ReportFormat,
    typer.Option(
        "--format",
        "-f",
        help="text for people; json, sarif or github (workflow annotations) for tools.",
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Same as --format json.")]
FailOn = Annotated[
    Severity, typer.Option("--fail-on", help="Exit 1 on findings of this severity or worse.")
]
AllowEmpty = Annotated[
    bool,
    typer.Option(
        "--allow-empty",
        help="Pass when there is no schema file at all (else exit 2; or set allow-empty = true "
        "under \\[repository]).",
    ),
]


@guarded
def init(
    directory: Annotated[Path, typer.Argument(help="Where to create the repository.")] = Path("."),
    blank: Annotated[
        bool,
        typer.Option(
            "--blank", help="No example tools: the folders, settings, a one-agent flow and an eval."
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
) -> None:
    """Create a schema repository: a working example, or a blank one to fill in.

    The example holds the tools get_weather and create_refund (each with an output schema), the
    handoff triage_to_billing, the state refund_flow and shared order definitions, with fixtures
    that pass and fail. --blank holds no schema: the folders they go in, schemawire.toml, an
    implementations module, a one-agent flow and an eval case that runs it offline.
    """
    template = resources.files("schemawire") / ("blank" if blank else "scaffold")
    with resources.as_file(template) as source:
        written = _write_template(source, directory, blank=blank, force=force)
    stdout.print(f"created {written} files in {escape(str(directory))}")
    stdout.print(_next_step(directory, blank))


# The folders a blank repository starts with, empty: where each kind of file goes.
_BLANK_FOLDERS = ("schemas/tools", "schemas/handoffs", "schemas/state", "schemas/common")


def _write_template(source: Path, directory: Path, *, blank: bool, force: bool) -> int:
    """Copy the template into ``directory``; how many files were written.

    Raises:
        typer.Exit: a file exists and ``force`` is not set (exit 2, with a message).
    """
    files = _template_files(source, blank)
    clashes = [f for f in files if (directory / f).exists()]
    if clashes and not force:
        more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
        fail(f"{directory / clashes[0]} exists{more}; use --force to overwrite")
    for relative in files:
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if (source / relative).is_file():
            shutil.copyfile(source / relative, target)
        else:
            target.touch()  # a .gitkeep, so that git keeps the empty folder
    return len(files)


def _template_files(source: Path, blank: bool) -> list[Path]:
    """The files to write, relative to the repository root: the template's, and for a blank
    repository a ``.gitkeep`` in each empty folder."""
    files = [
        path.relative_to(source)
        for path in source.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    ]
    if blank:
        files += [Path(folder) / ".gitkeep" for folder in _BLANK_FOLDERS]
    return sorted(files)


def _next_step(directory: Path, blank: bool) -> str:
    check = f"[bold]schemawire check {escape(str(directory))}[/]"
    if not blank:
        return f"next: {check}"
    first = escape(str(directory / "schemas" / "tools" / "NAME.json"))
    return (
        f"next: write your first tool's input schema as {first} (a JSON Schema with an $id and "
        f"an x-version; `schemawire init example` writes a full example to copy from), then {check}"
    )


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
    allow_empty: AllowEmpty = False,
) -> None:
    """Check every schema: JSON, metaschema, $id, x-version, $refs, lint rules and fixtures;
    the committed adapters, flows, and the \\[serve.tools] implementations.

    With --since REV, each schema is compared with git revision REV too (see schemawire diff
    --since): a breaking change without a major x-version bump is an error (SW401), another
    change without a bump a warning (SW402).

    Exit 0 when clean, 1 on findings (errors by default), 2 when the settings cannot be read,
    REV cannot, or there is no schema file (unless --allow-empty).
    """
    options = _CheckOptions(not no_fixtures, since, allow_empty)
    report_format = ReportFormat.JSON if json else report_format
    _run_check(directory, report_format, fail_on, options, title="schemawire check")


# The options check takes too, declared again: typer reads each command's own signature.
@guarded
def lint(
    directory: Directory = Path("."),
    report_format: Format = ReportFormat.TEXT,
    json: Json = False,
    fail_on: FailOn = Severity.ERROR,
    allow_empty: AllowEmpty = False,
) -> None:
    """Check the schemas and their lint rules, without running fixtures."""
    report_format = ReportFormat.JSON if json else report_format
    options = _CheckOptions(fixtures=False, allow_empty=allow_empty)
    _run_check(directory, report_format, fail_on, options, title="schemawire lint")


@dataclass(frozen=True, slots=True)
class _CheckOptions:
    fixtures: bool = True
    since: str | None = None
    allow_empty: bool = False


def _run_check(
    directory: Path,
    report_format: ReportFormat,
    fail_on: Severity,
    options: _CheckOptions,
    *,
    title: str,
) -> None:
    if not directory.is_dir():
        fail(f"{directory} is not a directory")
    if report_format == ReportFormat.TEXT and stdout.is_terminal:
        with stdout.status("checking schemas…"):
            report = _checked(directory, options)
    else:
        report = _checked(directory, options)
    render_check(_seen_from_here(report), report_format, title, fail_on)
    if report.failed(fail_on):
        raise typer.Exit(EXIT_FINDINGS)


def _checked(directory: Path, options: _CheckOptions) -> CheckReport:
    from schemawire.application.check import check_repository

    return check_repository(
        directory,
        fixtures=options.fixtures,
        since=options.since,
        allow_empty=options.allow_empty or None,  # else the repository's setting decides
    )


def _seen_from_here(report: CheckReport) -> CheckReport:
    """``report`` with file paths relative to the current directory, as editors and code
    scanning expect them (the library keeps them relative to the repository root)."""
    here = Path.cwd()
    findings = tuple(
        replace(f, file=os.path.relpath(report.root / f.file, here)) for f in report.findings
    )
    return replace(report, findings=findings)
