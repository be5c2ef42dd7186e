"""``schemawire check --format github``: GitHub workflow commands, one per finding."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from schemawire.cli._app import app
from schemawire.schema._github import to_github_annotations
from schemawire.schema.rules import Finding, rule
from tests.helpers import EXAMPLES

runner = CliRunner()


def check_github(*args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["check", *args, "--format", "github"], catch_exceptions=False)
    return result.exit_code, result.stdout.splitlines()


def test_broken_refunds_gives_one_annotation_per_finding(
    monkeypatch: pytest.MonkeyPatch, snapshot: Callable[[str, Any], None]
) -> None:
    monkeypatch.chdir(EXAMPLES)
    code, lines = check_github("broken-refunds")
    assert code == 1
    snapshot("ci/check-github-broken-refunds", lines)
    *commands, summary = lines
    assert summary == "schemawire check: 13 errors, 6 warnings"
    assert all(line.startswith(("::error file=", "::warning file=")) for line in commands)
    assert len(commands) == 19


def test_annotations_count_what_the_json_report_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    report = runner.invoke(app, ["check", "broken-refunds", "--json"]).stdout
    findings = json.loads(report)["findings"]
    _, lines = check_github("broken-refunds")
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == sum(1 for f in findings if f["severity"] == "error")
    first = findings[0]
    assert lines[0].startswith(
        f"::error file={first['file']},line={first['line']},"
        f"col={first['column']},title={first['rule']} {first['name']}::"
    )


def test_a_clean_repository_prints_only_the_summary_and_exits_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(EXAMPLES)
    code, lines = check_github("support-desk")
    assert code == 0
    assert lines == ["schemawire check: 0 errors, 0 warnings"]


def test_properties_escape_percent_newlines_colon_and_comma_the_message_only_three() -> None:
    finding = Finding(
        rule("SW001"),
        "odd,dir/a:b%.json",
        "",
        "100% wrong:\r\nsee, here",
        hint="fix it",
        line=3,
        column=7,
    )
    (line,) = to_github_annotations([finding])
    assert line == (
        "::error file=odd%2Cdir/a%3Ab%25.json,line=3,col=7,title=SW001 invalid-json"
        "::100%25 wrong:%0D%0Asee, here; hint: fix it"
    )


def test_a_finding_without_a_position_has_no_line_or_col() -> None:
    (line,) = to_github_annotations([Finding(rule("SW205"), "schemas/a.json", "", "no fixtures")])
    assert line == "::warning file=schemas/a.json,title=SW205 missing-fixtures::no fixtures"
