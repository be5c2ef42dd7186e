"""Breaking changes: what changed between two versions of a schema, and whom each change breaks.

A schema is read by two parties. *Producers* send instances: callers (models) for a tool's input,
the tool for its output, the sending agent for a handoff, whoever writes a checkpoint for state.
*Consumers* read them: the tool, the host and model, the receiving agent, whoever resumes. A
change that narrows what the schema accepts (a new required property, a removed enum value, a
tighter bound) breaks producers: something they sent is refused now. A change that widens it (a
new optional property, a new enum value, a looser bound) breaks consumers: they may receive
values they never handled. Which side counts depends on the file's `Role`: a tool's owner ships
its code with its schema, so a tool's input breaks only its callers and its output only its
readers; a handoff or state schema has a party on each side, so either direction breaks.

This module owns the public surface: the results (`SchemaChange`, `SchemaDiff`,
`RepositoryDiff`), the stable codes of `CHANGE_KINDS` with the side each breaks, roles and the
severity they give a change, the ``x-version`` checks, and the entry points below; an older
state of a repository is read from git by `schemawire.schema._revision`. The structural
comparison (two schemas walked side by side, keyword by keyword, through ``$ref`` within a
document and into the repository's other files) lives in `schemawire.schema._compare` (the
keyword comparers) over `schemawire.schema._side_by_side` (the walk), which reports each
difference by code and pointer; here it becomes a `SchemaChange`. A ``pattern``, ``not`` or
``if``/``then``/``else`` that differs counts as a change both ways, since which one
accepts more cannot be decided in general.

    diff_schemas(old, new, role=...)     two schema documents: their changes
    diff_files(old_path, new_path)       two schema files, references resolved in their repository
    diff_repositories(old, new)          every schema file of two states of a repository
    diff_since(repository, rev)          a repository against itself at a git revision
    version_findings(diff)               SW401 and SW402, for ``schemawire check --since``
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from schemawire._json import load_file
from schemawire.errors import UsageError
from schemawire.schema._compare import differences
from schemawire.schema._files import relpath
from schemawire.schema._revision import repository_at
from schemawire.schema._side_by_side import ABSENT, At, document_root
from schemawire.schema.repository import Repository
from schemawire.schema.rules import Finding, rule
from schemawire.schema.schema_file import SchemaFile

__all__ = [
    "ABSENT",
    "CHANGE_KINDS",
    "ChangeKind",
    "ChangeSeverity",
    "FileStatus",
    "RepositoryDiff",
    "Role",
    "SchemaChange",
    "SchemaDiff",
    "Side",
    "diff_files",
    "diff_repositories",
    "diff_schemas",
    "diff_since",
    "role_of",
    "version_findings",
]


class Side(StrEnum):
    """The party a change can break: producers send instances, consumers read them."""

    PRODUCERS = "producers"
    CONSUMERS = "consumers"
    BOTH = "both"
    NONE = "none"


class ChangeSeverity(StrEnum):
    """Whether a change breaks a party the file's role protects, or only changes annotations."""

    BREAKING = "breaking"
    COMPATIBLE = "compatible"
    ANNOTATION = "annotation"


class Role(StrEnum):
    """What a schema file describes, which decides the side a change must not break."""

    INPUT = "input"
    OUTPUT = "output"
    HANDOFF = "handoff"
    STATE = "state"
    SHARED = "shared"

    @property
    def guarded(self) -> frozenset[Side]:
        """The sides a change of this file must not break."""
        return _GUARDED.get(self, frozenset({Side.PRODUCERS, Side.CONSUMERS}))

    def parties(self, side: Side) -> str:
        """Who ``side`` is for this role, in words: ``callers``, ``the receiving agent``…"""
        producers, consumers = _PARTIES[self]
        named = {Side.PRODUCERS: producers, Side.CONSUMERS: consumers, Side.NONE: "nobody"}
        return named.get(side, f"{producers} and {consumers}")


_GUARDED = {Role.INPUT: frozenset({Side.PRODUCERS}), Role.OUTPUT: frozenset({Side.CONSUMERS})}
_PARTIES = {
    Role.INPUT: ("callers", "the tool"),
    Role.OUTPUT: ("the tool", "the host"),
    Role.HANDOFF: ("the sending agent", "the receiving agent"),
    Role.STATE: ("writers", "readers"),
    Role.SHARED: ("producers", "consumers"),
}
_ROLE_OF_KIND = {"handoffs": Role.HANDOFF, "state": Role.STATE, "common": Role.SHARED}


