"""`check_repository`: the CI gate in one pass.

Repository rules, compilation, lint and fixtures run over every file, the committed adapters are
compared with a fresh export, and a repository that serves tools has each implementation
imported and compared with its tool's schema; with ``since``, every schema is also compared with
a git revision, and a change without the ``x-version`` bump it calls for is a finding. Each
problem becomes a `Finding` located at a line and column, and rules switched off in the settings
are dropped.

A check that checked nothing never passes: a repository without a schema file is refused unless
that is allowed, and the fixtures of a schema that cannot be used are reported as not run. One
mistake is one finding: a schema that cannot be read or compiled is reported where the cause is
written, every schema that depends on it once after it (SW017), and no adapter made from it is
compared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from schemawire.errors import UsageError
from schemawire.project.export import AdapterStatus, adapter_status
from schemawire.schema._breakage import Unusable, consequence, restatements, unusable_files
from schemawire.schema._positions import locate
from schemawire.schema.config import Config
from schemawire.schema.fixtures import FixtureReport, NotRun, check_fixtures
from schemawire.schema.implementations import implementation_findings
from schemawire.schema.lint import lint_repository
from schemawire.schema.repository import Repository
from schemawire.schema.rules import Finding, Severity, rule

__all__ = ["CheckReport", "check_repository", "locate"]


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The outcome of `check_repository`.

    Attributes:
        root: the repository root.
        schemas: how many schema files of each kind were found.
        fixtures_checked: how many fixture instances ran.
        fixtures_passed: how many behaved as their folder says.
        findings: every finding: causes first (the schemas' own problems), then what follows
            from them (SW017), then fixtures, flows, adapters and implementations; each group by
            file, line and rule.
        adapters: how many committed adapter files were compared with a fresh export.
        fixtures_not_run: the fixture files that did not run, because their schema cannot be
            used.
        adapters_not_compared: the adapter files that were not compared, because a schema they
            are made from cannot be used.
    """

    root: Path
    schemas: dict[str, int]
    fixtures_checked: int
    fixtures_passed: int
    findings: tuple[Finding, ...]
    adapters: int = 0
    fixtures_not_run: tuple[NotRun, ...] = ()
    adapters_not_compared: tuple[str, ...] = ()

    @property
    def fixtures_not_run_instances(self) -> int:
        """How many fixture instances did not run."""
        return sum(item.instances for item in self.fixtures_not_run)

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
    allow_empty: bool | None = None,
) -> CheckReport:
    """Check the repository that holds ``start``: files, references, lint, fixtures, adapters,
    flows and ``[serve.tools]`` implementations; with ``since``, the changes since that git
    revision against each file's ``x-version`` (SW401, SW402).

    Args:
        start: a directory in the repository (its root is found upwards).
        config: settings to use instead of the repository's own.
        lint: run the lint rules.
        fixtures: run the fixtures.
        since: a git revision to compare every schema with.
        allow_empty: pass a repository without any schema file (default: ``[repository]
            allow-empty``, else False).

    Raises:
        ConfigError: the repository's settings cannot be used.
        UsageError: the repository has no schema file and that is not allowed; or ``since`` is
            given, but git is missing, the repository is not in a git work tree, or ``since``
            names no commit.
    """
    repository = Repository.load(start, config=config)
    _refuse_empty(repository, allow_empty)
    findings = [*repository.findings, *(lint_repository(repository) if lint else ())]
    unusable = unusable_files(repository, tuple(findings))
    findings.extend(_breakage_findings(unusable.values()))
    fixture_report = FixtureReport(0, 0, ())
    if fixtures:
        fixture_report = check_fixtures(repository, unusable=unusable)
        findings.extend(fixture_report.findings)
    statuses = _adapter_statuses(repository, unusable)
    findings.extend(_adapter_findings(statuses))
    findings.extend(_flow_findings(repository))
    findings.extend(implementation_findings(repository, unusable))
    if since is not None:
        from schemawire.schema.diff import diff_since, version_findings  # only for --since

        findings.extend(version_findings(diff_since(repository, since)))
    settings = repository.config.lint
    kept = _without_restatements(f for f in findings if not settings.ignores(f.rule.id, f.file))
    return CheckReport(
        root=repository.root,
        schemas=dict(Counter(file.kind for file in repository.files)),
        fixtures_checked=fixture_report.checked,
        fixtures_passed=fixture_report.passed,
        findings=tuple(sorted(locate(kept, repository.root), key=_reading_order)),
        adapters=sum(1 for status in statuses if not status.not_compared),
        fixtures_not_run=fixture_report.not_run,
        adapters_not_compared=tuple(s.file for s in statuses if s.not_compared),
    )


