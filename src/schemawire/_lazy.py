"""Facades that load each name's module the first time the name is asked for.

A package facade (`schemawire`, `schemawire.schema`, `schemawire.host`, ...) names many things
from many modules; importing them all would make ``import schemawire`` load the MCP SDK and
the validator. `LazyNames` maps each name to its home module and imports that module on first
use. Python calls a module's ``__getattr__`` only for names it does not yet hold, so each name
is imported once and is a plain attribute after.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["LazyNames"]


class LazyNames:
    """The names of one package facade, each loaded from its home module on first use."""

    def __init__(self, package: str, homes: Mapping[str, tuple[str, ...]]) -> None:
        """Name each home module (dotted, absolute) with the names it gives ``package``."""
        self.package = package
        self.module_of = {name: module for module, names in homes.items() for name in names}

    def load(self, name: str) -> Any:
        """The value of ``name``, bound on the package so the next lookup is a plain attribute.

        Raises:
            AttributeError: the facade has no such name.
        """
        module = self.module_of.get(name)
        if module is None:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[self.package], name, value)
        return value
