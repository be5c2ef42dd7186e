"""``schemawire bump``: the x-versions ``check --since`` asks for, set in place, on a real git
repository (a copy of examples/support-desk)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from schemawire.cli._app import app
from tests.helpers import EXAMPLES

runner = CliRunner()
ORDER = "schemas/common/order.json"
# The schemas that reference common/order.json, besides the file itself.
REFERENCING = (
    "schemas/handoffs/triage_to_billing.json",
    "schemas/state/refund_flow.json",
    "schemas/tools/create_refund.json",
    "schemas/tools/create_refund.output.json",
)


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


def git(root: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(
        ["git", "-C", str(root), *identity, *args],
        check=True,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
    ).stdout


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """The support desk, committed once in a fresh git repository."""
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLES / "support-desk", root)
    git(root, "init", "--quiet")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "one")
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def version_findings(root: Path) -> list[dict[str, Any]]:
    result = invoke("check", str(root), "--since", "HEAD", "--json", "--no-fixtures")
    findings = json.loads(result.stdout)["findings"]
    return [f for f in findings if f["rule"] in ("SW401", "SW402")]


def versions(root: Path) -> dict[str, str]:
    files = (ORDER, *REFERENCING)
    return {f: json.loads((root / f).read_text(encoding="utf-8"))["x-version"] for f in files}


def test_a_shared_definitions_breaking_change_bumps_every_schema_that_references_it(
    desk: Path,
) -> None:
    edit(desk / ORDER, '"^A-[0-9]{4,}$"', '"^A-[0-9]{3,}$"')
    assert len(version_findings(desk)) == 5  # what a person had to fix by hand
    before = {f: (desk / f).read_bytes() for f in (ORDER, *REFERENCING)}

    result = invoke("bump", str(desk), "--since", "HEAD")

    assert result.exit_code == 0, result.output
    assert "bumped 5" in result.stdout
    assert versions(desk) == dict.fromkeys((ORDER, *REFERENCING), "2.0.0")
    for name, old in before.items():  # only the x-version string moved
        expected = old.replace(b'"x-version": "1.0.0"', b'"x-version": "2.0.0"', 1)
        assert (desk / name).read_bytes() == expected
    assert version_findings(desk) == []
    # The adapters carry the versions: refreshed, the whole check passes.
    assert invoke("export", str(desk), "--refresh").exit_code == 0
    assert invoke("check", str(desk), "--since", "HEAD").exit_code == 0


def test_each_schema_gets_the_smallest_bump_its_change_calls_for(desk: Path) -> None:
    tool = desk / "schemas/tools/create_refund.json"
    schema = json.loads(tool.read_text(encoding="utf-8"))
    # An optional property is additive (minor); a new description is an annotation (patch).
    edit(tool, '"properties": {', '"properties": {"memo": {"type": "string", "description": "x"},')
    handoff = desk / REFERENCING[0]
    edit(handoff, '"title": "Triage hands a ticket to billing"', '"title": "Triage to billing"')

    result = invoke("bump", str(desk), "--since", "HEAD", "--json")

    assert result.exit_code == 0, result.output
    bumps = {b["file"]: b for b in json.loads(result.stdout)["bumps"]}
    assert set(bumps) == {"schemas/tools/create_refund.json", REFERENCING[0]}
    assert bumps["schemas/tools/create_refund.json"]["x-version"]["now"] == "1.1.0"
    assert bumps[REFERENCING[0]]["x-version"]["now"] == "1.0.1"
    assert {b["rule"] for b in bumps.values()} == {"SW402"}
    assert schema["x-version"] == "1.0.0"
    assert json.loads(tool.read_text(encoding="utf-8"))["x-version"] == "1.1.0"
    assert version_findings(desk) == []


def test_a_bump_too_small_for_a_breaking_change_is_raised_to_the_major(desk: Path) -> None:
    edit(desk / ORDER, '"^A-[0-9]{4,}$"', '"^A-[0-9]{3,}$"')
    edit(desk / ORDER, '"x-version": "1.0.0"', '"x-version": "1.1.0"')

    bumps = json.loads(invoke("bump", str(desk), "--since", "HEAD", "--json").stdout)["bumps"]

    order = next(b for b in bumps if b["file"] == ORDER)
    assert order["x-version"] == {"since": "1.0.0", "was": "1.1.0", "now": "2.0.0"}
    assert order["rule"] == "SW401"
    assert version_findings(desk) == []


def test_dry_run_says_what_would_change_and_writes_nothing(desk: Path) -> None:
    edit(desk / ORDER, '"^A-[0-9]{4,}$"', '"^A-[0-9]{3,}$"')
    status = git(desk, "status", "--porcelain")

    result = invoke("bump", str(desk), "--since", "HEAD", "--dry-run")

    assert result.exit_code == 0
    assert "would set x-version 1.0.0 → 2.0.0" in result.stdout
    assert "5 to bump; run without --dry-run" in result.stdout
    assert git(desk, "status", "--porcelain") == status
    assert len(version_findings(desk)) == 5
    dry = json.loads(invoke("bump", str(desk), "--since", "HEAD", "--dry-run", "--json").stdout)
    assert dry["written"] is False
    assert len(dry["bumps"]) == 5


def test_a_clean_tree_bumps_nothing_and_says_so(desk: Path) -> None:
    result = invoke("bump", str(desk), "--since", "HEAD")
    assert result.exit_code == 0
    assert "every x-version is already what check --since HEAD asks for" in result.stdout
    assert git(desk, "status", "--porcelain") == ""
    report = json.loads(invoke("bump", str(desk), "--json").stdout)
    assert report == {"since": "HEAD", "written": False, "bumps": []}


def test_an_unknown_revision_exits_2_and_writes_nothing(desk: Path) -> None:
    edit(desk / ORDER, '"^A-[0-9]{4,}$"', '"^A-[0-9]{3,}$"')
    result = invoke("bump", str(desk), "--since", "no-such-rev")
    assert result.exit_code == 2
    assert "no-such-rev" in result.stderr
    assert versions(desk)[ORDER] == "1.0.0"
