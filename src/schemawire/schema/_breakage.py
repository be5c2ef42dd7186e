"""Which schema files cannot be used, and the one root cause of each.

A schema cannot be used when it cannot be read, is not a schema, breaks its metaschema, has an
unusable ``$id`` or a ``$ref`` that resolves to nothing (`BLOCKING_RULES`), does not compile, or
references a file, or a part of one, that cannot be used. The cause is written in one place; every
other file that cannot be used because of it is a consequence. `schemawire check` reports the
cause once and each dependant once after it (SW017), runs no fixture of a file that cannot be
used and compares no adapter made from one; `schemawire validate` names the file at fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

from schemawire.errors import SchemaError
from schemawire.schema.references import Reference
from schemawire.schema.repository import Repository
from schemawire.schema.rules import Finding, rule
from schemawire.schema.schema_file import SchemaFile
from schemawire.schema.validator import compile_schema

__all__ = [
    "BLOCKING_RULES",
    "RESTATES_METASCHEMA",
    "Unusable",
    "consequence",
    "diagnose",
    "restatements",
    "unusable_files",
]

# Findings that keep a file from being compiled as written.
BLOCKING_RULES = frozenset({"SW001", "SW002", "SW003", "SW004", "SW006", "SW011"})
_FRAGMENT_SAFE = "/~$!&'()*+,;=:@"


@dataclass(frozen=True, slots=True)
class Unusable:
    """A schema file that cannot be used, and why.

    Attributes:
        file: the file.
        causes: the findings that state the root cause, each where it is written: in the file
            itself, or in the file it depends on. The first is the one to fix first.
        reference: the file's own ``$ref`` that leads to the cause, when the cause is in another
            file (None when it is in this one).
    """

    file: SchemaFile
    causes: tuple[Finding, ...]
    reference: Reference | None = None

    @property
    def cause(self) -> Finding:
        """The first root cause."""
        return self.causes[0]

    @property
    def inherited(self) -> bool:
        """Whether the cause is in another file."""
        return self.cause.file != self.file.relpath


def unusable_files(
    repository: Repository, findings: tuple[Finding, ...] | None = None
) -> dict[str, Unusable]:
    """Every file of ``repository`` that cannot be used, by path, with its root causes.

    ``findings`` are the problems found so far (by default the repository's own; add the lint
    findings to have a metaschema violation named by the rule that says it more clearly): a file
    with a blocking one is not compiled again. Every other file is compiled (and cached).
    """
    diagnosis = _Diagnosis(repository, repository.findings if findings is None else findings)
    found = (diagnosis.of(file) for file in repository.files)
    return {verdict.file.relpath: verdict for verdict in found if verdict is not None}


def diagnose(repository: Repository, file: SchemaFile) -> Unusable | None:
    """Why ``file`` cannot be used, or None when it can; only ``file`` and what it references
    are looked at (and compiled)."""
    return _Diagnosis(repository, repository.findings).of(file)


def consequence(unusable: Unusable) -> Finding:
    """The SW017 finding of a file that cannot be used because of another file, at its
    ``$ref`` that leads there."""
    cause = unusable.cause
    pointer = unusable.reference.pointer if unusable.reference is not None else ""
    where = f"{cause.file}#{cause.pointer}" if cause.pointer else cause.file
    return Finding(
        rule("SW017"),
        unusable.file.relpath,
        pointer,
        f"depends on {where}, which cannot be used ({cause.rule.id} {cause.rule.name})",
        hint=f"fix {cause.file} first; this file is checked again then",
    )


# The lint rules that say, in clearer words and at the same place, what a metaschema violation
# (SW004) says: `"type": "int"` is SW106, a default of the wrong type SW107.
RESTATES_METASCHEMA = frozenset({"SW106", "SW107"})


def restatements(findings: Iterable[Finding]) -> dict[tuple[str, str], Finding]:
    """The findings that restate a metaschema violation, by file and pointer."""
    return {
        (f.file, f.pointer): f for f in findings if f.rule.id in RESTATES_METASCHEMA and f.pointer
    }


class _Diagnosis:
    """Works out, once per file, whether it can be used; files depend on files."""

    def __init__(self, repository: Repository, findings: tuple[Finding, ...]) -> None:
        self.repository = repository
        self.blocking: dict[str, Finding] = {}
        clearer = restatements(findings)  # a metaschema violation is named by the clearer one
        for finding in findings:
            if finding.rule.id in BLOCKING_RULES:
                named = clearer.get((finding.file, finding.pointer), finding)
                self.blocking.setdefault(finding.file, named)
        self.references: dict[str, list[Reference]] = {}
        for reference in repository.references:
            self.references.setdefault(reference.file, []).append(reference)
        self.verdicts: dict[str, Unusable | None] = {}
        self.visiting: set[str] = set()

    def of(self, file: SchemaFile) -> Unusable | None:
        """Why ``file`` cannot be used, or None when it can."""
        if file.relpath in self.verdicts:
            return self.verdicts[file.relpath]
        if file.relpath in self.visiting:  # a cycle of references: decided where it started
            return None
        self.visiting.add(file.relpath)
        verdict = self._diagnose(file)
        self.visiting.discard(file.relpath)
        self.verdicts[file.relpath] = verdict
        return verdict

    def _diagnose(self, file: SchemaFile) -> Unusable | None:
        own = self.blocking.get(file.relpath)
        if own is not None:
            return Unusable(file, (own,))
        inherited = self._through_references(file)
        if inherited is not None:
            return inherited
        try:
            self.repository.validator(file)
        except SchemaError as error:
            return self._uncompilable(file, error)
        return None

    def _through_references(self, file: SchemaFile) -> Unusable | None:
        """The first file that ``file`` references and that cannot be used, as its cause."""
        for reference in self.references.get(file.relpath, ()):
            target = self.repository.referenced_file(reference)
            if target is None or target.relpath == file.relpath:
                continue
            verdict = self.of(target)
            if verdict is not None:
                return Unusable(file, verdict.causes, reference)
        return None

    def _uncompilable(self, file: SchemaFile, error: SchemaError) -> Unusable:
        """SW014 where the cause is written: a referenced subschema that does not compile on its
        own (a bad pattern in a shared definition, say), else the file itself."""
        failing = list(_failing_references(self.repository, file))
        if not failing:
            return Unusable(file, (Finding(rule("SW014"), file.relpath, "", error.message),))
        first, reference = failing[0]
        causes = tuple(finding for finding, _ in failing)
        return Unusable(file, causes, reference if first.file != file.relpath else None)


def _failing_references(
    repository: Repository, file: SchemaFile
) -> Iterator[tuple[Finding, Reference]]:
    """SW014 for each subschema that ``file`` references by pointer and that does not compile
    on its own, where the failure is written (followed through the references inside it), with
    ``file``'s reference."""
    for reference in repository.references:
        if reference.file == file.relpath and reference.fragment.startswith("/"):
            failure = _failure_behind(repository, reference, set())
            if failure is not None:
                yield failure, reference


def _failure_behind(
    repository: Repository, reference: Reference, seen: set[tuple[str, str]]
) -> Finding | None:
    """SW014 at the deepest subschema behind ``reference`` that does not compile, if any."""
    target = repository.find(reference.target)
    if target is None or (target.relpath, reference.fragment) in seen:
        return None
    seen.add((target.relpath, reference.fragment))
    message = _compile_error(repository, target, reference.fragment)
    if message is None:
        return None
    inner = (
        r
        for r in repository.references
        if r.file == target.relpath
        and r.fragment.startswith("/")
        and (r.pointer + "/").startswith(reference.fragment + "/")
    )
    for deeper in inner:
        found = _failure_behind(repository, deeper, seen)
        if found is not None:
            return found
    return Finding(rule("SW014"), target.relpath, reference.fragment, message)


def _compile_error(repository: Repository, target: SchemaFile, fragment: str) -> str | None:
    """Why the subschema of ``target`` at ``fragment`` does not compile on its own, if it
    does not."""
    wrapper = {"$ref": f"{target.uri}#{quote(fragment, safe=_FRAGMENT_SAFE)}"}
    try:
        compile_schema(wrapper, registry=repository.registry, dialect=target.dialect)
    except SchemaError as error:
        return error.message
    return None