def role_of(file: SchemaFile) -> Role:
    """The role of a repository file: its kind, and for tools, input or output."""
    if file.kind == "tools":
        return Role.OUTPUT if file.is_output else Role.INPUT
    return _ROLE_OF_KIND.get(file.kind, Role.SHARED)


@dataclass(frozen=True, slots=True)
class ChangeKind:
    """One kind of change, with the side it breaks whatever the file's role.

    Attributes:
        code: stable identifier, such as ``REQUIRED_ADDED``.
        breaks: producers for a narrowing, consumers for a widening, both when it goes both
            ways, none when no instance is accepted or refused differently.
        summary: what it means, in one line.
        annotation: whether only annotations changed (title, description, examples...).
    """

    code: str
    breaks: Side
    summary: str
    annotation: bool = False


_P, _C, _B, _0 = Side.PRODUCERS, Side.CONSUMERS, Side.BOTH, Side.NONE

# One declarative record per kind: the rows are alike by design.
CHANGE_KINDS: dict[str, ChangeKind] = {
    kind.code: kind
    for kind in (
        ChangeKind("SCHEMA_ADDED", _0, "A new schema file."),
        ChangeKind("SCHEMA_REMOVED", _B, "A schema file is gone: nothing may send or read it."),
        ChangeKind(
            "DIALECT_CHANGED",
            _B,
            "$schema names another dialect, which reads keywords differently.",
        ),
        ChangeKind(
            "ID_CHANGED",
            _B,
            "An $id or anchor changed: references to the old one no longer resolve.",
        ),
        ChangeKind("REF_CHANGED", _B, "A $ref that does not resolve here names something else."),
        ChangeKind("TYPE_NARROWED", _P, "The type accepts fewer kinds of value."),
        ChangeKind("TYPE_WIDENED", _C, "The type accepts more kinds of value."),
        ChangeKind("TYPE_CHANGED", _B, "The type accepts other kinds of value."),
        ChangeKind("ENUM_ADDED", _P, "Only the listed values are accepted now."),
        ChangeKind("ENUM_REMOVED", _C, "Any value is accepted, not only the listed ones."),
        ChangeKind("ENUM_VALUE_ADDED", _C, "An enum accepts one more value."),
        ChangeKind("ENUM_VALUE_REMOVED", _P, "An enum no longer accepts a value."),
        ChangeKind("CONST_ADDED", _P, "Only one value is accepted now."),
        ChangeKind("CONST_REMOVED", _C, "Not only the one value is accepted now."),
        ChangeKind("CONST_CHANGED", _B, "Another single value is accepted."),
        ChangeKind("PATTERN_ADDED", _P, "Strings must match a pattern now."),
        ChangeKind("PATTERN_REMOVED", _C, "Strings no longer need to match a pattern."),
        ChangeKind("PATTERN_CHANGED", _B, "Strings must match another pattern."),
        ChangeKind(
            "FORMAT_ADDED", _P, "Strings must have a format now (schemawire asserts formats)."
        ),
        ChangeKind("FORMAT_REMOVED", _C, "Strings no longer need a format."),
        ChangeKind("FORMAT_CHANGED", _B, "Strings must have another format."),
        ChangeKind(
            "BOUND_TIGHTENED", _P, "A minimum, maximum, length, count or multipleOf accepts less."
        ),
        ChangeKind(
            "BOUND_LOOSENED", _C, "A minimum, maximum, length, count or multipleOf accepts more."
        ),
        ChangeKind("BOUND_CHANGED", _B, "A multipleOf accepts other numbers."),
        ChangeKind("UNIQUE_ITEMS_ADDED", _P, "Array items must be unique now."),
        ChangeKind("UNIQUE_ITEMS_REMOVED", _C, "Array items may repeat now."),
        ChangeKind("REQUIRED_ADDED", _P, "A property must be present now."),
        ChangeKind("REQUIRED_REMOVED", _C, "A property may be missing now."),
        ChangeKind("PROPERTY_ADDED", _C, "A closed object accepts a new property."),
        ChangeKind("PROPERTY_REMOVED", _P, "A closed object no longer accepts a property."),
        ChangeKind(
            "PROPERTY_DECLARED",
            _0,
            "An open object describes a property it accepted "
            "anyway; what that asks of its value is listed beside it.",
        ),
        ChangeKind(
            "PROPERTY_UNDECLARED",
            _0,
            "An open object no longer describes a property; what that frees is listed beside it.",
        ),
        ChangeKind(
            "ADDITIONAL_PROPERTIES_CLOSED",
            _P,
            "An object no longer accepts properties it does not name.",
        ),
        ChangeKind(
            "ADDITIONAL_PROPERTIES_OPENED", _C, "An object accepts properties it does not name."
        ),
        ChangeKind(
            "FALSE_SCHEMA_ADDED", _P, "A subschema became false: nothing is accepted there."
        ),
        ChangeKind("FALSE_SCHEMA_REMOVED", _C, "A subschema was false and accepts values now."),
        ChangeKind("CONTAINS_ADDED", _P, "An array must contain a matching item now."),
        ChangeKind("CONTAINS_REMOVED", _C, "An array no longer needs a matching item."),
        ChangeKind("COMBINATOR_ADDED", _P, "Values must match an anyOf or oneOf now."),
        ChangeKind("COMBINATOR_REMOVED", _C, "Values no longer need to match an anyOf or oneOf."),
        ChangeKind("ANY_OF_BRANCH_ADDED", _C, "An anyOf or oneOf has one more alternative."),
        ChangeKind("ANY_OF_BRANCH_REMOVED", _P, "An anyOf or oneOf lost an alternative."),
        ChangeKind("ALL_OF_BRANCH_ADDED", _P, "An allOf has one more schema to satisfy."),
        ChangeKind("ALL_OF_BRANCH_REMOVED", _C, "An allOf has one schema fewer to satisfy."),
        ChangeKind("NOT_ADDED", _P, "Values must not match a schema now."),
        ChangeKind("NOT_REMOVED", _C, "Values may match a schema they could not before."),
        ChangeKind("NOT_CHANGED", _B, "Values must not match another schema."),
        ChangeKind("CONDITIONAL_CHANGED", _B, "An if/then/else changed."),
        ChangeKind("DEPENDENCY_ADDED", _P, "A property asks for another property or schema now."),
        ChangeKind(
            "DEPENDENCY_REMOVED", _C, "A property no longer asks for another property or schema."
        ),
        ChangeKind("DEFINITION_ADDED", _0, "A new $defs entry."),
        ChangeKind(
            "DEFINITION_REMOVED",
            _0,
            "A $defs entry nothing here uses is gone (a file still referencing it fails SW011).",
        ),
        ChangeKind(
            "ANNOTATION_CHANGED",
            _0,
            "A title, description, example, default, comment or other keyword validators ignore.",
            annotation=True,
        ),
    )
}


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One difference between two versions of a schema.

    Attributes:
        code: a key of `CHANGE_KINDS`, such as ``ENUM_VALUE_REMOVED``.
        pointer: where in the schema, from its root; a ``$ref`` followed is a ``$ref`` token
            (``/properties/order_id/$ref/pattern``), as in a validator's keyword location.
        old: the value before (`ABSENT` when there was none).
        new: the value after (`ABSENT` when there is none).
        breaks: the side it can break.
        severity: breaking when that side is one the file's role protects.
    """

    code: str
    pointer: str
    old: Any
    new: Any
    breaks: Side
    severity: ChangeSeverity

    @property
    def kind(self) -> ChangeKind:
        """The kind of change, with its summary."""
        return CHANGE_KINDS[self.code]

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object; ``old`` or ``new`` is left out when absent."""
        fields = {
            "code": self.code,
            "pointer": self.pointer,
            "old": self.old,
            "new": self.new,
            "breaks": str(self.breaks),
            "severity": str(self.severity),
        }
        return {key: value for key, value in fields.items() if value is not ABSENT}


