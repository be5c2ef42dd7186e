"""How the command line speaks: rich text for people, JSON and SARIF for machines, exit codes.

Exit codes: 0 all good, 1 findings (a check failed, an instance is invalid, files differ),
2 usage or input that cannot be read.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schemawire._json import dumps
from schemawire.check import CheckReport
from schemawire.errors import InputError, SchemawireError, UsageError
from schemawire.schema.rules import Finding, Severity
from schemawire.schema.sarif import to_sarif

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_INPUT",
    "EXIT_OK",
    "ReportFormat",
    "fail",
    "guarded",
    "print_json",
    "render_check",
    "stderr",
    "stdout",
]

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2

# soft_wrap: a finding stays on one line however narrow the terminal, for grep and editors.
stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)

_P = ParamSpec("_P")
_R = TypeVar("_R")
_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow"}


class ReportFormat(StrEnum):
    """Output formats of the reporting commands."""

    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


def guarded(command: Callable[_P, _R]) -> Callable[_P, _R]:
    """Turn input, usage, file-system and server errors into a message on stderr and exit
    code 2."""

    @functools.wraps(command)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return command(*args, **kwargs)
        except (InputError, UsageError) as error:
            fail(str(error))
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            fail(f"{where}{error.strerror or error}")
        except SchemawireError as error:  # a server that cannot be reached, for one
            fail(str(error))

    return wrapper


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    """Print ``message`` as an error on stderr and exit with ``code``."""
    stderr.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def print_json(value: Any, *, indent: bool = True) -> None:
    """Write ``value`` as JSON on stdout, without any markup."""
    sys.stdout.write(dumps(value, indent=indent) + "\n")


def render_check(
    report: CheckReport, report_format: ReportFormat, title: str, fail_on: Severity
) -> None:
    """Show ``report`` in ``report_format``: findings, then a summary for people."""
    if report_format == ReportFormat.JSON:
        print_json(_check_json(report, fail_on))
    elif report_format == ReportFormat.SARIF:
        print_json(to_sarif(report.findings))
    else:
        render_findings(report.findings)
        stdout.print(_summary(report, title))


def render_findings(findings: Iterable[Finding]) -> None:
    """Each finding as ``file:line:column: RULE severity message``, with its hint below."""
    for finding in findings:
        where = finding.file
        if finding.line is not None:
            where += f":{finding.line}:{finding.column}"
        pointer = f" [dim]#{escape(finding.pointer)}[/]" if finding.pointer else ""
        style = _STYLE[finding.severity]
        stdout.print(
            f"[bold]{escape(where)}[/]{pointer}: [{style}]{finding.rule.id}[/] "
            f"[dim]{finding.rule.name}[/] {escape(finding.message)}"
        )
        if finding.hint:
            stdout.print(f"    [cyan]hint:[/] {escape(finding.hint)}")


def _summary(report: CheckReport, title: str) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(report.schemas.items()))
    table.add_row("schemas", kinds or "none found")
    if report.fixtures_checked:
        table.add_row("fixtures", f"{report.fixtures_passed}/{report.fixtures_checked} behave")
    if report.adapters:
        table.add_row("adapters", f"{report.adapters} compared with a fresh export")
    errors, warnings = report.count(Severity.ERROR), report.count(Severity.WARNING)
    table.add_row("errors", f"[bold red]{errors}[/]" if errors else "[green]0[/]")
    table.add_row("warnings", f"[yellow]{warnings}[/]" if warnings else "0")
    return table


def _check_json(report: CheckReport, fail_on: Severity) -> dict[str, Any]:
    return {
        "ok": not report.failed(fail_on),
        "schemas": report.schemas,
        "fixtures": {"checked": report.fixtures_checked, "passed": report.fixtures_passed},
        "adapters": report.adapters,
        "errors": report.count(Severity.ERROR),
        "warnings": report.count(Severity.WARNING),
        "findings": [finding.to_json() for finding in report.findings],
    }
