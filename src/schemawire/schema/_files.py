"""Finding a repository's files, and naming them.

Discovery never leaves the repository: linked directories are not descended, and a linked file
that resolves outside the root is reported rather than read. Paths are named relative to the
root with ``/`` separators; a file name that is not valid UTF-8 is shown with replacement
characters, so that every report can be written as UTF-8.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["inside", "json_files", "linked_outside", "relpath"]


def relpath(root: Path, path: Path) -> str:
    """``path`` relative to ``root``, with ``/`` separators, printable as UTF-8."""
    text, prefix = os.fspath(path), os.path.join(os.fspath(root), "")
    relative = text[len(prefix) :] if text.startswith(prefix) else os.path.relpath(text, root)
    return (
        relative.replace(os.sep, "/").encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    )


def linked_outside() -> OSError:
    """The error that stands for a file linking outside the repository, which is never read."""
    return OSError(errno.EXDEV, "it links outside the repository, so it is not read")


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