def diff_schemas(
    old: Any,
    new: Any,
    *,
    role: Role = Role.INPUT,
    old_documents: Mapping[str, Any] | None = None,
    new_documents: Mapping[str, Any] | None = None,
) -> tuple[SchemaChange, ...]:
    """Every change from ``old`` to ``new``, classified for a file of ``role``.

    ``old_documents`` and ``new_documents`` map URIs to the documents a ``$ref`` may name (a
    repository's `Repository.documents`); references within each schema always resolve.
    """
    return _changes(
        document_root(old, _PLACEHOLDER_OLD),
        document_root(new, _PLACEHOLDER_NEW),
        role,
        old_documents or {},
        new_documents or {},
    )


_PLACEHOLDER_OLD = "https://schemawire.invalid/old.json"
_PLACEHOLDER_NEW = "https://schemawire.invalid/new.json"


def _changes(
    old: At,
    new: At,
    role: Role,
    old_documents: Mapping[str, Any],
    new_documents: Mapping[str, Any],
) -> tuple[SchemaChange, ...]:
    found = differences(old, new, old_documents, new_documents, _is_annotation)
    return tuple(
        _classified(code, pointer, before, after, role) for code, pointer, before, after in found
    )


def _is_annotation(code: str) -> bool:
    return CHANGE_KINDS[code].annotation


