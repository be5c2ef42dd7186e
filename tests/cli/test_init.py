"""``schemawire init --blank``: a repository to fill in, with nothing of the example's to delete,
whose flow and eval run as they are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemawire.cli._app import app
from schemawire.flows.definition import load_flow
from schemawire.schema.repository import Repository

runner = CliRunner()
SCHEMAWIRE = Path(sys.executable).with_name("schemawire")


def test_a_blank_repository_has_the_folders_and_no_schema(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "--blank", str(tmp_path / "agent")])
    assert result.exit_code == 0, result.output
    root = tmp_path / "agent"
    for folder in ("tools", "handoffs", "state", "common"):
        assert (root / "schemas" / folder / ".gitkeep").is_file()
    repository = Repository.load(root)
    assert repository.files == ()
    assert repository.config.serve.tools == {}
    assert "schemas/tools/NAME.json" in result.output.replace("\n", "")


@pytest.mark.slow
def test_a_blank_repositorys_flow_loads_and_its_eval_passes_offline(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", "--blank", str(tmp_path)]).exit_code == 0
    flow = load_flow(tmp_path / "flows" / "assistant.json")
    assert list(flow.agents) == [flow.start]
    completed = subprocess.run(
        [str(SCHEMAWIRE), "eval", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = json.loads(completed.stdout)
    assert (report["passed"], report["failed"], report["errors"]) == (1, 0, 0)


def test_blank_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    (tmp_path / "schemawire.toml").write_text("# mine\n", encoding="utf-8")
    refused = runner.invoke(app, ["init", "--blank", str(tmp_path)])
    assert refused.exit_code == 2
    assert "--force" in refused.stderr
    assert (tmp_path / "schemawire.toml").read_text(encoding="utf-8") == "# mine\n"
