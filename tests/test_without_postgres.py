"""Tests that need no database run without the postgres extra: nothing the root conftest loads
imports psycopg (the PostgreSQL fixtures import it only once a test asks for a server)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

# Runs pytest on the gate tests with psycopg unimportable, as on a machine without the extra.
WITHOUT_PSYCOPG = """
import sys
from importlib.abc import MetaPathFinder


class NoPsycopg(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "psycopg":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoPsycopg())
try:
    import psycopg
except ModuleNotFoundError:
    pass
else:
    sys.exit("psycopg is still importable")
import pytest

code = pytest.main(["-q", "-p", "no:cacheprovider", "--collect-only", "tests/gates"])
sys.exit(code or ("psycopg" in sys.modules and "psycopg was imported"))
"""


@pytest.mark.slow
def test_the_gate_tests_are_collected_without_psycopg() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PSYCOPG],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " tests collected" in done.stdout.splitlines()[-1]