def _classified(code: str, pointer: str, old: Any, new: Any, role: Role) -> SchemaChange:
    kind = CHANGE_KINDS[code]
    return SchemaChange(code, pointer, old, new, kind.breaks, _severity(kind, role))


def _severity(kind: ChangeKind, role: Role) -> ChangeSeverity:
    if kind.annotation:
        return ChangeSeverity.ANNOTATION
    sides = {Side.PRODUCERS, Side.CONSUMERS} if kind.breaks is Side.BOTH else {kind.breaks}
    return ChangeSeverity.BREAKING if sides & role.guarded else ChangeSeverity.COMPATIBLE


# --- files, repositories, versions ---------------------------------------------------------------


class FileStatus(StrEnum):
    """How a schema file changed as a whole."""

    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    UNREADABLE = "unreadable"  # one side is not a usable schema: nothing compared


@dataclass(frozen=True, slots=True)
class SchemaDiff:
    """How one schema file changed.

    Attributes:
        file: its path, relative to the repository root (or as given).
        role: what it describes, which decides which changes are breaking.
        status: added, removed, changed, unchanged or unreadable.
        changes: every change, in document order.
        old_version: its ``x-version`` before, if it had one.
        new_version: its ``x-version`` after, if it has one.
    """

    file: str
    role: Role
    status: FileStatus
    changes: tuple[SchemaChange, ...] = ()
    old_version: str | None = None
    new_version: str | None = None

    def count(self, severity: ChangeSeverity) -> int:
        """How many changes have ``severity``."""
        return sum(1 for change in self.changes if change.severity is severity)

    @property
    def breaking(self) -> bool:
        """Whether a change breaks a side the file's role protects."""
        return self.count(ChangeSeverity.BREAKING) > 0

    @property
    def bump(self) -> str | None:
        """How ``x-version`` moved: major, minor, patch, prerelease, none or lower (None when
        either version is missing or not semantic)."""
        before, after = _semver(self.old_version), _semver(self.new_version)
        if before is None or after is None:
            return None
        if after < before:
            return "lower"
        moved = [name for name, a, b in zip(_PARTS, before, after, strict=True) if b > a]
        if moved:
            return moved[0]
        return "none" if self.old_version == self.new_version else "prerelease"

    @property
    def version_problem(self) -> tuple[str, str] | None:
        """The rule a changed file's ``x-version`` breaks, with the version it should have:
        SW401 when a breaking change came without a major bump (a minor one before 1.0.0),
        SW402 when another change came without any bump."""
        before, bump = _semver(self.old_version), self.bump
        if self.status is not FileStatus.CHANGED or before is None or bump is None:
            return None
        if self.breaking:
            major = bump == "major" or (before[0] == 0 and bump == "minor")
            return None if major else ("SW401", _next_version(before, "major"))
        if bump in ("none", "lower"):
            part = "patch" if self.count(ChangeSeverity.COMPATIBLE) == 0 else "minor"
            return "SW402", _next_version(before, part)
        return None

    def to_json(self) -> dict[str, Any]:
        """The file's changes as a JSON object (the ``--json`` shape)."""
        problem = self.version_problem
        version = {
            "old": self.old_version,
            "new": self.new_version,
            "bump": self.bump,
            "wanted": problem[1] if problem else None,
        }
        return {
            "file": self.file,
            "role": str(self.role),
            "status": str(self.status),
            "x-version": {key: value for key, value in version.items() if value is not None},
            **{str(severity): self.count(severity) for severity in ChangeSeverity},
            "changes": [change.to_json() for change in self.changes],
        }


