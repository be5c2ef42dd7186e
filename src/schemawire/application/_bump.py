"""`bump_versions`: set the ``x-version`` each schema needs since a git revision.

``schemawire check --since REV`` says which schemas changed without the ``x-version`` bump
their change calls for (SW401 for a breaking change without a major bump, SW402 for another
change without any): this module applies exactly those bumps, each to the version the check
asks for (`SchemaDiff.version_problem`), so the two can never disagree. A shared definition's
change shows in every schema that references it, so each of them is bumped.

Only the ``x-version`` string changes: the rest of each file keeps its bytes, so a file that
`schemawire fmt` wrote stays formatted as it wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemawire._json import quoted
from schemawire._jsonpos import ScanError, iter_nodes
from schemawire.errors import ErrorCode, InputError
from schemawire.schema.diff import ChangeSeverity, SchemaDiff, diff_since
from schemawire.schema.repository import Repository

__all__ = ["BumpReport", "VersionBump", "bump_versions"]

_VERSION_POINTER = "/x-version"
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class VersionBump:
    """One schema's ``x-version``, moved to what ``check --since`` asks for.

    Attributes:
        file: path relative to the repository root, with ``/`` separators.
        old: the ``x-version`` at the revision.
        current: the ``x-version`` in the working tree before the bump.
        new: the ``x-version`` written (or that would be, on a dry run).
        rule: SW401 (a breaking change) or SW402 (another change), the finding it answers.
        breaking: how many of the file's changes are breaking.
    """

    file: str
    old: str
    current: str
    new: str
    rule: str
    breaking: int

    def to_json(self) -> dict[str, Any]:
        """The bump as a JSON object (the ``--json`` shape)."""
        return {
            "file": self.file,
            "rule": self.rule,
            "x-version": {"since": self.old, "was": self.current, "now": self.new},
            "breaking": self.breaking,
        }


@dataclass(frozen=True, slots=True)
class BumpReport:
    """What `bump_versions` did, or would do.

    Attributes:
        root: the repository's root directory.
        since: the git revision the schemas were compared with.
        bumps: one `VersionBump` per schema whose ``x-version`` must move, by path.
        written: whether the files were rewritten (False on a dry run).
    """

    root: Path
    since: str
    bumps: tuple[VersionBump, ...]
    written: bool

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object (the ``--json`` shape)."""
        return {
            "since": self.since,
            "written": self.written,
            "bumps": [bump.to_json() for bump in self.bumps],
        }


def bump_versions(start: str | Path, since: str, *, dry_run: bool = False) -> BumpReport:
    """Set every ``x-version`` that ``schemawire check --since since`` asks for.

    Args:
        start: a directory in the repository (its root is found upwards).
        since: the git revision to compare with, as ``check --since`` takes it.
        dry_run: say what would change, write nothing.

    Raises:
        UsageError: git is missing, the repository is not in a git work tree, or ``since``
            names no commit.
        InputError: a schema to bump has no ``x-version`` string the text can be edited at.
    """
    repository = Repository.load(start)
    diff = diff_since(repository, since)
    bumps = tuple(bump for file in diff.files if (bump := _bump_of(file)) is not None)
    if not dry_run:
        for bump in bumps:
            _rewrite(repository.root / bump.file, bump.new)
    return BumpReport(repository.root, since, bumps, written=not dry_run and bool(bumps))


def _bump_of(file: SchemaDiff) -> VersionBump | None:
    problem = file.version_problem
    if problem is None or file.old_version is None or file.new_version is None:
        return None
    rule_id, wanted = problem
    breaking = file.count(ChangeSeverity.BREAKING)
    return VersionBump(file.file, file.old_version, file.new_version, wanted, rule_id, breaking)


def _rewrite(path: Path, version: str) -> None:
    """Replace the root ``x-version`` string of ``path`` with ``version``, keeping every other
    byte (indentation, key order, line endings, a byte-order mark)."""
    text = path.read_bytes().decode("utf-8")
    bom = _BOM if text.startswith(_BOM) else ""
    body = text.removeprefix(bom)
    start, end = _version_span(body, path)
    path.write_bytes((bom + body[:start] + quoted(version) + body[end:]).encode("utf-8"))


def _version_span(text: str, path: Path) -> tuple[int, int]:
    try:
        offset = next(n.offset for n in iter_nodes(text) if n.pointer == _VERSION_POINTER)
    except (ScanError, StopIteration):
        offset = -1
    match = _STRING.match(text, offset) if offset >= 0 else None
    if match is None:
        raise InputError(
            ErrorCode.SCHEMA_INVALID,
            'no x-version string at the root to bump; add one (such as "x-version": "1.0.0") '
            "or fix the JSON, then run schemawire bump again",
            source=str(path),
            pointer=_VERSION_POINTER,
        )
    return match.start(), match.end()
