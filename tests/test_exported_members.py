"""The public API: one flat, sorted ``__all__`` whose every name resolves, loaded on first use."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

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
    loadable = set(schemawire._NAMES.module_of)
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
    assert imported == schemawire._NAMES.module_of


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
    assert printed.strip() == "['schemawire._lazy', 'schemawire._version'] []"


def test_every_module_declares_what_it_exports() -> None:
    for info in pkgutil.walk_packages(schemawire.__path__, prefix="schemawire."):
        module = importlib.import_module(info.name)
        if info.ispkg:
            continue
        exported = getattr(module, "__all__", None)
        assert exported is not None, f"{info.name} has no __all__"
        assert all(hasattr(module, name) for name in exported), info.name


# The facade and the sub-facades docs/architecture.md names under "Public API", in its table.
ARCHITECTURE = Path(__file__).parent.parent / "docs" / "architecture.md"


def _documented_facades() -> list[str]:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Public API", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(schemawire[\w.]*)` \|", section, flags=re.MULTILINE)


def _public_modules() -> list[str]:
    found = pkgutil.walk_packages(schemawire.__path__, prefix="schemawire.")
    names = [info.name for info in found]
    return ["schemawire"] + [name for name in names if "._" not in name]


def _assigned_names(module: ModuleType) -> set[str]:
    # A constant has no __module__ of its own: it is defined where the module assigns it.
    tree = ast.parse(inspect.getsource(module))
    targets = [
        target
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
    ]
    return {target.id for target in targets if isinstance(target, ast.Name)}


def _defined_public_names(module: ModuleType) -> list[str]:
    assigned = _assigned_names(module)
    defined = []
    for name in getattr(module, "__all__", ()):  # a package may hold modules and export none
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            if value.__module__ == module.__name__:
                defined.append(name)
        elif name in assigned:
            defined.append(name)
    return defined


def _facade_offers(facade: ModuleType, name: str, value: object) -> bool:
    return name in facade.__all__ and getattr(facade, name) is value


def test_the_documented_facades_are_packages_and_modules_with_an_all() -> None:
    facades = _documented_facades()
    assert facades[0] == "schemawire"
    assert len(set(facades)) == len(facades)
    for name in facades:
        assert "._" not in name, name
        assert isinstance(importlib.import_module(name).__all__, list), name


def test_every_public_name_is_importable_from_a_documented_facade() -> None:
    facades = [importlib.import_module(name) for name in _documented_facades()]
    unreachable = []
    for module_name in _public_modules():
        module = importlib.import_module(module_name)
        for name in _defined_public_names(module):
            value = getattr(module, name)
            if not any(_facade_offers(facade, name, value) for facade in facades):
                unreachable.append(f"{module_name}.{name}")
    assert unreachable == []


def test_every_facade_name_resolves_and_no_name_is_also_a_submodule() -> None:
    for facade_name in _documented_facades():
        facade = importlib.import_module(facade_name)
        assert all(hasattr(facade, name) for name in facade.__all__), facade_name
        if hasattr(facade, "__path__"):
            submodules = {module.name for module in pkgutil.iter_modules(facade.__path__)}
            assert not submodules & set(facade.__all__), facade_name


def test_a_lazy_sub_facade_loads_nothing_until_a_name_is_asked_for() -> None:
    code = (
        "import sys, schemawire.schema, schemawire.flows, schemawire.host\n"
        "print(sorted(m for m in sys.modules if m.startswith('schemawire.')))"
    )
    printed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    loaded = "['schemawire._lazy', 'schemawire._version', 'schemawire.flows', 'schemawire.host'"
    assert printed.strip() == loaded + ", 'schemawire.schema']"
