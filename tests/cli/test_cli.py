"""The ``schemawire`` command: help with examples, exit codes, and output for people and tools."""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from schemawire.cli._app import COMMANDS, app
from tests.helpers import EXAMPLES, WriteRepo, tool_schema

runner = CliRunner()
SUPPORT_DESK = EXAMPLES / "support-desk"
BROKEN = EXAMPLES / "broken-refunds"


def invoke(*args: str, stdin: str | None = None) -> Any:
    return runner.invoke(app, list(args), input=stdin, catch_exceptions=False)


def command_names() -> list[str]:
    return sorted(command.name for command in COMMANDS)


@pytest.mark.parametrize("command", command_names())
def test_every_command_has_help_with_an_example(command: str) -> None:
    result = invoke(command, "--help")
    assert result.exit_code == 0
    assert "Examples" in result.output
    assert f"schemawire {command}" in result.output


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output.startswith("schemawire 0.")


@pytest.mark.slow
def test_console_script_exit_codes_reach_the_shell() -> None:
    script = Path(sys.executable).with_name("schemawire")
    codes = [
        subprocess.run([script, *args], capture_output=True, timeout=60, check=False).returncode
        for args in (["check", str(SUPPORT_DESK)], ["check", str(BROKEN)], ["check", "--nope"])
    ]
    assert codes == [0, 1, 2]


# --- init ----------------------------------------------------------------------------------------


def test_init_creates_the_example_repository(tmp_path: Path) -> None:
    result = invoke("init", str(tmp_path / "desk"))
    assert result.exit_code == 0
    comparison = filecmp.dircmp(tmp_path / "desk", SUPPORT_DESK)
    assert _tree(tmp_path / "desk") == _tree(SUPPORT_DESK)
    assert not comparison.diff_files
    assert invoke("check", str(tmp_path / "desk")).exit_code == 0


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    assert invoke("init", str(tmp_path)).exit_code == 0
    (tmp_path / "schemawire.toml").write_text("# mine\n")
    refused = invoke("init", str(tmp_path))
    assert refused.exit_code == 2
    assert "--force" in refused.stderr
    assert (tmp_path / "schemawire.toml").read_text() == "# mine\n"
    assert invoke("init", str(tmp_path), "--force").exit_code == 0


