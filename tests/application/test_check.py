"""`schema.check`: the CI gate over a whole repository."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from schemawire.application.check import check_repository
from schemawire.errors import UsageError
from schemawire.schema.repository import Repository
from schemawire.schema.rules import Severity
from tests.helpers import EXAMPLES, WriteRepo, tool_schema

# What the broken example shows: every finding, by rule, file and line; the schemas' own
# problems first, then the fixtures and the missing fixtures checked against them.
BROKEN_FINDINGS = [
    ("SW009", "schemas/handoffs/triage_to_billing.json", 1),
    ("SW011", "schemas/handoffs/triage_to_billing.json", 6),
    ("SW106", "schemas/handoffs/triage_to_billing.json", 7),  # SW004 there says the same
    ("SW104", "schemas/handoffs/triage_to_billing.json", 9),
    ("SW001", "schemas/state/refund_flow.json", 7),
    ("SW101", "schemas/tools/create_refund.json", 1),
    ("SW103", "schemas/tools/create_refund.json", 9),
    ("SW108", "schemas/tools/create_refund.json", 9),
    ("SW102", "schemas/tools/create_refund.json", 10),
    ("SW105", "schemas/tools/create_refund.json", 12),
    ("SW111", "schemas/tools/lookup.order.json", 1),
    ("SW113", "schemas/tools/lookup.order.json", 1),
    ("SW010", "schemas/tools/lookup.order.json", 3),
    ("SW113", "schemas/tools/lookup.order.json", 5),
    ("SW110", "schemas/tools/lookup.order.json", 7),
    ("SW202", "fixtures/tools/create_refund/invalid/injected_note.json", 1),
    ("SW201", "fixtures/tools/create_refund/valid/string_amount.json", 1),
    ("SW205", "schemas/handoffs/triage_to_billing.json", 1),
    ("SW205", "schemas/tools/lookup.order.json", 1),
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
    schema = tool_schema(
        "t", properties={"city": {"type": "string", "pattern": "(unclosed", "description": "x"}}
    )
    report = check_repository(write_repo({"schemas/tools/t.json": schema}), fixtures=False)
    assert [f.rule.id for f in report.findings] == ["SW014"]


def test_any_rule_can_be_switched_off(write_repo: WriteRepo) -> None:
    root = write_repo(
        {
            "schemawire.toml": '[lint]\nignore = ["SW205"]\n',
            "schemas/tools/t.json": tool_schema("t"),
        }
    )
    assert check_repository(root).findings == ()


def test_an_uncompilable_definition_is_blamed_where_it_is_written(write_repo: WriteRepo) -> None:
    common = {
        "$id": "https://example.com/schemas/common/c.json",
        "x-version": "1.0.0",
        "$defs": {"code": {"type": "string", "pattern": "("}},
    }
    tool = tool_schema(
        "t", properties={"code": {"$ref": "../common/c.json#/$defs/code"}}, required=[]
    )
    root = write_repo({"schemas/common/c.json": common, "schemas/tools/t.json": tool})
    report = check_repository(root, fixtures=False)
    assert [(f.rule.id, f.file, f.pointer) for f in report.findings] == [
        ("SW014", "schemas/common/c.json", "/$defs/code"),
        ("SW017", "schemas/tools/t.json", "/properties/code/$ref"),
    ]


def test_an_unresolved_reference_is_reported_once(write_repo: WriteRepo) -> None:
    tool = tool_schema("t", properties={"a": {"$ref": "#/$defs/missing"}}, required=[])
    report = check_repository(write_repo({"schemas/tools/t.json": tool}), fixtures=False)
    assert [f.rule.id for f in report.findings] == ["SW011"]


def test_file_names_that_are_not_utf8_are_reported_printably(write_repo: WriteRepo) -> None:
    root = write_repo(
        {"schemas/tools/t.json": tool_schema("t"), "fixtures/tools/t/invalid/b.json": {}}
    )
    (root / "fixtures/tools/t/valid").mkdir()
    (root / "fixtures/tools/t/valid").joinpath(os.fsdecode(b"v\xfe.json")).write_text("{}")
    (finding,) = check_repository(root).findings
    assert finding.rule.id == "SW201"
    assert finding.file == "fixtures/tools/t/valid/v\N{REPLACEMENT CHARACTER}.json"
    finding.file.encode("utf-8")


# --- no false greens ------------------------------------------------------------------------------


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """A copy of the support-desk example, to break."""
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLES / "support-desk", root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def spoil(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_fixtures_outside_valid_and_invalid_folders_are_findings_that_say_where_they_belong(
    desk: Path,
) -> None:
    fixture = (desk / "fixtures/tools/get_weather/valid/city_only.json").read_text()
    for relative in (
        "fixtures/tools/get_weather/loose.json",
        "fixtures/tools/get_weather/valids/a.json",
        "fixtures/tools/get_weather/valids/b.json",
        "fixtures/tool/get_weather/valid/a.json",
        "fixtures/tools/get_wether/valid/a.json",
        "fixtures/tools/get_weather/valid/more/a.json",
        "fixtures/tools/get_weather.json",
        "fixtures/stray.json",
    ):
        (desk / relative).parent.mkdir(parents=True, exist_ok=True)
        (desk / relative).write_text(fixture)
    report = check_repository(desk)
    assert [(f.rule.id, f.file, f.hint) for f in report.findings] == [
        ("SW207", "fixtures/stray.json", "move it to fixtures/<kind>/<name>/valid/ or invalid/"),
        ("SW207", "fixtures/tool", "did you mean fixtures/tools/?"),
        (
            "SW207",
            "fixtures/tools/get_weather.json",
            "move it to fixtures/tools/get_weather/valid/ or invalid/",
        ),
        (
            "SW207",
            "fixtures/tools/get_weather/loose.json",
            "move it to fixtures/tools/get_weather/valid/ or invalid/",
        ),
        (
            "SW207",
            "fixtures/tools/get_weather/valid/more",
            "move them up into fixtures/tools/get_weather/valid/",
        ),
        (
            "SW207",
            "fixtures/tools/get_weather/valids",
            "did you mean fixtures/tools/get_weather/valid/?",
        ),
        ("SW204", "fixtures/tools/get_wether", "did you mean fixtures/tools/get_weather/?"),
    ]
    assert "2 files in it are never run" in report.findings[5].message
    assert report.failed()


def test_fixtures_of_a_schema_that_cannot_be_read_are_counted_as_not_run(desk: Path) -> None:
    spoil(desk / "schemas/tools/get_weather.json", '"required"', '"required": [],\n  "x": ,')
    samples = desk / "fixtures/tools/get_weather/valid/samples.jsonl"
    samples.write_text('{"city": "Paris"}\n\n{"city": "Rome"}\n')
    report = check_repository(desk)
    assert (report.fixtures_checked, report.fixtures_passed) == (14, 14)
    assert report.fixtures_not_run_instances == 6  # 4 files, one of them with 2 lines
    assert {(item.file, item.schema, item.instances) for item in report.fixtures_not_run} >= {
        ("fixtures/tools/get_weather/valid/samples.jsonl", "schemas/tools/get_weather.json", 2)
    }
    assert {item.schema for item in report.fixtures_not_run} == {"schemas/tools/get_weather.json"}


def test_a_trailing_comma_is_one_finding_and_no_adapter_is_compared_against_it(desk: Path) -> None:
    path = desk / "schemas/tools/get_weather.json"
    path.write_text(path.read_text().rstrip().removesuffix("}").rstrip() + ",\n}\n")
    report = check_repository(desk)
    assert [(f.rule.id, f.file) for f in report.findings] == [
        ("SW001", "schemas/tools/get_weather.json")
    ]
    assert report.adapters == 2  # the two formats of handoffs and state
    assert report.adapters_not_compared == (
        "adapters/a2a.json",
        "adapters/anthropic.json",
        "adapters/gemini.json",
        "adapters/mcp.version-2026-07-28.json",
        "adapters/openai.chat.strict.json",
        "adapters/openai.responses.strict.json",
    )


def test_a_wrong_type_name_is_said_once(desk: Path) -> None:
    spoil(desk / "schemas/tools/get_weather.json", '"type": "string"', '"type": "int"')
    report = check_repository(desk)
    assert [(f.rule.id, f.pointer) for f in report.findings] == [("SW106", "/properties/city/type")]
    assert report.fixtures_not_run_instances == 4
    assert len(report.adapters_not_compared) == 6


def test_a_broken_shared_file_comes_first_then_one_consequence_per_dependant(desk: Path) -> None:
    spoil(desk / "schemas/common/order.json", '"A-1042"', '"A-1042",')
    report = check_repository(desk)
    assert [(f.rule.id, f.file, f.pointer) for f in report.findings] == [
        ("SW001", "schemas/common/order.json", ""),
        ("SW017", "schemas/handoffs/triage_to_billing.json", "/properties/order_id/$ref"),
        ("SW017", "schemas/state/refund_flow.json", "/properties/order_id/$ref"),
        ("SW017", "schemas/tools/create_refund.json", "/properties/order_id/$ref"),
        ("SW017", "schemas/tools/create_refund.output.json", "/properties/order_id/$ref"),
    ]
    consequence = report.findings[1]
    assert consequence.message.startswith("depends on schemas/common/order.json")
    assert report.adapters == 0
    assert report.fixtures_not_run_instances == 12


def test_a_failure_behind_two_references_is_blamed_where_it_is_written(
    write_repo: WriteRepo,
) -> None:
    common = {
        "$id": "https://example.com/schemas/common/c.json",
        "x-version": "1.0.0",
        "$defs": {"code": {"type": "string", "pattern": "("}},
    }
    middle = {
        "$id": "https://example.com/schemas/common/m.json",
        "x-version": "1.0.0",
        "$defs": {"code": {"$ref": "c.json#/$defs/code"}},
    }
    code = {"code": {"$ref": "../common/m.json#/$defs/code"}}
    tool = tool_schema("t", properties=code, required=["code"])
    files = {"schemas/common/c.json": common, "schemas/common/m.json": middle}
    root = write_repo({**files, "schemas/tools/t.json": tool})
    report = check_repository(root, fixtures=False)
    assert [(f.rule.id, f.file, f.pointer) for f in report.findings] == [
        ("SW014", "schemas/common/c.json", "/$defs/code"),
        ("SW017", "schemas/tools/t.json", "/properties/code/$ref"),
    ]
    assert "schemas/common/c.json#/$defs/code" in report.findings[1].message


def test_a_repository_without_schemas_is_refused_unless_allowed(write_repo: WriteRepo) -> None:
    root = write_repo({"fixtures/tools/t/valid/a.json": {}})
    with pytest.raises(UsageError, match="schemawire init"):
        check_repository(root)
    assert check_repository(root, allow_empty=True).schemas == {}
    (root / "schemawire.toml").write_text("[repository]\nallow-empty = true\n")
    assert check_repository(root).schemas == {}
    with pytest.raises(UsageError):
        check_repository(root, allow_empty=False)


def test_a_stale_adapter_names_the_command_that_wrote_it(desk: Path) -> None:
    from schemawire.project.export import export, write

    repository = Repository.load(desk)
    write([export(repository, "anthropic", strict=True)], desk / "adapters")
    spoil(desk / "adapters/anthropic.strict.json", "Temperature unit", "Temp unit")
    (finding,) = check_repository(desk).findings
    assert finding.rule.id == "SW015"
    assert finding.hint is not None
    assert finding.hint.startswith("run schemawire export --target anthropic --strict ")
    assert "schemawire export --refresh" in finding.hint


def test_the_mcp_adapter_names_the_mcp_version_flag(desk: Path) -> None:
    spoil(desk / "adapters/mcp.version-2026-07-28.json", '"get_weather"', '"get_weather2"')
    (finding,) = check_repository(desk).findings
    assert (finding.hint or "").startswith(
        "run schemawire export --target mcp --mcp-version 2026-07-28 "
    )