_PARTS = ("major", "minor", "patch")
_SEMVER_CORE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:[-+]|$)", re.ASCII)


def _semver(version: str | None) -> tuple[int, int, int] | None:
    match = _SEMVER_CORE.match(version) if isinstance(version, str) else None
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _next_version(version: tuple[int, int, int], part: str) -> str:
    major, minor, patch = version
    if part == "major" and major > 0:
        return f"{major + 1}.0.0"
    if part in ("major", "minor"):  # before 1.0.0, a minor bump is the breaking one
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


@dataclass(frozen=True, slots=True)
class RepositoryDiff:
    """How the schema files of a repository changed.

    Attributes:
        files: one `SchemaDiff` per file on either side, by path.
        since: the git revision compared with, for `diff_since`.
    """

    files: tuple[SchemaDiff, ...]
    since: str | None = None

    def count(self, severity: ChangeSeverity) -> int:
        """How many changes, in every file, have ``severity``."""
        return sum(file.count(severity) for file in self.files)

    @property
    def breaking(self) -> bool:
        """Whether any file has a breaking change."""
        return any(file.breaking for file in self.files)

    @property
    def changed(self) -> tuple[SchemaDiff, ...]:
        """The files that were added, removed, changed or could not be compared."""
        return tuple(file for file in self.files if file.status is not FileStatus.UNCHANGED)

    def to_json(self) -> dict[str, Any]:
        """The changes as a JSON object (the ``--json`` shape): unchanged files are counted."""
        fields: dict[str, Any] = {"since": self.since} if self.since is not None else {}
        return {
            **fields,
            "breaking": self.breaking,
            "compared": len(self.files),
            "counts": {str(severity): self.count(severity) for severity in ChangeSeverity},
            "files": [file.to_json() for file in self.changed],
        }


def diff_repositories(
    old: Repository, new: Repository, *, since: str | None = None
) -> RepositoryDiff:
    """Every schema file of ``old`` and ``new``, matched by path and compared; references
    resolve within each repository."""
    before, after = {f.relpath: f for f in old.files}, {f.relpath: f for f in new.files}
    files = tuple(
        _diff_file(before.get(path), after.get(path), old.documents, new.documents)
        for path in sorted(before.keys() | after.keys())
    )
    return RepositoryDiff(files, since)


def _diff_file(
    old: SchemaFile | None,
    new: SchemaFile | None,
    old_documents: Mapping[str, Any],
    new_documents: Mapping[str, Any],
) -> SchemaDiff:
    present = new or old
    if present is None:
        raise UsageError("a file to compare is needed on at least one side")
    role = role_of(present)
    versions = (old.version if old else None, new.version if new else None)
    if old is None or new is None:
        code = "SCHEMA_ADDED" if old is None else "SCHEMA_REMOVED"
        change = _classified(code, "", ABSENT, ABSENT, role)
        status = FileStatus.ADDED if old is None else FileStatus.REMOVED
        return SchemaDiff(present.relpath, role, status, (change,), *versions)
    if not (old.usable and new.usable):
        return SchemaDiff(new.relpath, role, FileStatus.UNREADABLE, (), *versions)
    changes = _changes(
        At(old.document, old.uri), At(new.document, new.uri), role, old_documents, new_documents
    )
    status = FileStatus.CHANGED if changes else FileStatus.UNCHANGED
    return SchemaDiff(new.relpath, role, status, changes, *versions)


