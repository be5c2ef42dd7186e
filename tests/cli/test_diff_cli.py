"""``schemawire diff --schema``, ``diff --since`` and ``check --since``: changes classified,
exit 1 on a breaking change, and a breaking change without a major bump fails the check."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from schemawire._json import dumps
from schemawire.cli._app import app
from tests.helpers import EXAMPLES, WriteRepo, tool_schema

runner = CliRunner()
SUPPORT_DESK = EXAMPLES / "support-desk"
REFUND = "schemas/tools/create_refund.json"
CITY = {"type": "string", "description": "A city name."}
UNIT = {"type": "string", "enum": ["c", "f"], "description": "The unit."}


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


def weather(version: str = "1.0.0", *, units: list[str] | None = None, **overrides: Any) -> Any:
    unit = {**UNIT, "enum": units or UNIT["enum"]}
    return tool_schema(
        "weather", **{"x-version": version}, properties={"city": CITY, "unit": unit}, **overrides
    )


def write(path: Path, schema: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(schema) + "\n", encoding="utf-8")
    return path


def git(root: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(
        ["git", "-C", str(root), *identity, *args], check=True, capture_output=True, timeout=60
    )


@pytest.fixture
def history(write_repo: WriteRepo) -> Path:
    """A git repository with one commit: a weather tool (input and output) and a handoff."""
    root = write_repo(
        {
            "schemawire.toml": "",
            "schemas/tools/weather.json": weather(),
            "schemas/tools/weather.output.json": tool_schema(
                "weather.output",
                properties={"celsius": {"type": "number", "description": "C."}},
                required=["celsius"],
            ),
            "schemas/handoffs/triage.json": tool_schema(
                "triage", **{"$id": "https://example.com/schemas/handoffs/triage.json"}
            ),
        }
    )
    git(root, "init", "--quiet")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "one")
    return root


# --- diff --schema --------------------------------------------------------------------------------


def test_schema_diff_shows_each_change_and_exits_1_on_a_breaking_one(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", weather(units=["c", "f", "k"]))
    new = write(tmp_path / "new.json", weather(units=["c", "f"]))
    result = invoke("diff", "--schema", str(old), str(new))
    assert result.exit_code == 1
    row = next(line for line in result.output.splitlines() if "ENUM_VALUE_REMOVED" in line)
    assert row.split()[:4] == ["breaking", "callers", "ENUM_VALUE_REMOVED", "/properties/unit/enum"]
    assert '- "k"' in row
    assert 'a breaking change needs a major bump: set "x-version": "2.0.0"' in result.output


def test_schema_diff_exits_0_when_no_change_breaks_the_files_role(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", weather())
    new = write(tmp_path / "new.json", weather("1.1.0", units=["c", "f", "k"]))
    result = invoke("diff", "--schema", str(old), str(new))
    assert result.exit_code == 0
    assert "0 breaking, 1 compatible, 0 annotation-only changes" in result.output
    # The same widening breaks whoever reads a tool's output.
    assert invoke("diff", "--schema", "--role", "output", str(old), str(new)).exit_code == 1


def test_schema_diff_json_lists_codes_pointers_and_impact(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", weather())
    new = write(tmp_path / "new.json", weather(required=["city", "unit"], description="Weather."))
    result = invoke("diff", "--schema", "--json", str(old), str(new))
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["breaking"] is True
    assert report["counts"] == {"breaking": 1, "compatible": 0, "annotation": 1}
    (file,) = report["files"]
    assert file["x-version"] == {"old": "1.0.0", "new": "1.0.0", "bump": "none", "wanted": "2.0.0"}
    assert file["changes"] == [
        {
            "code": "REQUIRED_ADDED",
            "pointer": "/required",
            "new": "unit",
            "breaks": "producers",
            "severity": "breaking",
        },
        {
            "code": "ANNOTATION_CHANGED",
            "pointer": "/description",
            "old": "The weather tool.",
            "new": "Weather.",
            "breaks": "none",
            "severity": "annotation",
        },
    ]


def test_schema_diff_takes_the_role_from_the_repository() -> None:
    old = SUPPORT_DESK / "schemas/tools/create_refund.output.json"
    result = invoke("diff", "--schema", "--json", str(old), str(old))
    assert result.exit_code == 0
    assert json.loads(result.output)["files"] == []


def test_schema_diff_between_two_repositories_resolves_each_ones_references() -> None:
    broken = EXAMPLES / "broken-refunds" / REFUND
    result = invoke("diff", "--schema", "--json", str(SUPPORT_DESK / REFUND), str(broken))
    codes = {(c["code"], c["pointer"]) for c in json.loads(result.output)["files"][0]["changes"]}
    assert ("BOUND_LOOSENED", "/properties/amount/exclusiveMinimum") in codes
    assert ("ENUM_VALUE_REMOVED", "/properties/reason/enum") in codes


@pytest.mark.parametrize(
    "args",
    [
        ("--schema", "only-one.json"),
        ("--schema", "-", "b.json"),
        ("--since", "HEAD", "--schema", "a", "b"),
        ("--since", "HEAD", "a", "b"),
        ("--role", "output", "a.json", "b.json"),
    ],
)
def test_schema_diff_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    assert invoke("diff", *args).exit_code == 2


def test_schema_diff_of_an_unreadable_file_exits_2(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", weather())
    (tmp_path / "new.json").write_text("{", encoding="utf-8")
    result = invoke("diff", "--schema", str(old), str(tmp_path / "new.json"))
    assert result.exit_code == 2
    assert "new.json:1:2" in result.stderr


# --- diff --since ---------------------------------------------------------------------------------


def test_since_reports_nothing_for_an_unchanged_repository(history: Path) -> None:
    result = invoke("diff", "--since", "HEAD", str(history))
    assert (result.exit_code, result.output.strip()) == (0, "no schema changes in 3 schema files")


def test_since_classifies_every_changed_file_by_its_role(history: Path) -> None:
    write(history / "schemas/tools/weather.json", weather("1.1.0", units=["c", "f", "k"]))
    output = tool_schema(
        "weather.output",
        properties={"celsius": {"type": "number", "description": "C."}},
        required=[],
    )
    write(history / "schemas/tools/weather.output.json", output)
    result = invoke("diff", "--since", "HEAD", str(history), "--json")
    assert result.exit_code == 1
    files = {f["file"]: f for f in json.loads(result.output)["files"]}
    assert files.keys() == {"schemas/tools/weather.json", "schemas/tools/weather.output.json"}
    weather_input = files["schemas/tools/weather.json"]
    assert (weather_input["role"], weather_input["breaking"], weather_input["compatible"]) == (
        "input",
        0,
        1,
    )
    assert files["schemas/tools/weather.output.json"]["changes"][0] == {
        "code": "REQUIRED_REMOVED",
        "pointer": "/required",
        "old": "celsius",
        "breaks": "consumers",
        "severity": "breaking",
    }


def test_since_lists_files_added_and_removed(history: Path) -> None:
    (history / "schemas/handoffs/triage.json").unlink()
    write(history / "schemas/tools/forecast.json", tool_schema("forecast"))
    result = invoke("diff", "--since", "HEAD", str(history))
    assert result.exit_code == 1  # a handoff is gone: its receiver breaks
    assert "schemas/handoffs/triage.json (handoff; removed)" in result.output
    assert "schemas/tools/forecast.json (tool input; added, x-version 1.0.0)" in result.output


def test_since_compares_with_an_older_commit_from_a_subdirectory(history: Path) -> None:
    write(history / "schemas/tools/weather.json", weather("2.0.0", units=["c"]))
    git(history, "commit", "--quiet", "-am", "two")
    result = invoke("diff", "--since", "HEAD~1", str(history / "schemas"), "--json")
    assert result.exit_code == 1
    (file,) = json.loads(result.output)["files"]
    assert file["x-version"]["bump"] == "major"
    assert file["changes"][0]["code"] == "ENUM_VALUE_REMOVED"


@pytest.mark.parametrize("rev", ["no-such-rev", "--output=x"])
def test_since_an_unknown_revision_exits_2(history: Path, rev: str) -> None:
    result = invoke("diff", f"--since={rev}", str(history))
    assert result.exit_code == 2
    assert "git revision" in result.stderr or "names no commit" in result.stderr


def test_since_outside_a_git_work_tree_exits_2(
    write_repo: WriteRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_repo({"schemawire.toml": "", "schemas/tools/weather.json": weather()})
    # git must not find a work tree above the temporary directory, wherever that lies
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(root.parent))
    result = invoke("diff", "--since", "HEAD", str(root))
    assert result.exit_code == 2
    assert "git rev-parse failed" in result.stderr


# --- check --since --------------------------------------------------------------------------------


def test_check_since_fails_on_a_breaking_change_without_a_major_bump(history: Path) -> None:
    write(history / "schemas/tools/weather.json", weather("1.1.0", required=["city", "unit"]))
    result = invoke("check", str(history), "--since", "HEAD", "--json")
    assert result.exit_code == 1
    (finding,) = [f for f in json.loads(result.output)["findings"] if f["rule"] == "SW401"]
    assert finding["name"] == "breaking-change-without-major-bump"
    assert finding["file"].endswith("schemas/tools/weather.json")  # relative to the cwd
    assert (finding["pointer"], finding["line"]) == ("/x-version", 4)
    assert "REQUIRED_ADDED at /required" in finding["message"]
    assert finding["hint"] == 'set "x-version": "2.0.0", or undo the change'


def test_check_since_passes_once_the_major_version_is_bumped(history: Path) -> None:
    write(history / "schemas/tools/weather.json", weather("2.0.0", required=["city", "unit"]))
    result = invoke("check", str(history), "--since", "HEAD", "--json")
    assert result.exit_code == 0
    assert not [f for f in json.loads(result.output)["findings"] if f["rule"].startswith("SW4")]


def test_check_since_warns_on_a_compatible_change_without_a_bump(history: Path) -> None:
    write(history / "schemas/tools/weather.json", weather(units=["c", "f", "k"]))
    result = invoke("check", str(history), "--since", "HEAD")
    assert result.exit_code == 0
    assert "SW402 change-without-version-bump" in result.output
    assert invoke("check", str(history), "--since", "HEAD", "--fail-on", "warning").exit_code == 1


def test_check_since_findings_reach_sarif(history: Path) -> None:
    write(history / "schemas/tools/weather.json", weather(units=["c"]))
    result = invoke("check", str(history), "--since", "HEAD", "--format", "sarif")
    results = json.loads(result.output)["runs"][0]["results"]
    assert [r["ruleId"] for r in results if r["ruleId"].startswith("SW4")] == ["SW401"]


def test_check_since_an_unknown_revision_exits_2(history: Path) -> None:
    assert invoke("check", str(history), "--since", "nope").exit_code == 2


def test_check_without_since_does_not_need_git(write_repo: WriteRepo) -> None:
    root = write_repo({"schemawire.toml": "", "schemas/tools/weather.json": weather()})
    assert invoke("check", str(root)).exit_code == 0
