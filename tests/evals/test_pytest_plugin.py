"""The pytest plugin: each case file is an item; nothing else is taken for a case."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.evals.cases import REFUND, flow_case

pytestmark = pytest.mark.slow  # each test runs pytest in a process

ROOT = Path(__file__).parents[2]
PLUGIN = "schemawire.evals.pytest_plugin"


def run_pytest(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A real ``pytest`` in a fresh process; the plugin comes from its entry point."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, cwd=cwd, env=env
    )


def test_pytest_runs_the_cases_and_counts_passes_and_failures(tmp_path: Path) -> None:
    repository = tmp_path / "refund"
    shutil.copytree(REFUND, repository, ignore=shutil.ignore_patterns("__pycache__"))
    evals = repository / "evals"
    (evals / "wrong_route.json").write_text(json.dumps(flow_case(route="end"), indent=2))
    (evals / "unusable.json").write_text(
        json.dumps({**flow_case(status="done"), "flow": "flows/nowhere.json"})
    )
    (repository / "fixtures" / "not_a_case.json").write_text("{}")
    report = tmp_path / "pytest.xml"
    result = run_pytest(str(evals), f"--junitxml={report}", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "2", "0")
    assert "3 passed" in result.stdout
    assert "2 failed" in result.stdout
    assert "wrong_route.json:" in result.stdout
    assert "#/expect/route\n    expected route `end`, got route `billing`" in result.stdout
    assert "cannot be run:" in result.stdout
    assert "/flow: no flow file" in result.stdout


def test_pytest_collects_only_the_cases_of_a_repository() -> None:
    # The examples and this repository's test data hold many JSON files; only the three
    # cases in examples/refund/evals are cases.
    result = run_pytest("--collect-only", "-q", "examples", "tests/data", cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    items = [line for line in result.stdout.splitlines() if "::" in line]
    assert items == [
        "examples/refund/evals/handoff_refused.json::handoff_refused",
        "examples/refund/evals/happy_path.json::happy_path",
        "examples/refund/evals/unsure_triage.json::unsure_triage",
    ]


def test_pytest_runs_the_cases_of_a_repository_set_up_in_pyproject(tmp_path: Path) -> None:
    repository = tmp_path / "refund"
    shutil.copytree(REFUND, repository, ignore=shutil.ignore_patterns("__pycache__"))
    settings = repository / "schemawire.toml"
    tables = re.sub(r"^\[", "[tool.schemawire.", settings.read_text(), flags=re.MULTILINE)
    (repository / "pyproject.toml").write_text(f"[project]\nname = 'refund'\n\n{tables}")
    settings.unlink()
    result = run_pytest(str(repository), "-v", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
    assert "evals/happy_path.json::happy_path PASSED" in result.stdout


def test_a_json_file_named_on_the_command_line_is_collected(tmp_path: Path) -> None:
    case = tmp_path / "anywhere.json"
    case.write_text(json.dumps({"repo": str(REFUND), **flow_case(status="done")}))
    result = run_pytest(str(case), "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


@pytest.mark.parametrize("given", [0, 1, 2])
def test_the_plugin_loads_once_however_often_p_names_it(tmp_path: Path, given: int) -> None:
    # The entry point loads the plugin; a user who also types -p (once or twice) must not
    # meet "Plugin already registered".
    repository = tmp_path / "refund"
    shutil.copytree(REFUND, repository, ignore=shutil.ignore_patterns("__pycache__"))
    result = run_pytest(*["-p", PLUGIN] * given, str(repository / "evals"), "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_p_loads_the_plugin_when_entry_points_are_not_autoloaded(tmp_path: Path) -> None:
    repository = tmp_path / "refund"
    shutil.copytree(REFUND, repository, ignore=shutil.ignore_patterns("__pycache__"))
    quiet = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    without = run_pytest(str(repository / "evals"), "-q", cwd=tmp_path, env=quiet)
    assert without.returncode == 5, without.stdout + without.stderr  # no tests collected
    result = run_pytest("-p", PLUGIN, str(repository / "evals"), "-q", cwd=tmp_path, env=quiet)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
