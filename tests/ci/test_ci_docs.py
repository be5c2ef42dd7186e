"""docs/ci.md: its commands run with the exit codes it shows, and its configurations name what
the repository ships."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).parents[2]
PAGE = PROJECT / "docs" / "ci.md"
SCHEMAWIRE = Path(sys.executable).with_name("schemawire")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


def console_commands() -> list[tuple[str, int]]:
    commands: list[tuple[str, int]] = []
    for block in blocks("console"):
        for line in block.splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], 0))
            elif line.startswith("# exit "):
                commands[-1] = (commands[-1][0], int(line.removeprefix("# exit ")))
    return commands


def test_the_pre_commit_snippets_use_the_shipped_hook_ids() -> None:
    shipped = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    by_id = {hook["id"]: hook for hook in shipped}
    configs = [yaml.safe_load(b) for b in blocks("yaml") if "repos:" in b]
    assert len(configs) == 2
    for config in configs:
        for hook in config["repos"][0]["hooks"]:
            assert hook["id"] in by_id
            if "entry" in hook:  # a local hook says what the shipped one says
                assert hook["entry"] == by_id[hook["id"]]["entry"]
                assert hook["files"] == by_id[hook["id"]]["files"]


@pytest.mark.slow
@pytest.mark.parametrize(("command", "exit_code"), console_commands())
def test_documented_command_runs(command: str, exit_code: int) -> None:
    argv = shlex.split(command)
    assert argv[0] == "schemawire"
    completed = subprocess.run(
        [str(SCHEMAWIRE), *argv[1:]], cwd=PROJECT, capture_output=True, timeout=120, check=False
    )
    assert completed.returncode == exit_code, completed.stdout + completed.stderr
