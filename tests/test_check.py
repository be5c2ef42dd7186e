"""`schema.check`: the CI gate over a whole repository."""

from __future__ import annotations

import os

from schemawire.check import check_repository
from schemawire.schema.rules import Severity
from tests.conftest import EXAMPLES, WriteRepo, tool_schema

# What the broken example shows: every finding, by rule, file and line.
BROKEN_FINDINGS = [
    ("SW202", "fixtures/tools/create_refund/invalid/injected_note.json", 1),
    ("SW201", "fixtures/tools/create_refund/valid/string_amount.json", 1),
    ("SW009", "schemas/handoffs/triage_to_billing.json", 1),
    ("SW205", "schemas/handoffs/triage_to_billing.json", 1),
    ("SW011", "schemas/handoffs/triage_to_billing.json", 6),
    ("SW004", "schemas/handoffs/triage_to_billing.json", 7),
    ("SW106", "schemas/handoffs/triage_to_billing.json", 7),
    ("SW104", "schemas/handoffs/triage_to_billing.json", 9),
    ("SW001", "schemas/state/refund_flow.json", 7),
    ("SW101", "schemas/tools/create_refund.json", 1),
    ("SW103", "schemas/tools/create_refund.json", 9),
    ("SW108", "schemas/tools/create_refund.json", 9),
    ("SW102", "schemas/tools/create_refund.json", 10),
    ("SW105", "schemas/tools/create_refund.json", 12),
    ("SW111", "schemas/tools/lookup.order.json", 1),
    ("SW113", "schemas/tools/lookup.order.json", 1),
    ("SW205", "schemas/tools/lookup.order.json", 1),
    ("SW010", "schemas/tools/lookup.order.json", 3),
    ("SW113", "schemas/tools/lookup.order.json", 5),
    ("SW110", "schemas/tools/lookup.order.json", 7),
]


def test_example_repository_is_clean() -> None:
    report = check_repository(EXAMPLES / "support-desk")
    assert report.findings == ()
    assert report.schemas == {"tools": 4, "handoffs": 1, "state": 1, "common": 1}
    assert not report.failed(Severity.WARNING)


def test_broken_example_shows_each_mistake_at_its_line() -> None:
    report = check_repository(EXAMPLES / "broken-refunds")
    assert [(f.rule.id, f.file, f.line) for f in report.findings] == BROKEN_FINDINGS
    assert report.failed()


def test_findings_point_at_the_key_of_the_offending_member(write_repo: WriteRepo) -> None:
    schema = tool_schema("t")
    schema["properties"]["city"]["require"] = True
    root = write_repo({"schemas/tools/t.json": schema})
    finding = next(f for f in check_repository(root).findings if f.rule.id == "SW105")
    text = (root / "schemas/tools/t.json").read_text().splitlines()
    assert text[finding.line - 1][finding.column - 1 :].startswith('"require"')  # type: ignore[operator]


def test_warnings_fail_only_when_asked(write_repo: WriteRepo) -> None:
    report = check_repository(write_repo({"schemas/tools/t.json": tool_schema("t")}))
    assert [f.rule.id for f in report.findings] == ["SW205"]
    assert not report.failed()
    assert report.failed(Severity.WARNING)


def test_a_pattern_that_does_not_compile_is_reported(write_repo: WriteRepo) -> None:
    schema = tool_schema("t", properties={"city": {"type": "string", "pattern": "(unclosed",
                                                   "description": "x"}})  # fmt: skip
    report = check_repository(write_repo({"schemas/tools/t.json": schema}), fixtures=False)
    assert [f.rule.id for f in report.findings] == ["SW014"]


def test_any_rule_can_be_switched_off(write_repo: WriteRepo) -> None:
    root = write_repo({
        "schemawire.toml": '[lint]\nignore = ["SW205"]\n',
        "schemas/tools/t.json": tool_schema("t"),
    })  # fmt: skip
    assert check_repository(root).findings == ()


def test_an_uncompilable_definition_is_blamed_where_it_is_written(write_repo: WriteRepo) -> None:
    common = {"$id": "https://example.com/schemas/common/c.json", "x-version": "1.0.0",
              "$defs": {"code": {"type": "string", "pattern": "("}}}  # fmt: skip
    tool = tool_schema("t", properties={"code": {"$ref": "../common/c.json#/$defs/code"}},
                       required=[])  # fmt: skip
    root = write_repo({"schemas/common/c.json": common, "schemas/tools/t.json": tool})
    report = check_repository(root, fixtures=False)
    assert [(f.rule.id, f.file, f.pointer) for f in report.findings] == [
        ("SW014", "schemas/common/c.json", "/$defs/code")
    ]


def test_an_unresolved_reference_is_reported_once(write_repo: WriteRepo) -> None:
    tool = tool_schema("t", properties={"a": {"$ref": "#/$defs/missing"}}, required=[])
    report = check_repository(write_repo({"schemas/tools/t.json": tool}), fixtures=False)
    assert [f.rule.id for f in report.findings] == ["SW011"]


def test_file_names_that_are_not_utf8_are_reported_printably(write_repo: WriteRepo) -> None:
    root = write_repo({"schemas/tools/t.json": tool_schema("t"),
                       "fixtures/tools/t/invalid/b.json": {}})  # fmt: skip
    (root / "fixtures/tools/t/valid").mkdir()
    (root / "fixtures/tools/t/valid").joinpath(os.fsdecode(b"v\xfe.json")).write_text("{}")
    (finding,) = check_repository(root).findings
    assert finding.rule.id == "SW201"
    assert finding.file == "fixtures/tools/t/valid/v\N{REPLACEMENT CHARACTER}.json"
    finding.file.encode("utf-8")
