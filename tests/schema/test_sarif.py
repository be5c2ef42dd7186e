"""`schema.sarif`: the SARIF log is valid SARIF 2.1.0, by its schema and by the SARIF Multitool."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from schemawire._json import dumps, load_file
from schemawire.application.check import check_repository
from schemawire.schema.rules import RULES, Finding
from schemawire.schema.sarif import to_sarif
from schemawire.schema.validator import compile_schema
from tests.helpers import EXAMPLES

MULTITOOL = Path(__file__).parents[1] / "peers/node_modules/@microsoft/sarif-multitool-linux"


@pytest.fixture(scope="module")
def broken_log() -> dict[str, Any]:
    return to_sarif(check_repository(EXAMPLES / "broken-refunds").findings)


def test_log_lists_every_rule_and_locates_every_result(broken_log: dict[str, Any]) -> None:
    run = broken_log["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == list(RULES)
    for result in run["results"]:
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1


def test_log_satisfies_the_sarif_2_1_0_schema(broken_log: dict[str, Any]) -> None:
    schema = load_file(MULTITOOL / "sarif-2.1.0.json")  # shipped with the Multitool
    assert isinstance(schema, dict)
    assert compile_schema(schema).violations(broken_log) == ()


@pytest.mark.slow
def test_sarif_multitool_accepts_the_log(broken_log: dict[str, Any], tmp_path: Path) -> None:
    log = tmp_path / "schemawire.sarif"
    log.write_text(dumps(broken_log), encoding="utf-8")
    report = tmp_path / "validation.sarif"
    completed = subprocess.run(
        [str(MULTITOOL / "Sarif.Multitool"), "validate", str(log), "-o", str(report)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    validation: Any = load_file(report)
    problems = [r for r in validation["runs"][0]["results"] if r.get("level", "warning") == "error"]
    assert problems == []


def test_file_names_are_percent_encoded_uris() -> None:
    finding = Finding(RULES["SW001"], "fixtures/a b#c%20.json", "", "x")
    location = to_sarif([finding])["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "fixtures/a%20b%23c%2520.json"