def diff_files(old: str | Path, new: str | Path, *, role: Role | None = None) -> RepositoryDiff:
    """Two schema files compared. A reference resolves within the repository each file sits
    in; one the old file's repository lacks resolves in the new one's. The role is the new
    file's in its repository, else read from its name (``*.output.json``, a ``handoffs``,
    ``state`` or ``common`` folder), else a tool's input.

    Raises:
        JSONError: a file is not acceptable JSON.
        OSError: a file cannot be read.
        ConfigError: a repository's settings cannot be used.
    """
    old_path, new_path = Path(old), Path(new)
    old_document, old_documents, old_uri, _ = _in_repository(old_path)
    new_document, new_documents, new_uri, new_role = _in_repository(new_path)
    role = role or new_role or _role_from_name(new_path)
    changes = _changes(
        At(old_document, old_uri),
        At(new_document, new_uri),
        role,
        {**new_documents, **old_documents},
        new_documents,
    )
    status = FileStatus.CHANGED if changes else FileStatus.UNCHANGED
    versions = (_version_of(old_document), _version_of(new_document))
    return RepositoryDiff((SchemaDiff(str(new), role, status, changes, *versions),))


def _in_repository(path: Path) -> tuple[Any, dict[str, Any], str, Role | None]:
    """A schema file's document, the documents of the repository it sits in, its URI, and
    its role there (None when the repository does not hold it)."""
    document = load_file(path)
    repository = Repository.load(path.parent)
    absolute = path.resolve()
    found = (
        repository.find(relpath(repository.root, absolute))
        if absolute.is_relative_to(repository.root)
        else None
    )
    if found is not None and found.usable:
        return found.document, repository.documents, found.uri, role_of(found)
    uri = document_root(document, absolute.as_uri()).base
    return document, repository.documents, uri, None


def _role_from_name(path: Path) -> Role:
    if path.name.endswith(".output.json"):
        return Role.OUTPUT
    return _ROLE_OF_KIND.get(path.parent.name, Role.INPUT)


def _version_of(document: Any) -> str | None:
    version = document.get("x-version") if isinstance(document, dict) else None
    return version if isinstance(version, str) else None


def diff_since(repository: Repository, rev: str) -> RepositoryDiff:
    """Every schema file of ``repository`` compared with the same path at git revision ``rev``
    (the working tree against the commit, as ``git diff rev`` does); files added or removed
    since are listed as such.

    Raises:
        UsageError: git is missing, the repository is not in a git work tree, or ``rev`` names
            no commit.
    """
    with tempfile.TemporaryDirectory(prefix="schemawire-since-") as scratch:
        old = repository_at(repository, rev, Path(scratch))
        return diff_repositories(old, repository, since=rev)


# --- findings for `schemawire check --since` -----------------------------------------------------

_SHOWN = 3


def version_findings(diff: RepositoryDiff) -> Iterator[Finding]:
    """SW401 for each file with a breaking change but no major ``x-version`` bump, SW402 for
    each file with another change but the same ``x-version``; both at the ``x-version``."""
    since = f" since {diff.since}" if diff.since else ""
    for file in diff.files:
        problem = file.version_problem
        if problem is None:
            continue
        rule_id, wanted = problem
        hint = f'set "x-version": "{wanted}"'
        if rule_id == "SW401":
            message = (
                f"breaking{since} for {file.role.parties(_broken_side(file))}: "
                f"{_listed(file)}; x-version {_moved(file)}"
            )
            hint += ", or undo the change"
            yield Finding(rule(rule_id), file.file, "/x-version", message, hint=hint)
        else:
            counts = ", ".join(f"{file.count(s)} {s}" for s in ChangeSeverity if file.count(s))
            message = f"changed{since} ({counts}), but x-version {_moved(file)}"
            yield Finding(rule(rule_id), file.file, "/x-version", message, hint=hint)


def _broken_side(file: SchemaDiff) -> Side:
    sides = {c.breaks for c in file.changes if c.severity is ChangeSeverity.BREAKING}
    return sides.pop() if len(sides) == 1 else Side.BOTH


def _listed(file: SchemaDiff) -> str:
    breaking = [c for c in file.changes if c.severity is ChangeSeverity.BREAKING]
    shown = ", ".join(f"{c.code} at {c.pointer or '/'}" for c in breaking[:_SHOWN])
    return shown + (f" and {len(breaking) - _SHOWN} more" if len(breaking) > _SHOWN else "")


def _moved(file: SchemaDiff) -> str:
    if file.old_version == file.new_version:
        return f"is still {file.old_version}"
    return f"went from {file.old_version} to {file.new_version}"
