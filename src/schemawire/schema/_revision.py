"""A repository's schema files as they were at a git revision (``schemawire check --since``).

Only what git has committed is read: the schema folders of the revision are listed with
``git ls-tree``, each JSON blob is written to a scratch directory with ``git cat-file``, and that
directory is loaded as a repository with today's settings. Links and submodules are left out;
every git command is bounded by a timeout.
"""

from __future__ import annotations

import posixpath
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from schemawire._json import quoted
from schemawire.errors import UsageError
from schemawire.schema.repository import Repository

__all__ = ["repository_at"]

_GIT_TIMEOUT = 60.0


def repository_at(repository: Repository, rev: str, scratch: Path) -> Repository:
    """The repository's schema files as they were at git revision ``rev``, written under
    ``scratch`` and loaded with today's settings.

    Raises:
        UsageError: git is missing, the repository is not in a git work tree, or ``rev`` names
            no commit.
    """
    top = Path(_git(repository.root, "rev-parse", "--show-toplevel").decode().strip())
    _check_revision(top, rev)
    try:
        prefix = repository.root.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"{repository.root} is not inside the git work tree {top}") from None
    folders = [
        posixpath.normpath(posixpath.join(prefix, folder))
        for folder in repository.config.kind_dirs().values()
    ]
    for path, object_id in _blobs(_git(top, "ls-tree", "-r", "-z", rev, "--", *folders)):
        target = scratch / posixpath.relpath(path, prefix)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_git(top, "cat-file", "blob", object_id))
    return Repository.load(scratch, config=replace(repository.config, root=scratch))


def _check_revision(top: Path, rev: str) -> None:
    if rev.startswith("-"):
        raise UsageError(f"{quoted(rev)} is not a git revision")
    try:
        _git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except UsageError:
        raise UsageError(f"{quoted(rev)} names no commit in {top}") from None


def _blobs(listing: bytes) -> Iterator[tuple[str, str]]:
    """``(path, object id)`` of each JSON file in ``git ls-tree -r -z`` output; links and
    submodules are left out."""
    for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = entry.partition("\t")
        mode, _, rest = meta.partition(" ")
        kind, _, object_id = rest.partition(" ")
        if kind == "blob" and mode in ("100644", "100755") and path.endswith(".json"):
            yield path, object_id


def _git(cwd: Path, *args: str) -> bytes:
    command = ["git", "-C", str(cwd), *args]
    try:
        done = subprocess.run(command, capture_output=True, timeout=_GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise UsageError("git is not installed; --since reads the older schemas with it") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"git {args[0]} did not finish in {_GIT_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]} failed: {said[-1] if said else done.returncode}")
    return done.stdout