def _tree(root: Path) -> list[tuple[str, bytes]]:
    files = (p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return sorted((p.relative_to(root).as_posix(), p.read_bytes()) for p in files)


# --- check and lint ------------------------------------------------------------------------------


def test_check_prints_a_summary_and_exits_0_when_clean() -> None:
    result = invoke("check", str(SUPPORT_DESK))
    assert result.exit_code == 0
    assert "18/18 behave" in result.output


def test_check_prints_file_line_column_and_pointer_then_exits_1() -> None:
    result = invoke("check", str(BROKEN))
    assert result.exit_code == 1
    assert (
        "broken-refunds/schemas/tools/create_refund.json:12:3 #/require: SW105 unknown-keyword"
        in result.output
    )


def test_check_json_output() -> None:
    result = invoke("check", str(BROKEN), "--json")
    report = json.loads(result.output)
    assert result.exit_code == 1
    assert report["ok"] is False
    assert (report["errors"], report["warnings"]) == (13, 6)
    first = report["findings"][0]
    assert set(first) >= {"rule", "name", "severity", "file", "pointer", "line", "column"}


def test_check_sarif_output() -> None:
    result = invoke("check", str(BROKEN), "--format", "sarif")
    log = json.loads(result.output)
    assert log["version"] == "2.1.0"
    assert len(log["runs"][0]["results"]) == 19


def test_check_fail_on_warning() -> None:
    assert invoke("check", str(SUPPORT_DESK), "--fail-on", "warning").exit_code == 0


def test_lint_skips_fixtures() -> None:
    result = invoke("lint", str(BROKEN), "--json")
    rules = {finding["rule"] for finding in json.loads(result.output)["findings"]}
    assert "SW205" not in rules
    assert "SW105" in rules


def test_check_reports_unusable_settings_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "schemawire.toml").write_text("[repository]\ntool = 'x'\n")
    result = invoke("check", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {tmp_path / 'schemawire.toml'}#/repository/tool: ")
    assert result.stderr.rstrip().endswith('unexpected property "tool" (did you mean "tools"?)')


def test_check_of_a_missing_directory_exits_2(tmp_path: Path) -> None:
    assert invoke("check", str(tmp_path / "nope")).exit_code == 2


# --- fmt -----------------------------------------------------------------------------------------


def test_fmt_rewrites_in_place_keeping_order_and_text(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"z":1,"城市":"上海","n":[1,2]}', encoding="utf-8")
    assert invoke("fmt", "--check", str(path)).exit_code == 1
    assert invoke("fmt", str(path)).exit_code == 0
    assert path.read_text(encoding="utf-8") == (
        '{\n  "z": 1,\n  "城市": "上海",\n  "n": [\n    1,\n    2\n  ]\n}\n'
    )
    assert invoke("fmt", "--check", str(path)).exit_code == 0


def test_fmt_reads_stdin_and_formats_json_lines(tmp_path: Path) -> None:
    assert invoke("fmt", "-", stdin='{"a" : 1}').output == '{\n  "a": 1\n}\n'
    lines = tmp_path / "calls.jsonl"
    lines.write_text('{ "a": 1 }\n\n[1, 2]\n')
    assert invoke("fmt", "--stdout", str(lines)).output == '{"a":1}\n[1,2]\n'


def test_fmt_reports_bad_json_with_its_position_and_formats_the_rest(tmp_path: Path) -> None:
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text('{\n  "a": 1,\n}')
    good.write_text("[1]")
    result = invoke("fmt", str(bad), str(good))
    assert result.exit_code == 2
    assert f"{bad}:2:9: trailing comma is not allowed" in result.stderr
    assert good.read_text() == "[\n  1\n]\n"


# --- diff ----------------------------------------------------------------------------------------


def test_diff_of_equal_documents_exits_0(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"a": 1, "b": [true]}')
    (tmp_path / "b.json").write_text('{"b":[true],"a":1}')
    result = invoke("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert (result.exit_code, result.output.strip()) == (0, "no differences")


def test_diff_prints_a_patch_that_turns_one_into_the_other(tmp_path: Path) -> None:
    old = {"city": "上海", "unit": "celsius", "tags": [1, 2, 3], "n": 1}
    new = {"city": "上海", "unit": "kelvin", "tags": [1, 3], "n": True, "extra": None}
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    result = invoke("diff", "--json", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert result.exit_code == 1
    assert jsonpatch.apply_patch(old, json.loads(result.output)) == new
    readable = invoke("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")).output
    assert '~ /unit: "celsius" → "kelvin"' in readable
    assert "~ /n: 1 → true" in readable
    assert "- /tags/1: 2" in readable
    assert "+ /extra: null" in readable


def test_diff_shows_a_moved_value_as_a_move(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text('{"a": {"x": [1, 2, 3]}}')
    (tmp_path / "new.json").write_text('{"b": {"x": [1, 2, 3]}}')
    result = invoke("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert result.output.strip() == "move /a → /b"


def test_diff_of_unreadable_input_exits_2(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[1]")
    (tmp_path / "b.json").write_text("[1,")
    result = invoke("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert result.exit_code == 2
    assert "b.json:1:4" in result.stderr


# --- validate ------------------------------------------------------------------------------------


def test_validate_by_file_resolves_the_repository_refs(tmp_path: Path) -> None:
    call = tmp_path / "call.json"
    call.write_text('{"order_id": "A-1042", "amount": 99.0, "reason": "late"}')
    schema = SUPPORT_DESK / "schemas/tools/create_refund.json"
    result = invoke("validate", str(schema), str(call))
    assert (result.exit_code, result.output) == (
        0,
        f"{call}: valid\n1 instance: 1 valid, 0 invalid\n",
    )


def test_validate_json_lines_by_id_with_one_json_line_per_instance(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"city": "上海"}\n{"city": "上海", "unit": "kelvin"}\n{"city": 1,}\n')
    schema_id = "https://example.com/schemas/tools/get_weather.json"
    result = invoke("validate", schema_id, str(calls), "--json", "--repo", str(SUPPORT_DESK))
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert result.exit_code == 2  # one line cannot be read
    assert lines[0] == {"source": f"{calls}:1", "valid": True, "violations": []}
    assert lines[1] == {
        "source": f"{calls}:2",
        "valid": False,
        "violations": [
            {
                "pointer": "/unit",
                "keyword": "enum",
                "message": 'must be one of "celsius", "fahrenheit"',
            }
        ],
    }
    assert lines[2]["valid"] is False
    assert lines[2]["error"]["code"] == "json_syntax"


def validate_refund(tmp_path: Path, call: str, repo: Path) -> Any:
    """``schemawire validate create_refund`` of ``call`` (written to a file) in ``repo``."""
    path = tmp_path / "call.json"
    path.write_text(call)
    return invoke("validate", "create_refund", str(path), "--repo", str(repo))


def test_validate_invalid_instance_exits_1_and_shows_violations(tmp_path: Path) -> None:
    call = '{"order_id": "1042", "amount": -5, "reason": "late", "note": "vip"}'
    result = validate_refund(tmp_path, call, SUPPORT_DESK)
    assert result.exit_code == 1
    assert "/amount exclusiveMinimum must be greater than 0" in result.output
    assert "/note additionalProperties unexpected property" in result.output


def test_validate_with_an_unknown_schema_exits_2(tmp_path: Path) -> None:
    result = invoke(
        "validate", "no_such_tool", str(tmp_path / "x.json"), "--repo", str(SUPPORT_DESK)
    )
    assert result.exit_code == 2
    assert "no such file" in result.stderr


def test_example_repository_files_are_formatted() -> None:
    files = sorted(str(p) for p in SUPPORT_DESK.rglob("*.json"))
    assert invoke("fmt", "--check", *files).exit_code == 0


def test_check_of_a_repository_without_schemas_exits_2_and_says_how_to_start(
    tmp_path: Path,
) -> None:
    for command in ("check", "lint"):
        result = invoke(command, str(tmp_path))
        assert result.exit_code == 2
        assert "schemas/tools/" in result.stderr
        assert "schemawire init" in result.stderr
        assert "--allow-empty" in result.stderr


def test_check_passes_an_empty_repository_when_asked(tmp_path: Path) -> None:
    assert invoke("check", str(tmp_path), "--allow-empty").exit_code == 0
    assert invoke("lint", str(tmp_path), "--allow-empty").exit_code == 0
    (tmp_path / "schemawire.toml").write_text("[repository]\nallow-empty = true\n")
    assert invoke("check", str(tmp_path)).exit_code == 0


def test_init_onto_a_file_exits_2_with_a_message(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    target.write_text("{}")
    result = invoke("init", str(target))
    assert result.exit_code == 2
    assert "error:" in result.stderr


def test_json_ok_follows_fail_on(write_repo: WriteRepo) -> None:
    root = write_repo({"schemas/tools/t.json": tool_schema("t")})  # one warning: no fixtures
    strict = invoke("check", str(root), "--json", "--fail-on", "warning")
    assert (strict.exit_code, json.loads(strict.output)["ok"]) == (1, False)
    lenient = invoke("check", str(root), "--json")
    assert (lenient.exit_code, json.loads(lenient.output)["ok"]) == (0, True)


def test_validate_reads_stdin() -> None:
    result = invoke(
        "validate",
        "get_weather",
        "-",
        "--repo",
        str(SUPPORT_DESK),
        "--json",
        stdin='{"city": "上海", "unit": "kelvin"}',
    )
    assert result.exit_code == 1
    assert json.loads(result.output)["source"] == "<stdin>"


def test_validate_warns_about_a_file_without_instances(tmp_path: Path) -> None:
    empty = tmp_path / "none.jsonl"
    empty.write_text("\n\n")
    result = invoke("validate", "get_weather", str(empty), "--repo", str(SUPPORT_DESK))
    assert result.exit_code == 0
    assert "holds no instance" in result.stderr


def test_validate_refuses_a_missing_repository_and_odd_references(tmp_path: Path) -> None:
    assert invoke("validate", "t", "x.json", "--repo", str(tmp_path / "nope")).exit_code == 2
    odd = invoke("validate", "http://[::1#x", str(tmp_path / "x.json"), "--repo", str(SUPPORT_DESK))
    assert odd.exit_code == 2


def test_diff_refuses_stdin_twice() -> None:
    assert invoke("diff", "-", "-", stdin="[]").exit_code == 2


def test_validate_prints_every_instance_in_order_then_a_summary(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    kelvin, paris = '{"city": "Paris", "unit": "kelvin"}', '{"city": "Paris"}'
    rows = [kelvin if n % 1000 == 7 else paris for n in range(5000)]
    calls.write_text("\n".join(rows) + "\n")
    result = invoke("validate", "get_weather", str(calls), "--repo", str(SUPPORT_DESK))
    assert result.exit_code == 1
    expected: list[str] = []
    for number, row in enumerate(rows, start=1):
        if "kelvin" in row:
            enum = '  /unit enum must be one of "celsius", "fahrenheit"'
            expected += [f"{calls}:{number}: invalid", enum]
        else:
            expected.append(f"{calls}:{number}: valid")
    expected.append("5000 instances: 4995 valid, 5 invalid")
    assert result.output.splitlines() == expected


def test_validate_quiet_prints_only_the_failures_and_the_summary(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"city": "Paris"}\n{"city": 1}\n{"city": "Rome",}\n')
    result = invoke("validate", "get_weather", str(calls), "--repo", str(SUPPORT_DESK), "-q")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert lines[0] == f"{calls}:2: invalid"
    assert lines[2].startswith(f"{calls}:3: unreadable {calls}:3:")
    assert lines[-1] == "3 instances: 1 valid, 1 invalid, 1 unreadable"
    assert not any(line.endswith(": valid") for line in lines)


def test_validate_max_bytes_lifts_the_size_cap_for_one_run(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text('{"city": "' + "x" * (17 * 1024 * 1024) + '"}')
    refused = invoke("validate", "get_weather", str(big), "--repo", str(SUPPORT_DESK), "--json")
    assert json.loads(refused.output)["error"]["code"] == "json_too_large"
    limit = str(18 * 1024 * 1024)
    accepted = invoke(
        "validate", "get_weather", str(big), "--repo", str(SUPPORT_DESK), "--max-bytes", limit
    )
    assert accepted.exit_code == 0
    assert invoke("validate", "get_weather", str(big), "--max-bytes", "0").exit_code == 2


def test_validate_names_the_shared_file_that_is_broken(tmp_path: Path) -> None:
    desk = tmp_path / "desk"
    shutil.copytree(SUPPORT_DESK, desk)
    common = desk / "schemas/common/order.json"
    common.write_text(common.read_text().replace('"A-1042"', '"A-1042",'))
    result = validate_refund(
        tmp_path, '{"order_id": "A-1042", "amount": 1, "reason": "late"}', desk
    )
    assert result.exit_code == 2
    assert "error: schemas/common/order.json:12:17: " in result.stderr
    assert "trailing comma" in result.stderr


def test_check_reports_fixtures_not_run_and_adapters_not_compared(tmp_path: Path) -> None:
    desk = tmp_path / "desk"
    shutil.copytree(SUPPORT_DESK, desk)
    schema = desk / "schemas/tools/get_weather.json"
    schema.write_text(schema.read_text().replace('"type": "string"', '"type": "int"', 1))
    text = invoke("check", str(desk))
    assert text.exit_code == 1
    assert "14/14 behave, 4 not run (schemas/tools/get_weather.json cannot be" in text.output
    assert "6 not compared" in text.output
    report = json.loads(invoke("check", str(desk), "--json").output)
    assert report["fixtures"]["not_run"] == 4
    assert {item["schema"] for item in report["fixtures"]["not_run_files"]} == {
        "schemas/tools/get_weather.json"
    }
    assert report["adapters"] == 2
    assert len(report["adapters_not_compared"]) == 6
    assert [f["rule"] for f in report["findings"]] == ["SW106"]


def test_validate_styles_its_lines_as_rich_would_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = Console(force_terminal=True, color_system="standard", highlight=False)
    monkeypatch.setattr("schemawire.cli._toolbox.stdout", terminal)
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"city": "Paris"}\n{"city": 1}\n')
    result = invoke("validate", "get_weather", str(calls), "--repo", str(SUPPORT_DESK))
    lines = result.output.splitlines()
    assert lines[0] == f"\x1b[1m{calls}:1\x1b[0m: \x1b[32mvalid\x1b[0m"
    assert lines[1] == f"\x1b[1m{calls}:2\x1b[0m: \x1b[1;31minvalid\x1b[0m"
    assert lines[2] == "  /city \x1b[2mtype\x1b[0m must be of type string"


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("check", "[serve.tools]"),
        ("run", "[serve.tools]"),
        ("serve", "[serve] timeout"),
        ("export", "[export] adapters"),
        ("check", "[repository]"),
    ],
)
def test_settings_named_in_help_are_shown_not_taken_for_markup(command: str, name: str) -> None:
    shown = " ".join(invoke(command, "--help").output.split())
    assert name in shown


def test_every_commands_help_paragraphs_are_one_line_each_for_rich_to_wrap() -> None:
    from schemawire.cli._app import COMMANDS, _LazyGroup, app

    group = typer.main.get_group(app)
    assert isinstance(group, _LazyGroup)
    for command in COMMANDS:
        built = group.get_command(None, command.name)
        if isinstance(built, typer.core.TyperGroup):
            continue  # `runs`: its commands' own help is one line
        assert built.help, command.name
        assert all("\n" not in part for part in built.help.split("\n\n")), command.name
