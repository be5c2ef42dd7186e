"""The public API: one flat, sorted ``__all__`` that exports exactly the public names."""

from __future__ import annotations

import importlib
import pkgutil

import schemawire


def test_all_is_sorted_and_complete() -> None:
    assert schemawire.__all__ == sorted(schemawire.__all__, key=_isort_style)
    submodules = {module.name for module in pkgutil.iter_modules(schemawire.__path__)}
    # "@py_builtins"...: pytest rewrites the asserts of a package that ships a pytest plugin
    public = {name for name in vars(schemawire) if not name.startswith(("_", "@"))} - submodules
    assert set(schemawire.__all__) - {"__version__"} == public


def _isort_style(name: str) -> tuple[int, str]:
    # CONSTANTS, then Classes, then functions: the order ruff keeps (RUF022).
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_every_module_declares_what_it_exports() -> None:
    for info in pkgutil.walk_packages(schemawire.__path__, prefix="schemawire."):
        module = importlib.import_module(info.name)
        if info.ispkg:
            continue
        exported = getattr(module, "__all__", None)
        assert exported is not None, f"{info.name} has no __all__"
        assert all(hasattr(module, name) for name in exported), info.name
