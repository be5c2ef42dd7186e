"""How ``schemawire check`` and ``lint`` show a report: findings and a summary for people,
JSON, SARIF or GitHub workflow commands for tools."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from schemawire.cli._output import print_json, stdout
from schemawire.schema.rules import Finding, Severity

if TYPE_CHECKING:
    from schemawire.application.check import CheckReport

__all__ = ["ReportFormat", "render_check", "render_findings"]

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow"}


class ReportFormat(StrEnum):
    """Output formats of the reporting commands."""

    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"
    GITHUB = "github"


def render_check(
    report: CheckReport, report_format: ReportFormat, title: str, fail_on: Severity
) -> None:
    """Show ``report`` in ``report_format``: findings, then a summary for people."""
    if report_format == ReportFormat.JSON:
        print_json(_check_json(report, fail_on))
    elif report_format == ReportFormat.SARIF:
        from schemawire.schema.sarif import to_sarif

        print_json(to_sarif(report.findings))
    elif report_format == ReportFormat.GITHUB:
        _print_annotations(report, title)
    else:
        render_findings(report.findings)
        stdout.print(_summary(report, title))


def _print_annotations(report: CheckReport, title: str) -> None:
    """Workflow commands GitHub Actions turns into annotations, then one plain summary line for
    the job's log (a workflow command is not shown as text)."""
    from schemawire.schema._github import to_github_annotations

    for line in to_github_annotations(report.findings):
        print(line)
    errors, warnings = report.count(Severity.ERROR), report.count(Severity.WARNING)
    print(f"{title}: {errors} errors, {warnings} warnings")


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
    if report.fixtures_checked or report.fixtures_not_run:
        table.add_row("fixtures", _fixtures_summary(report))
    if report.adapters or report.adapters_not_compared:
        table.add_row("adapters", _adapters_summary(report))
    errors, warnings = report.count(Severity.ERROR), report.count(Severity.WARNING)
    table.add_row("errors", f"[bold red]{errors}[/]" if errors else "[green]0[/]")
    table.add_row("warnings", f"[yellow]{warnings}[/]" if warnings else "0")
    return table


def _fixtures_summary(report: CheckReport) -> str:
    text = f"{report.fixtures_passed}/{report.fixtures_checked} behave"
    if not report.fixtures_not_run:
        return text
    schemas = sorted({item.schema for item in report.fixtures_not_run})
    because = f"{schemas[0]} cannot be used"
    if len(schemas) > 1:
        because = f"{len(schemas)} schemas cannot be used: {', '.join(schemas)}"
    count = report.fixtures_not_run_instances
    return f"{text}, [bold red]{count} not run[/] ({escape(because)})"


def _adapters_summary(report: CheckReport) -> str:
    text = f"{report.adapters} compared with a fresh export"
    skipped = len(report.adapters_not_compared)
    if skipped:
        text += f", [bold red]{skipped} not compared[/] (made from a schema that cannot be used)"
    return text


def _check_json(report: CheckReport, fail_on: Severity) -> dict[str, Any]:
    return {
        "ok": not report.failed(fail_on),
        "schemas": report.schemas,
        "fixtures": {
            "checked": report.fixtures_checked,
            "passed": report.fixtures_passed,
            "not_run": report.fixtures_not_run_instances,
            "not_run_files": [item.to_json() for item in report.fixtures_not_run],
        },
        "adapters": report.adapters,
        "adapters_not_compared": list(report.adapters_not_compared),
        "errors": report.count(Severity.ERROR),
        "warnings": report.count(Severity.WARNING),
        "findings": [finding.to_json() for finding in report.findings],
    }
