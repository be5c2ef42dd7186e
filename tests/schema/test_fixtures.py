"""`schema.fixtures`: valid fixtures pass, invalid ones fail, and for the reason they name."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire._json import dumps
from schemawire.schema.fixtures import check_fixtures
from schemawire.schema.repository import Repository
from tests.helpers import EXAMPLES, WriteRepo, tool_schema

AMOUNT = {"type": "number", "exclusiveMinimum": 0, "description": "Amount."}


def run(write_repo: WriteRepo, fixtures: dict[str, Any]) -> list[tuple[str, str, str]]:
    schema = tool_schema("refund", properties={"amount": AMOUNT}, required=["amount"])
    root = write_repo({"schemas/tools/refund.json": schema, **fixtures})
    report = check_fixtures(Repository.load(root))
    return [
        (f.rule.id, f.file.removeprefix("fixtures/tools/refund/"), f.pointer)
        for f in report.findings
    ]


def test_example_fixtures_all_behave() -> None:
    report = check_fixtures(Repository.load(EXAMPLES / "support-desk"))
    assert report.findings == ()
    assert report.checked == report.passed == 18


def test_valid_fixture_that_fails_reports_each_violation(write_repo: WriteRepo) -> None:
    findings = run(
        write_repo,
        {
            "fixtures/tools/refund/valid/bad.json": {"amount": -1, "note": "x"},
            "fixtures/tools/refund/invalid/ok.json": {},
        },
    )
    assert findings == [
        ("SW201", "valid/bad.json", "/amount"),
        ("SW201", "valid/bad.json", "/note"),
    ]


def test_invalid_fixture_that_passes_is_reported(write_repo: WriteRepo) -> None:
    findings = run(
        write_repo,
        {
            "fixtures/tools/refund/valid/ok.json": {"amount": 1},
            "fixtures/tools/refund/invalid/passes.json": {"amount": 2},
        },
    )
    assert findings == [("SW202", "invalid/passes.json", "")]


def test_invalid_fixture_must_fail_for_the_named_reason_and_no_other(write_repo: WriteRepo) -> None:
    expect = [{"pointer": "/amount", "keyword": "exclusiveMinimum"}]
    findings = run(
        write_repo,
        {
            "fixtures/tools/refund/valid/ok.json": {"amount": 1},
            "fixtures/tools/refund/invalid/right.json": {"amount": 0},
            "fixtures/tools/refund/invalid/right.expect.json": expect,
            "fixtures/tools/refund/invalid/also_extra.json": {"amount": 0, "note": "x"},
            "fixtures/tools/refund/invalid/also_extra.expect.json": expect,
            "fixtures/tools/refund/invalid/other_reason.json": {"amount": "1"},
            "fixtures/tools/refund/invalid/other_reason.expect.json": expect,
        },
    )
    assert findings == [
        ("SW203", "invalid/also_extra.json", "/note"),
        ("SW203", "invalid/other_reason.json", "/amount"),
        ("SW203", "invalid/other_reason.json", "/amount"),
    ]


def test_json_lines_fixtures_are_checked_line_by_line(write_repo: WriteRepo) -> None:
    report_root = write_repo(
        {
            "schemas/tools/refund.json": tool_schema(
                "refund", properties={"amount": AMOUNT}, required=["amount"]
            ),
            "fixtures/tools/refund/valid/samples.jsonl": (
                '{"amount": 1}\n\n{"amount": -2}\n{"amount": 3,}\n'
            ),
            "fixtures/tools/refund/invalid/samples.jsonl": '{"amount": 0}\n{}\n',
        }
    )
    report = check_fixtures(Repository.load(report_root))
    located = [(f.rule.id, f.line, f.column) for f in report.findings]
    assert located == [("SW201", 3, 2), ("SW001", 4, 13)]
    assert (report.checked, report.passed) == (4, 3)


def test_malformed_expectations_and_fixture_files_are_findings(write_repo: WriteRepo) -> None:
    findings = run(
        write_repo,
        {
            "fixtures/tools/refund/valid/broken.json": '{"amount": 1',
            "fixtures/tools/refund/invalid/x.json": {"amount": 0},
            "fixtures/tools/refund/invalid/x.expect.json": {"where": "/amount"},
        },
    )
    assert sorted(findings) == [
        ("SW001", "valid/broken.json", ""),
        ("SW206", "invalid/x.expect.json", ""),
    ]


def test_fixture_folder_without_schema_and_schema_without_fixtures(write_repo: WriteRepo) -> None:
    findings = run(write_repo, {"fixtures/tools/refnud/valid/a.json": {"amount": 1}})
    assert findings == [
        ("SW204", "fixtures/tools/refnud", ""),
        ("SW205", "schemas/tools/refund.json", ""),
    ]


def test_a_fixture_folder_named_after_a_schema_of_another_kind_says_which(
    write_repo: WriteRepo,
) -> None:
    schema = tool_schema("refund", properties={"amount": AMOUNT}, required=["amount"])
    fixture = {"fixtures/handoffs/refund/valid/a.json": {"amount": 1}}
    report = check_fixtures(
        Repository.load(write_repo({"schemas/tools/refund.json": schema, **fixture}))
    )
    finding = report.findings[0]
    assert (finding.rule.id, finding.file) == ("SW204", "fixtures/handoffs/refund")
    assert finding.hint == "did you mean fixtures/tools/refund/?"


def test_fixtures_of_an_unusable_schema_are_listed_not_dropped(write_repo: WriteRepo) -> None:
    schema = tool_schema("refund", properties={"amount": {"type": "number", "pattern": "("}})
    fixtures = {
        "fixtures/tools/refund/valid/a.json": {"amount": 1},
        "fixtures/tools/refund/invalid/lines.jsonl": '{"amount": "x"}\n{"amount": []}\n',
    }
    root = write_repo({"schemas/tools/refund.json": schema, **fixtures})
    report = check_fixtures(Repository.load(root))
    assert (report.checked, report.passed, report.findings) == (0, 0, ())
    schema_file = "schemas/tools/refund.json"
    assert [item.to_json() for item in report.not_run] == [
        {
            "file": "fixtures/tools/refund/invalid/lines.jsonl",
            "schema": schema_file,
            "instances": 2,
        },
        {"file": "fixtures/tools/refund/valid/a.json", "schema": schema_file, "instances": 1},
    ]
    assert report.not_run_instances == 3


_SEGMENTS = st.sampled_from(
    ["tools", "tool", "handoffs", "refund", "refnud", "valid", "valids", "invalid", "Valid", "x"]
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_SEGMENTS, max_size=5), min_size=1, max_size=6))
def test_every_file_under_fixtures_runs_or_is_a_finding(folders: list[list[str]]) -> None:
    schema = tool_schema("refund", properties={"amount": AMOUNT}, required=["amount"])
    paths = sorted({"/".join([*parts, "f.json"]) for parts in folders})
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "schemas/tools").mkdir(parents=True)
        (root / "schemas/tools/refund.json").write_text(dumps(schema))
        for path in paths:
            (root / "fixtures" / path).parent.mkdir(parents=True, exist_ok=True)
            (root / "fixtures" / path).write_text('{"amount": 1}')
        report = check_fixtures(Repository.load(root))
    run = [p for p in paths if re.fullmatch(r"tools/refund/(valid|invalid)/f\.json", p)]
    assert report.checked == len(run)
    flagged = [f.file.removeprefix("fixtures/") for f in report.findings]
    for path in set(paths) - set(run):
        assert any(path == f or path.startswith(f + "/") for f in flagged), path
