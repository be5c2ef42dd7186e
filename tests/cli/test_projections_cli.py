"""``schemawire export`` and ``import``: adapters written, checked for drift, tools imported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from schemawire.cli._app import app
from tests.helpers import EXAMPLES

runner = CliRunner()
MCP_TOOLS = Path(__file__).parents[1] / "data" / "mcp-tools"


def invoke(*args: str, stdin: str | None = None) -> Any:
    return runner.invoke(app, list(args), input=stdin, catch_exceptions=False)


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLES / "support-desk", root)
    shutil.rmtree(root / "adapters", ignore_errors=True)
    return root


def test_export_writes_one_marked_adapter_per_target(desk: Path) -> None:
    result = invoke("export", str(desk))
    assert result.exit_code == 0
    files = sorted(p.name for p in (desk / "adapters").glob("*.json"))
    assert files == [
        "a2a.json",
        "anthropic.json",
        "gemini.json",
        "mcp.version-2026-07-28.json",
        "openai.chat.strict.json",
        "openai.response_format.json",
        "openai.responses.strict.json",
        "openai.text_format.json",
    ]
    chat = json.loads((desk / "adapters/openai.chat.strict.json").read_text())
    assert chat["generated"].startswith("schemawire export --target openai.chat --strict")
    assert [tool["function"]["name"] for tool in chat["tools"]] == ["create_refund", "get_weather"]


def test_check_fails_when_an_adapter_is_edited_by_hand(desk: Path) -> None:
    invoke("export", str(desk))
    assert invoke("export", str(desk), "--check").exit_code == 0
    adapter = desk / "adapters/gemini.json"
    adapter.write_text(adapter.read_text().replace("Temperature unit", "Temp unit"))
    drift = invoke("export", str(desk), "--check")
    assert drift.exit_code == 1
    assert "adapters/gemini.json" in drift.output
    check = invoke("check", str(desk), "--json")
    assert [f["rule"] for f in json.loads(check.output)["findings"]] == ["SW015"]


def test_check_with_no_adapter_to_compare_is_never_green(desk: Path) -> None:
    result = invoke("export", str(desk), "--check")
    assert result.exit_code == 1
    assert "no adapter in adapters/ to compare" in result.output
    assert "run schemawire export" in result.output
    assert "current" not in result.output


def test_check_says_a_schema_that_cannot_be_read_blocks_the_comparison(desk: Path) -> None:
    invoke("export", str(desk))
    (desk / "schemas/tools/create_refund.json").write_text('{"type": "object",')
    result = invoke("export", str(desk), "--check")
    assert result.exit_code == 1
    assert "adapters not compared: schemas/tools/create_refund.json cannot be used" in result.output
    assert "remove" not in result.output  # no made-up drift: every tool after it would "change"
    listed = json.loads(invoke("export", str(desk), "--check", "--json").stdout)
    assert {entry["not_compared"] for entry in listed} == {
        "schemas/tools/create_refund.json cannot be used"
    }


def test_one_target_with_options(desk: Path) -> None:
    result = invoke("export", str(desk), "--target", "gemini", "--openapi", "--json")
    assert json.loads(result.output)[0]["options"] == {"openapi": True}
    assert (desk / "adapters/gemini.openapi.json").exists()


def test_losses_table_and_json(desk: Path) -> None:
    table = invoke("export", str(desk), "--target", "openai.chat", "--strict", "--losses")
    assert "OPTIONAL_TO_NULLABLE" in table.output
    rows = json.loads(invoke("export", str(desk), "--target", "mcp", "--losses", "--json").output)
    assert {row["tool"]: row["losses"] for row in rows}["get_weather"] == []


def test_verify_checks_every_payload_against_its_targets_rules(desk: Path) -> None:
    result = invoke("export", str(desk), "--verify")
    assert result.exit_code == 0
    assert "every payload follows its target's rules" in result.output


def test_unknown_target_exits_2(desk: Path) -> None:
    assert invoke("export", str(desk), "--target", "openai.chatgpt").exit_code == 2


def test_import_writes_canonical_files_that_check_clean(tmp_path: Path) -> None:
    out = tmp_path / "schemas" / "tools"
    result = invoke(
        "import",
        "--from",
        "mcp",
        str(MCP_TOOLS / "memory.json"),
        "--out",
        str(out),
        "--id-base",
        "https://acme.test/",
    )
    assert result.exit_code == 0
    schema = json.loads((out / "create_entities.json").read_text())
    assert schema["$id"] == "https://acme.test/schemas/tools/create_entities.json"
    assert (out / "create_entities.output.json").exists()
    check = json.loads(invoke("check", str(tmp_path), "--json").output)
    assert {f["rule"] for f in check["findings"]} <= {"SW101", "SW103", "SW205"}
    assert check["errors"] == len([f for f in check["findings"] if f["rule"] == "SW101"])


def test_import_from_stdin_lists_every_change(tmp_path: Path) -> None:
    tools = [
        {
            "name": "calc.area",
            "description": "Area.",
            "parameters": {
                "type": "dict",
                "properties": {"base": {"type": "float", "description": "Base."}},
                "required": ["base"],
            },
        }
    ]
    result = invoke(
        "import", "--from", "openai", "-", "--out", str(tmp_path), "--json", stdin=json.dumps(tools)
    )
    notes = json.loads(result.output)[0]["notes"]
    assert [note["code"] for note in notes] == ["TYPE_RENAMED", "TYPE_RENAMED"]
    assert (tmp_path / "calc.area.json").exists()


def test_import_refuses_to_overwrite_and_bad_input_exits_2(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text("{}")
    tools = json.dumps([{"name": "t", "parameters": {"type": "object"}}])
    refused = invoke("import", "--from", "openai", "-", "--out", str(tmp_path), stdin=tools)
    assert refused.exit_code == 2
    assert invoke("import", "--from", "nope", "-", stdin="[]").exit_code == 2
    bad = invoke("import", "--from", "openai", "-", "--out", str(tmp_path), stdin='[{"x": 1}]')
    assert bad.exit_code == 2


def test_refresh_writes_every_adapter_with_its_own_options(desk: Path) -> None:
    assert invoke("export", str(desk), "--target", "anthropic", "--strict").exit_code == 0
    assert invoke("export", str(desk), "--target", "gemini", "--openapi").exit_code == 0
    for name in ("anthropic.strict.json", "gemini.openapi.json"):
        adapter = desk / "adapters" / name
        adapter.write_text(adapter.read_text().replace("Temperature unit", "Temp unit"))
    check = json.loads(invoke("check", str(desk), "--json").output)
    hints = [f["hint"] for f in check["findings"] if f["rule"] == "SW015"]
    assert [hint.split(" (")[0] for hint in hints] == [
        "run schemawire export --target anthropic --strict",
        "run schemawire export --target gemini --openapi",
    ]
    refreshed = invoke("export", str(desk), "--refresh", "--json")
    assert refreshed.exit_code == 0
    assert sorted(Path(row["file"]).name for row in json.loads(refreshed.output)) == [
        "anthropic.strict.json",
        "gemini.openapi.json",
    ]
    assert invoke("check", str(desk)).exit_code == 0


def test_refresh_without_adapters_exits_2(desk: Path) -> None:
    result = invoke("export", str(desk), "--refresh")
    assert result.exit_code == 2
    assert "no adapter to refresh" in result.stderr


def test_export_writes_nothing_when_a_schema_cannot_be_used(desk: Path) -> None:
    schema = desk / "schemas/tools/get_weather.json"
    schema.write_text(schema.read_text().replace('"city"', '"city",', 1))
    result = invoke("export", str(desk))
    assert result.exit_code == 2
    assert "schemas/tools/get_weather.json cannot be used (SW001" in result.stderr
    assert not (desk / "adapters").exists()


def test_import_names_the_check_that_finds_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source = str(MCP_TOOLS / "memory.json")
    into_default = invoke("import", "--from", "mcp", source, "--out", "agent/schemas/tools")
    assert into_default.output.rstrip().endswith("next: schemawire check agent")
    assert invoke("check", "agent").exit_code in (0, 1)  # it finds the schemas: not exit 2
    elsewhere = invoke("import", "--from", "mcp", source, "--out", "tools")
    assert "tools is no repository's tools folder" in elsewhere.output
    (tmp_path / "schemawire.toml").write_text('[repository]\ntools = "tools"\n')
    configured = invoke("import", "--from", "mcp", source, "--out", "tools", "--force")
    assert configured.output.rstrip().endswith("next: schemawire check")
