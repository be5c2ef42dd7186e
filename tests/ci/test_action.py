"""``action.yml``, the composite GitHub Action: it parses, uses every input, its scripts are
valid bash that splice no input, and the check steps run here as GitHub runs them, against
the examples."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

PROJECT = Path(__file__).parents[2]
ACTION = PROJECT / "action.yml"
DOCS = PROJECT / "docs" / "ci.md"
_INPUT = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")


def action() -> dict[str, Any]:
    loaded = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def steps() -> list[dict[str, Any]]:
    return list(action()["runs"]["steps"])


def step(name: str) -> dict[str, Any]:
    return next(s for s in steps() if s["name"] == name)


def test_the_action_is_composite_with_its_inputs_described() -> None:
    loaded = action()
    assert loaded["runs"]["using"] == "composite"
    assert set(loaded["inputs"]) == {
        "path",
        "version",
        "pip-spec",
        "python-version",
        "fail-on",
        "upload-sarif",
    }
    assert all(spec["description"] and "default" in spec for spec in loaded["inputs"].values())


def test_every_input_is_used_and_every_input_used_is_declared() -> None:
    used = set(_INPUT.findall(ACTION.read_text(encoding="utf-8")))
    used |= set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", ACTION.read_text(encoding="utf-8")))
    assert used == set(action()["inputs"])


def test_the_steps_set_up_python_install_check_and_upload_sarif() -> None:
    uses = [s.get("uses", "").split("@")[0] for s in steps()]
    assert uses[0] == "actions/setup-python"
    assert uses[-1] == "github/codeql-action/upload-sarif"
    upload = steps()[-1]
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    assert upload["with"]["sarif_file"] == "${{ steps.sarif.outputs.sarif-file }}"
    assert all(s["shell"] == "bash" for s in steps() if "run" in s)


@pytest.mark.parametrize("name", [s["name"] for s in steps() if "run" in s])
def test_each_script_is_valid_bash_and_splices_no_expression(name: str) -> None:
    script = step(name)["run"]
    assert "${{" not in script  # inputs come through env: no script injection
    checked = subprocess.run(
        ["bash", "-n"], input=script, capture_output=True, encoding="utf-8", timeout=30, check=False
    )
    assert checked.returncode == 0, checked.stderr


def test_docs_show_a_workflow_that_uses_the_action() -> None:
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    workflows = [yaml.safe_load(block) for block in blocks if "jobs:" in block]
    assert workflows
    used = [
        s
        for workflow in workflows
        for job in workflow["jobs"].values()
        for s in job["steps"]
        if "schemawire" in s.get("uses", "") and "with" in s
    ]
    assert used
    assert all(set(s["with"]) <= set(action()["inputs"]) for s in used)


# --- the check steps, run as the runner runs them -------------------------------------------------


def run_step(
    name: str, inputs: dict[str, str], runner_temp: Path
) -> subprocess.CompletedProcess[str]:
    """Run one ``run`` step with bash, its env expressions evaluated from ``inputs`` over the
    defaults, in the project root as the workspace, this interpreter's schemawire on PATH."""
    values = {key: str(spec["default"]) for key, spec in action()["inputs"].items()}
    values.update(inputs)
    chosen = step(name)
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_OUTPUT": str(runner_temp / "output"),
    }
    for key, expression in chosen.get("env", {}).items():
        env[key] = _INPUT.sub(lambda match: values[match[1]], expression)
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", chosen["run"]],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_on_broken_refunds_the_sarif_step_writes_the_log_and_the_annotations_fail(
    tmp_path: Path,
) -> None:
    inputs = {"path": "examples/broken-refunds"}
    sarif = run_step("Write the SARIF log", inputs, tmp_path)
    assert sarif.returncode == 0, sarif.stderr
    output = (tmp_path / "output").read_text(encoding="utf-8")
    assert output == f"sarif-file={tmp_path / 'schemawire.sarif'}\n"
    log = json.loads((tmp_path / "schemawire.sarif").read_text(encoding="utf-8"))
    results = log["runs"][0]["results"]
    assert len(results) == 19
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("examples/broken-refunds/")  # relative to the workspace

    annotations = run_step("Annotate the findings", inputs, tmp_path)
    assert annotations.returncode == 1
    lines = annotations.stdout.splitlines()
    assert sum(line.startswith("::error file=examples/broken-refunds/") for line in lines) == 13
    assert lines[-1] == "schemawire check: 13 errors, 6 warnings"


@pytest.mark.slow
def test_on_the_support_desk_both_steps_pass_and_fail_on_warning_is_honoured(
    tmp_path: Path,
) -> None:
    inputs = {"path": "examples/support-desk", "fail-on": "warning"}
    assert run_step("Write the SARIF log", inputs, tmp_path).returncode == 0
    log = json.loads((tmp_path / "schemawire.sarif").read_text(encoding="utf-8"))
    assert log["runs"][0]["results"] == []
    assert run_step("Annotate the findings", inputs, tmp_path).returncode == 0


@pytest.mark.slow
def test_a_path_that_cannot_be_checked_fails_the_sarif_step(tmp_path: Path) -> None:
    ran = run_step("Write the SARIF log", {"path": "no/such/dir"}, tmp_path)
    assert ran.returncode == 2
    assert not (tmp_path / "output").exists()
