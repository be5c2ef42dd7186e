"""The layers of docs/architecture.md hold: no module imports a layer above its own, and no
package's modules import each other in a cycle (the contracts in pyproject.toml, run by
``lint-imports`` as ``make check`` runs it)."""

from __future__ import annotations

import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import schemawire

ROOT = Path(__file__).parents[1]
PACKAGE = Path(schemawire.__file__).parent


def lint_imports(source: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the project's contracts, over the ``schemawire`` under ``source``."""
    command = [
        sys.executable,
        "-c",
        "from importlinter.cli import lint_imports_command; lint_imports_command()",
        "--no-cache",
        "--no-logo",
        str(ROOT / "pyproject.toml"),
    ]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "", "PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )


def test_every_contract_is_kept() -> None:
    checked = lint_imports(PACKAGE.parent)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "2 kept, 0 broken" in checked.stdout


def test_no_contract_ignores_an_import() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    assert [contract["id"] for contract in contracts if contract.get("ignore_imports")] == []


def copy_of_the_package(tmp_path: Path) -> Path:
    copy = tmp_path / "schemawire"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_an_import_of_a_higher_layer_breaks_the_layers_contract(tmp_path: Path) -> None:
    copy = copy_of_the_package(tmp_path)
    with (copy / "types.py").open("a", encoding="utf-8") as module:
        module.write("\nfrom schemawire.host import loop as _loop  # noqa\n")
    checked = lint_imports(tmp_path)
    assert checked.returncode == 1
    assert "schemawire.types -> schemawire.host.loop" in checked.stdout


def test_a_top_level_module_without_a_layer_breaks_the_layers_contract(tmp_path: Path) -> None:
    copy = copy_of_the_package(tmp_path)
    (copy / "newcomer.py").write_text('"""Not given a layer."""\n', encoding="utf-8")
    checked = lint_imports(tmp_path)
    assert checked.returncode == 1
    assert "schemawire.newcomer" in checked.stdout


def test_a_cycle_inside_a_package_breaks_the_acyclic_contract(tmp_path: Path) -> None:
    copy = copy_of_the_package(tmp_path)
    with (copy / "schema" / "_files.py").open("a", encoding="utf-8") as module:
        module.write("\nfrom schemawire.schema import repository as _repository  # noqa\n")
    checked = lint_imports(tmp_path)
    assert checked.returncode == 1
    assert "No cycles are allowed in schemawire.schema" in checked.stdout


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def test_the_architecture_page_quotes_the_layers_contract_as_it_is() -> None:
    page = ARCHITECTURE.read_text(encoding="utf-8")
    (quoted,) = re.findall(r"```toml\n(.*?)```", page, flags=re.DOTALL)
    assert 'id = "layers"' in quoted
    assert quoted in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_the_architecture_page_names_every_top_level_module() -> None:
    page = ARCHITECTURE.read_text(encoding="utf-8")
    layers, layout = page.split("## The layers")[1].split("## Package layout")
    in_layers = set(re.findall(r"`([\w.]+)`", layers))
    rows = set(re.findall(r"^\| `(\w+)(?:\.py|/)` \|", layout, flags=re.MULTILINE))
    modules = {info.name for info in pkgutil.iter_modules([str(PACKAGE)])}
    assert modules - in_layers == set()
    assert modules - rows == {"__main__", "_version"}
