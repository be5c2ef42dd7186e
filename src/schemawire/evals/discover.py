"""Where cases live: ``evals/*.json`` at the root of a repository (the folder with a
``schemawire.toml``, or a ``pyproject.toml`` with ``[tool.schemawire]``: `find_root`).

The same rule serves ``schemawire eval`` (with no paths) and the pytest plugin, so that both
run the same cases and neither mistakes other JSON (fixtures, test data) for one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from schemawire.errors import UsageError
from schemawire.schema.config import find_root

__all__ = ["CASES_FOLDER", "find_cases", "is_case_file"]

CASES_FOLDER = "evals"


def is_case_file(path: Path) -> bool:
    """Whether ``path`` is where a case lives: a ``.json`` file directly in a folder named
    ``evals`` at the root of a repository, as `find_cases` finds them (the root is the nearest
    folder with settings, `find_root`: the ``evals`` folder's must be the one beside it)."""
    folder = path.parent
    if path.suffix != ".json" or folder.name != CASES_FOLDER:
        return False
    # find_root returns its start when no folder has settings: starting in evals/ (not beside
    # it) tells "the folder beside evals/ has settings" from "none has".
    return find_root(folder) == folder.resolve().parent


def find_cases(paths: Iterable[str | Path] = (), start: str | Path = ".") -> list[Path]:
    """The case files ``paths`` name: each file as it is, each folder's ``*.json`` (a
    repository root's ``evals/*.json``); with no paths, ``evals/*.json`` of the repository that
    holds ``start``.

    Raises:
        UsageError: a path that does not exist, or no cases at all.
    """
    given = [Path(p) for p in paths] or [find_root(start) / CASES_FOLDER]
    found: list[Path] = []
    for path in given:
        if path.is_dir():
            found += _in_folder(path)
        elif path.is_file():
            found.append(path)
        else:
            raise UsageError(f"{path}: no such case file or folder")
    if not found:
        shown = ", ".join(str(p) for p in given)
        raise UsageError(f"no case files (*.json) in {shown}")
    return list(dict.fromkeys(found))


def _in_folder(folder: Path) -> list[Path]:
    cases = sorted(folder.glob("*.json"))
    if not cases and (folder / CASES_FOLDER).is_dir():
        cases = sorted((folder / CASES_FOLDER).glob("*.json"))
    return cases
