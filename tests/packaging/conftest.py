"""The package as users get it: the sdist and wheel `python -m build` makes, and fresh venvs
that install the wheel outside the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
# The framework and OpenTelemetry versions the tests run against (make installs with them too).
CONSTRAINTS = ROOT / "tests" / "frameworks.txt"
BUILD_TIMEOUT = 300
INSTALL_TIMEOUT = 600


def clean_environment() -> dict[str, str]:
    """The environment without anything that would let a venv see the source tree or this venv."""
    hidden = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV"}
    return {key: value for key, value in os.environ.items() if key not in hidden}


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the sdist and the wheel, built as a release is (isolated build env)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=BUILD_TIMEOUT,
    )
    return out


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("schemawire-*.whl")
    return found


def fresh_venv(where: Path, requirement: str) -> Path:
    """A new venv at ``where`` with ``requirement`` installed (pip's cache used, the frameworks'
    versions constrained); its bin folder."""
    venv.EnvBuilder(with_pip=True).create(where)
    bin_dir = where / ("Scripts" if os.name == "nt" else "bin")
    subprocess.run(
        [
            str(bin_dir / "python"),
            *("-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"),
            *("-c", str(CONSTRAINTS), requirement),
        ],
        check=True,
        capture_output=True,
        cwd=where,
        env=clean_environment(),
        timeout=INSTALL_TIMEOUT,
    )
    return bin_dir
