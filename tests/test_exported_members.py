"""The public API: one flat, sorted ``__all__`` whose every name resolves, loaded on first use."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import schemawire


def test_all_is_sorted_and_unique() -> None:
    assert schemawire.__all__ == sorted(schemawire.__all__, key=_isort_style)
    assert len(set(schemawire.__all__)) == len(schemawire.__all__)


def _isort_style(name: str) -> tuple[int, str]:
    # CONSTANTS, then Classes, then functions: the order ruff keeps (RUF022).
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_every_exported_name_resolves_to_its_home_modules_object() -> None:
    for name in schemawire.__all__:
        value = getattr(schemawire, name)
        home = getattr(value, "__module__", None)
        if isinstance(home, str) and home.startswith("schemawire."):
            assert name in getattr(importlib.import_module(home), "__all__", ()), name


def test_every_name_the_facade_can_load_is_in_all_and_no_other() -> None:
    loadable = set(schemawire._MODULE_OF)
    assert loadable == set(schemawire.__all__) - {"__version__"}
    assert set(dir(schemawire)) >= set(schemawire.__all__)


def test_the_names_for_type_checkers_are_the_names_loaded() -> None:
    # The TYPE_CHECKING imports must name the same things from the same modules as _HOMES.
    tree = ast.parse(Path(schemawire.__file__).read_text(encoding="utf-8"))
    (block,) = [node for node in tree.body if isinstance(node, ast.If)]
    imported = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == schemawire._MODULE_OF


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        schemawire.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018


def test_no_exported_name_is_also_a_submodule() -> None:
    # Importing a submodule binds its name on the package, which would replace the export.
    submodules = {module.name for module in pkgutil.iter_modules(schemawire.__path__)}
    assert not submodules & set(schemawire.__all__)


def test_importing_the_package_loads_none_of_its_layers() -> None:
    code = (
        "import sys, schemawire\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('schemawire.'))\n"
        "heavy = [m for m in ('mcp', 'httpx2', 'jsonschema_rs', 'anyio') if m in sys.modules]\n"
        "print(loaded, heavy)"
    )
    printed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert printed.strip() == "['schemawire._version'] []"


def test_every_module_declares_what_it_exports() -> None:
    for info in pkgutil.walk_packages(schemawire.__path__, prefix="schemawire."):
        module = importlib.import_module(info.name)
        if info.ispkg:
            continue
        exported = getattr(module, "__all__", None)
        assert exported is not None, f"{info.name} has no __all__"
        assert all(hasattr(module, name) for name in exported), info.name
