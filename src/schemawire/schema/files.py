"""Finding a repository's files, and naming them.

Discovery never leaves the repository: linked directories are not descended, and a linked file
that resolves outside the root is reported rather than read. Paths are named relative to the
root with ``/`` separators; a file name that is not valid UTF-8 is shown with replacement
characters, so that every report can be written as UTF-8.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["inside", "json_files", "relpath"]


def relpath(root: Path, path: Path) -> str:
    """``path`` relative to ``root``, with ``/`` separators, printable as UTF-8."""
    relative = os.path.relpath(path, root).replace(os.sep, "/")
    return relative.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, links resolved, is ``root`` or lies below it."""
    return path.resolve().is_relative_to(root.resolve())


def json_files(
    root: Path,
    directory: Path,
    *,
    suffixes: tuple[str, ...] = (".json",),
    recursive: bool = True,
) -> Iterator[tuple[Path, bool]]:
    """The files under ``directory`` whose names end in ``suffixes``, sorted, each with whether
    it may be read: linked directories are not descended, and a file (or ``directory`` itself)
    that links outside ``root`` may not."""
    if not directory.is_dir():
        return
    directory_inside = inside(root, directory)
    for folder, subfolders, names in os.walk(directory, followlinks=False):
        subfolders.sort()
        if not recursive:
            subfolders.clear()
        for name in sorted(names):
            if name.endswith(suffixes):
                path = Path(folder) / name
                yield path, directory_inside and (not path.is_symlink() or inside(root, path))
