"""The hooks of ``.pre-commit-hooks.yaml``, run by the real ``pre-commit`` on a temporary git
repository (a copy of examples/support-desk), broken and not.

Two ways: the shipped hooks themselves through ``pre-commit try-repo`` (``language: python``:
pre-commit builds the hook's environment from this source tree, and pip fetches schemawire's
dependencies from the package index), and the same hook definitions as ``language: system``
hooks of a local configuration, which run the schemawire of this interpreter and need no
network at all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import EXAMPLES

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).parents[2]
HOOKS_FILE = PROJECT / ".pre-commit-hooks.yaml"
HOOK_IDS = ("schemawire-check", "schemawire-fmt", "schemawire-export-check")
REFUND = "schemas/tools/create_refund.json"


def git(root: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(
        ["git", "-C", str(root), *identity, *args], check=True, capture_output=True, timeout=60
    )


def shipped_hooks() -> list[dict[str, Any]]:
    hooks = yaml.safe_load(HOOKS_FILE.read_text(encoding="utf-8"))
    assert isinstance(hooks, list)
    return hooks


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module: the python hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLES / "support-desk", root)
    git(root, "init", "--quiet")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "one")
    return root


def pre_commit(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``pre-commit ARGS`` in ``root``, with this interpreter's scripts first on PATH."""
    scripts = str(Path(sys.executable).parent)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))},
        "PRE_COMMIT_HOME": str(home),
        "PATH": scripts + os.pathsep + os.environ.get("PATH", ""),
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [str(Path(scripts) / "pre-commit"), *args],
        cwd=root,
        env=env,
        capture_output=True,
        encoding="utf-8",
        check=False,
        timeout=600,  # the first run builds the python hook environment (pip install)
    )


def use_local_system_hooks(root: Path) -> None:
    """A .pre-commit-config.yaml in ``root`` with the shipped hooks as ``language: system``."""
    hooks = [{**hook, "language": "system"} for hook in shipped_hooks()]
    config = {"repos": [{"repo": "local", "hooks": hooks}]}
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    git(root, "add", ".pre-commit-config.yaml")


def break_the_refund_tool(root: Path) -> None:
    path = root / REFUND
    path.write_text(
        path.read_text(encoding="utf-8").replace('"type": "object",', '"type": "object",,', 1),
        encoding="utf-8",
    )
    git(root, "add", REFUND)


def hook_section(output: str, hook_id: str) -> str:
    """The lines pre-commit prints for one hook: its status line and what it printed."""
    name = next(hook["name"] for hook in shipped_hooks() if hook["id"] == hook_id)
    start = output.index(name)
    rest = output[start + len(name) :]
    following = [rest.find(h["name"] + ".") for h in shipped_hooks() if h["id"] != hook_id]
    ends = [end for end in following if end > 0]
    return output[start : start + len(name) + (min(ends) if ends else len(rest))]


def test_the_hooks_file_declares_the_three_hooks_with_their_commands() -> None:
    hooks = {hook["id"]: hook for hook in shipped_hooks()}
    assert tuple(hooks) == HOOK_IDS
    assert hooks["schemawire-check"]["entry"] == "schemawire check"
    assert hooks["schemawire-export-check"]["entry"] == "schemawire export --check"
    assert hooks["schemawire-fmt"]["entry"] == "schemawire fmt"
    assert all(hook["language"] == "python" for hook in hooks.values())
    assert hooks["schemawire-check"]["pass_filenames"] is False
    assert hooks["schemawire-fmt"].get("pass_filenames", True) is True


def test_shipped_hooks_pass_on_a_good_repository(desk: Path, pre_commit_home: Path) -> None:
    ran = pre_commit(desk, pre_commit_home, "try-repo", str(PROJECT), "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for hook in shipped_hooks():
        assert f"{hook['name']}." in ran.stdout
    assert ran.stdout.count("Passed") == 3


def test_shipped_hooks_fail_on_a_broken_schema_with_our_message(
    desk: Path, pre_commit_home: Path
) -> None:
    break_the_refund_tool(desk)
    ran = pre_commit(desk, pre_commit_home, "try-repo", str(PROJECT), "--all-files")
    assert ran.returncode == 1
    check = hook_section(ran.stdout, "schemawire-check")
    assert "Failed" in check
    assert f"{REFUND}:7:20: SW001 invalid-json" in check
    assert "error: schemas/tools/create_refund.json:7:20" in hook_section(
        ran.stdout, "schemawire-fmt"
    )
    export_check = hook_section(ran.stdout, "schemawire-export-check")
    assert "Failed" in export_check
    assert f"6 adapters not compared: {REFUND} cannot be used" in export_check


def test_local_system_hooks_pass_then_fail_on_a_broken_schema(
    desk: Path, pre_commit_home: Path
) -> None:
    use_local_system_hooks(desk)
    passed = pre_commit(desk, pre_commit_home, "run", "--all-files")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.count("Passed") == 3

    break_the_refund_tool(desk)
    failed = pre_commit(desk, pre_commit_home, "run", "--all-files")
    assert failed.returncode == 1
    check = hook_section(failed.stdout, "schemawire-check")
    assert "- exit code: 1" in check
    assert f"{REFUND}:7:20: SW001 invalid-json unexpected character" in check


def test_fmt_hook_rewrites_an_unformatted_file_and_fails_once(
    desk: Path, pre_commit_home: Path
) -> None:
    use_local_system_hooks(desk)
    fixture = desk / "fixtures/tools/create_refund/valid/late_delivery.json"
    formatted = fixture.read_text(encoding="utf-8")
    fixture.write_text(formatted.replace("\n", "").replace("  ", ""), encoding="utf-8")
    git(desk, "add", ".")

    first = pre_commit(desk, pre_commit_home, "run", "schemawire-fmt", "--all-files")
    assert first.returncode == 1
    assert "files were modified by this hook" in first.stdout
    assert fixture.read_text(encoding="utf-8") == formatted

    git(desk, "add", ".")
    again = pre_commit(desk, pre_commit_home, "run", "schemawire-fmt", "--all-files")
    assert again.returncode == 0, again.stdout
