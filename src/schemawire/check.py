"""`check_repository`: the CI gate in one pass.

Repository rules, compilation, lint and fixtures run over every file, and the committed adapters
are compared with a fresh export; with ``since``, every schema is also compared with a git
revision, and a change without the ``x-version`` bump it calls for is a finding. Each problem
becomes a `Finding` located at a line and column, and rules switched off in the settings are
dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from schemawire._jsonpos import nearest_offset, pointer_offsets, position
from schemawire.errors import SchemaError
from schemawire.project.export import AdapterStatus, adapter_status
from schemawire.schema.config import Config
from schemawire.schema.diff import diff_since, version_findings
from schemawire.schema.fixtures import check_fixtures
from schemawire.schema.lint import lint_repository
from schemawire.schema.repository import Repository, SchemaFile
from schemawire.schema.rules import Finding, Severity, rule
from schemawire.schema.validator import compile_schema

__all__ = ["CheckReport", "check_repository", "locate"]


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The outcome of `check_repository`.

    Attributes:
        root: the repository root.
        schemas: how many schema files of each kind were found.
        fixtures_checked: how many fixture instances ran.
        fixtures_passed: how many behaved as their folder says.
        adapters: how many committed adapter files were compared with a fresh export.
        findings: every finding, sorted by file, line and rule.
    """

    root: Path
    schemas: dict[str, int]
    fixtures_checked: int
    fixtures_passed: int
    findings: tuple[Finding, ...]
    adapters: int = 0

    def count(self, severity: Severity) -> int:
        """How many findings have ``severity``."""
        return sum(1 for finding in self.findings if finding.severity == severity)

    def failed(self, fail_on: Severity = Severity.ERROR) -> bool:
        """Whether any finding is at least as severe as ``fail_on``."""
        if fail_on == Severity.WARNING:
            return bool(self.findings)
        return self.count(Severity.ERROR) > 0


def check_repository(
    start: str | Path = ".",
    *,
    config: Config | None = None,
    lint: bool = True,
    fixtures: bool = True,
    since: str | None = None,
) -> CheckReport:
    """Check the repository that holds ``start``: files, references, lint, fixtures, adapters
    and flows; with
    ``since``, the changes since that git revision against each file's ``x-version`` (SW401,
    SW402).

    Raises:
        ConfigError: the repository's settings cannot be used.
        UsageError: ``since`` is given, but git is missing, the repository is not in a git work
            tree, or ``since`` names no commit.
    """
    repository = Repository.load(start, config=config)
    findings = [*repository.findings, *_compile_all(repository)]
    checked = passed = 0
    if lint:
        findings.extend(lint_repository(repository))
    if fixtures:
        report = check_fixtures(repository)
        findings.extend(report.findings)
        checked, passed = report.checked, report.passed
    statuses = _adapter_statuses(repository)
    findings.extend(_adapter_findings(statuses))
    findings.extend(_flow_findings(repository))
    if since is not None:
        findings.extend(version_findings(diff_since(repository, since)))
    settings = repository.config.lint
    kept = [f for f in findings if not settings.ignores(f.rule.id, f.file)]
    located = locate(kept, repository.root)
    return CheckReport(
        root=repository.root,
        schemas=dict(Counter(file.kind for file in repository.files)),
        fixtures_checked=checked,
        fixtures_passed=passed,
        findings=tuple(sorted(located, key=_reading_order)),
        adapters=len(statuses),
    )


def _flow_findings(repository: Repository) -> Iterator[Finding]:
    """SW301 for each flow under ``flows/`` that cannot run as written."""
    if not (repository.root / "flows").is_dir():
        return iter(())  # and the host's modules are not even imported
    from schemawire.host.flow import flow_findings  # flows build on the host, above schemas

    return flow_findings(repository)


def _compile_all(repository: Repository) -> Iterator[Finding]:
    """SW014 for each schema the validator cannot compile, reported where the cause is written.

    A file that fails because a subschema it references fails (a bad pattern in a shared
    definition, say) is not blamed: the referenced subschema is, once. Files with problems
    reported already (unreadable, metaschema, $id, refs) are not compiled at all.
    """
    broken = {f.file for f in repository.findings if f.rule.id in _BREAKS_COMPILATION}
    reported: set[tuple[str, str]] = set()
    for file in repository.files:
        if not file.usable or file.relpath in broken:
            continue
        try:
            repository.validator(file)
        except SchemaError as error:
            causes = list(_failing_references(repository, file)) or [
                (file.relpath, "", error.message)
            ]
            for relpath, pointer, message in causes:
                if (relpath, pointer) not in reported:
                    reported.add((relpath, pointer))
                    yield Finding(rule("SW014"), relpath, pointer, message)


_BREAKS_COMPILATION = frozenset({"SW001", "SW002", "SW003", "SW004", "SW006", "SW011"})
_FRAGMENT_SAFE = "/~$!&'()*+,;=:@"


def _failing_references(repository: Repository, file: SchemaFile) -> Iterator[tuple[str, str, str]]:
    """``(file, pointer, why)`` of each subschema that ``file`` references and that does not
    compile on its own."""
    for reference in repository.references:
        if reference.file != file.relpath or not reference.fragment.startswith("/"):
            continue
        target = repository.find(reference.target)
        if target is None:
            continue
        wrapper = {"$ref": f"{target.uri}#{quote(reference.fragment, safe=_FRAGMENT_SAFE)}"}
        try:
            compile_schema(wrapper, registry=repository.registry, dialect=target.dialect)
        except SchemaError as error:
            yield target.relpath, reference.fragment, error.message


def _adapter_statuses(repository: Repository) -> list[AdapterStatus]:
    folder = repository.root / repository.config.adapters
    return list(adapter_status(repository, folder)) if folder.is_dir() else []


def _adapter_findings(statuses: list[AdapterStatus]) -> Iterator[Finding]:
    """SW015 for each committed adapter that a fresh export would change; SW016 for each whose
    payloads a target would refuse."""
    for status in statuses:
        if status.stale:
            pointer = str(status.patch[0]["path"]) if status.patch else ""
            yield Finding(rule("SW015"), status.file, pointer, status.detail,
                          hint="run schemawire export, and commit the adapters")  # fmt: skip
        for loss in status.refused:
            yield Finding(rule("SW016"), status.file, "", loss.detail)


def locate(findings: Iterable[Finding], root: Path) -> list[Finding]:
    """``findings`` with a line and column for each pointer, read from the files under ``root``.

    A pointer to something absent (a missing property) takes the place of its nearest ancestor.
    """
    offsets_by_file: dict[str, tuple[str, dict[str, int]] | None] = {}
    located: list[Finding] = []
    for finding in findings:
        if finding.line is not None:
            located.append(finding)
            continue
        if finding.file not in offsets_by_file:
            offsets_by_file[finding.file] = _offsets(root / finding.file)
        known = offsets_by_file[finding.file]
        if known is None:
            located.append(finding)
            continue
        text, offsets = known
        line, column = position(text, nearest_offset(offsets, finding.pointer))
        located.append(finding.at(line, column))
    return located


def _offsets(path: Path) -> tuple[str, dict[str, int]] | None:
    if path.suffix != ".json" or not path.is_file():
        return None
    try:
        text = path.read_bytes().decode("utf-8", "replace").removeprefix("\ufeff")
    except OSError:
        return None
    return text, pointer_offsets(text)


def _reading_order(finding: Finding) -> tuple[str, int, int, str]:
    return (finding.file, finding.line or 0, finding.column or 0, finding.rule.id)
