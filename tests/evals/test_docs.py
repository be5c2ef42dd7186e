"""docs/evals.md runs: its commands, in order, exit as it says; its Python prints what it
shows; its case is the example's."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evals.cases import CASES, invoke

ROOT = Path(__file__).parents[2]
PAGE = (ROOT / "docs" / "evals.md").read_text(encoding="utf-8")
SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE, flags=re.DOTALL)


@pytest.mark.slow
def test_the_commands_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    commands = [
        line[2:]
        for block in blocks("console")
        for line in block.splitlines()
        if line.startswith("$ ")
    ]
    assert len(commands) == 4
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "schemawire"
        if argv[1] == "eval":  # in-process: app.py may not register it yet
            result = invoke(*argv[1:])
            assert result.exit_code == 0, (command, result.output)
        else:
            done = subprocess.run(
                [SCHEMAWIRE, *argv[1:]],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                cwd=tmp_path,
            )
            assert done.returncode == 0, (command, done.stdout + done.stderr)
    assert (tmp_path / "evals.xml").is_file()
    assert (tmp_path / "recorded" / "refund.json").is_file()


def test_the_python_prints_what_it_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    (code,) = blocks("python")
    expected = [line.removeprefix("# ") for line in code.splitlines() if line.startswith("# ")]
    output = io.StringIO()
    monkeypatch.chdir(ROOT)
    with contextlib.redirect_stdout(output):
        exec(compile(code, "docs/evals.md", "exec"), {})
    assert output.getvalue().splitlines() == expected


def test_the_case_shown_is_the_examples() -> None:
    (shown,) = blocks("json")
    example = json.loads((CASES / "happy_path.json").read_text(encoding="utf-8"))
    example.pop("description")
    assert json.loads(shown) == example


def test_the_command_line_shown_is_the_commands() -> None:
    result = invoke("eval", "--help")
    for option in ("--junit", "--json", "--from-trace", "--out", "--flow", "--repo", "--name"):
        assert option in result.output
        assert option in PAGE


@pytest.mark.slow
def test_the_pytest_command_runs_the_cases(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    lines = [line for block in blocks("text") for line in block.splitlines()]
    (command,) = [line for line in lines if line.startswith("python -m pytest")]
    argv = [sys.executable, *shlex.split(command)[1:], "-p", "no:cacheprovider"]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
