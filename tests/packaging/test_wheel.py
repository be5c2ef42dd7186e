"""The wheel and sdist a release uploads: what twine checks, and every file the package reads
at run time inside the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.packaging.conftest import ROOT

pytestmark = pytest.mark.slow  # builds the sdist and wheel in an isolated environment


def tracked_package_files() -> set[str]:
    """The files of ``src/schemawire`` under version control, as paths inside the wheel."""
    listed = subprocess.run(
        ["git", "ls-files", "src/schemawire"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {path.removeprefix("src/") for path in listed}


def test_the_wheel_holds_every_file_of_the_package(wheel: Path) -> None:
    inside = set(zipfile.ZipFile(wheel).namelist())
    expected = tracked_package_files()
    # The data files read at run time (ui static files, schemas, templates, word lists ...)
    # are the ones a packaging mistake drops; name a few so a broken listing cannot pass.
    for data in (
        "schemawire/ui/static/page.html",
        "schemawire/trace/hop.schema.json",
        "schemawire/blank/schemawire.toml",
        "schemawire/cli/toplevel_help.txt",
        "schemawire/gates/secrets.json",
        "schemawire/gates/related_words.json",
        "schemawire/host/demo.json",
        "schemawire/py.typed",  # the "Typing :: Typed" classifier's promise to type checkers
    ):
        assert data in expected
    assert expected - inside == set()
    assert not {name for name in inside if "__pycache__" in name or name.endswith(".pyc")}


def test_the_wheel_declares_the_command_and_the_pytest_plugin(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    (entry_points,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = archive.read(entry_points).decode()
    assert "schemawire = schemawire.cli:main" in text
    assert "schemawire.evals.pytest_plugin = schemawire.evals.pytest_plugin" in text


def test_twine_check_strict_passes_on_the_sdist_and_wheel(dist: Path) -> None:
    files = sorted(str(path) for path in dist.iterdir())
    assert len(files) == 2
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