def _refuse_empty(repository: Repository, allow_empty: bool | None) -> None:
    allowed = repository.config.allow_empty if allow_empty is None else allow_empty
    if repository.files or allowed:
        return
    config = repository.config
    folders = ", ".join(f"{folder}/" for folder in config.kind_dirs().values())
    settings = f" (as {config.source.name} says)" if config.source else ""
    # A repository with settings is one being started: say what to write; else how to start.
    start = (
        f"Write a tool's input schema as {config.kind_dirs()['tools']}/NAME.json"
        if config.source
        else "Start one with `schemawire init`, or point check at the repository's directory"
    )
    raise UsageError(
        f"no schema file in {repository.root}: looked in {folders}{settings}. {start}, or pass "
        "--allow-empty (allow-empty = true under [repository]) if none is expected"
    )


def _breakage_findings(unusable: Iterable[Unusable]) -> Iterator[Finding]:
    """SW014 once where each compilation failure is written, and SW017 once for each file that
    cannot be used because of another (the other findings of broken files are the
    repository's own)."""
    reported: set[tuple[str, str]] = set()
    for verdict in unusable:
        for cause in verdict.causes:
            if cause.rule.id == "SW014" and (cause.file, cause.pointer) not in reported:
                reported.add((cause.file, cause.pointer))
                yield cause
        if verdict.inherited:
            yield consequence(verdict)


def _without_restatements(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` without the metaschema violations (SW004) that another finding states in
    clearer words at the same place (SW106 for ``"type": "int"``, say)."""
    kept = list(findings)
    said = restatements(kept)
    return [f for f in kept if f.rule.id != "SW004" or (f.file, f.pointer) not in said]


def _flow_findings(repository: Repository) -> Iterator[Finding]:
    """SW301 for each flow under ``flows/`` that cannot run as written."""
    if not (repository.root / "flows").is_dir():
        return iter(())
    # Only here: a flow's routes load the gates (about 0.1 s), which nothing else here needs.
    from schemawire.flows.findings import flow_findings

    return flow_findings(repository)


def _adapter_statuses(repository: Repository, unusable: dict[str, Unusable]) -> list[AdapterStatus]:
    folder = repository.root / repository.config.adapters
    if not folder.is_dir():
        return []
    return list(adapter_status(repository, folder, unusable=unusable))


def _adapter_findings(statuses: list[AdapterStatus]) -> Iterator[Finding]:
    """SW015 for each committed adapter that a fresh export would change; SW016 for each whose
    payloads a target would refuse."""
    for status in statuses:
        if status.stale:
            pointer = str(status.patch[0]["path"]) if status.patch else ""
            yield Finding(rule("SW015"), status.file, pointer, status.detail, _refresh(status))
        for loss in status.refused:
            yield Finding(rule("SW016"), status.file, "", loss.detail)


def _refresh(status: AdapterStatus) -> str:
    """What writes a stale adapter again: its own command, or any adapter's."""
    if not status.command:
        return "the adapters folder holds what schemawire export writes: move this file out"
    return (
        f"run {status.command} (or schemawire export --refresh for every adapter), and commit "
        "the adapters"
    )


# Findings that follow from others come after them: the schemas' own problems first, then the
# schemas that cannot be used because of them, then what is checked against the schemas.
_CONSEQUENCE_RULES = frozenset({"SW017"})
_DERIVED_CATEGORIES = frozenset({"fixtures", "flows", "implementations"})
_DERIVED_RULES = frozenset({"SW015", "SW016"})


def _reading_order(finding: Finding) -> tuple[int, str, int, int, str]:
    rule_id = finding.rule.id
    if rule_id in _CONSEQUENCE_RULES:
        rank = 1
    elif rule_id in _DERIVED_RULES or finding.rule.category in _DERIVED_CATEGORIES:
        rank = 2
    else:
        rank = 0
    return (rank, finding.file, finding.line or 0, finding.column or 0, rule_id)
