"""Schema files: the repository of them, their checks, their versions and their differences.

The facade of the schema layer; each name loads its module on first use, so that importing one
part (``schemawire.schema.dialect``, say) does not load the validator or git:

- `Repository` (`repository`): a repository's schema files, found, indexed by ``$id``, with
  their local ``$ref`` registry (`references`) and compiled validators (`validator`);
- `SchemaFile` (`schema_file`): one file, discovered and read; `Dialect` (`dialect`): draft
  2020-12 or draft-07;
- `lint_repository` (`lint`) over the rules with stable ids (`rules`), `check_fixtures`
  (`fixtures`), `implementation_findings` (`implementations`), SARIF output (`sarif`);
- `diff_schemas`, `diff_repositories`, `diff_since` (`diff`): breaking-change classification;
- `load_config` (`config`): ``schemawire.toml`` or ``[tool.schemawire]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schemawire._lazy import LazyNames

if TYPE_CHECKING:
    from schemawire.schema.config import CONFIG_FILE, Config, LintConfig, find_root, load_config
    from schemawire.schema.dialect import (
        DEFAULT_DIALECT,
        DIALECTS,
        DRAFT_07,
        DRAFT_2020_12,
        KNOWN_FORMATS,
        SUBSCHEMA_LISTS,
        SUBSCHEMA_MAPS,
        SUBSCHEMA_SINGLE,
        Dialect,
        dialect_named,
    )
    from schemawire.schema.diff import (
        ABSENT,
        CHANGE_KINDS,
        ChangeKind,
        ChangeSeverity,
        FileStatus,
        RepositoryDiff,
        Role,
        SchemaChange,
        SchemaDiff,
        Side,
        diff_files,
        diff_repositories,
        diff_schemas,
        diff_since,
        role_of,
        version_findings,
    )
    from schemawire.schema.fixtures import FixtureReport, NotRun, check_fixtures
    from schemawire.schema.implementations import (
        implementation_findings,
        implemented_specs,
        load_implementations,
        signature_mismatches,
    )
    from schemawire.schema.lint import FILE_CHECKS, SITE_CHECKS, lint_file, lint_repository
    from schemawire.schema.references import FileIndex, Reference, build_registry, references_of
    from schemawire.schema.repository import Repository
    from schemawire.schema.rules import RULES, Finding, Rule, Severity, rule, rules_markdown
    from schemawire.schema.sarif import SARIF_SCHEMA, to_sarif
    from schemawire.schema.schema_file import (
        KINDS,
        OUTPUT_SUFFIX,
        SchemaFile,
        discover,
        own_uri,
        read_schema_file,
    )
    from schemawire.schema.validator import (
        CompiledSchema,
        compile_schema,
        metaschema_violations,
        refuse_retrieval,
    )

__all__ = [
    "ABSENT",
    "CHANGE_KINDS",
    "CONFIG_FILE",
    "DEFAULT_DIALECT",
    "DIALECTS",
    "DRAFT_07",
    "DRAFT_2020_12",
    "FILE_CHECKS",
    "KINDS",
    "KNOWN_FORMATS",
    "OUTPUT_SUFFIX",
    "RULES",
    "SARIF_SCHEMA",
    "SITE_CHECKS",
    "SUBSCHEMA_LISTS",
    "SUBSCHEMA_MAPS",
    "SUBSCHEMA_SINGLE",
    "ChangeKind",
    "ChangeSeverity",
    "CompiledSchema",
    "Config",
    "Dialect",
    "FileIndex",
    "FileStatus",
    "Finding",
    "FixtureReport",
    "LintConfig",
    "NotRun",
    "Reference",
    "Repository",
    "RepositoryDiff",
    "Role",
    "Rule",
    "SchemaChange",
    "SchemaDiff",
    "SchemaFile",
    "Severity",
    "Side",
    "build_registry",
    "check_fixtures",
    "compile_schema",
    "dialect_named",
    "diff_files",
    "diff_repositories",
    "diff_schemas",
    "diff_since",
    "discover",
    "find_root",
    "implementation_findings",
    "implemented_specs",
    "lint_file",
    "lint_repository",
    "load_config",
    "load_implementations",
    "metaschema_violations",
    "own_uri",
    "read_schema_file",
    "references_of",
    "refuse_retrieval",
    "role_of",
    "rule",
    "rules_markdown",
    "signature_mismatches",
    "to_sarif",
    "version_findings",
]

# Each module's names again, as in its own __all__: the facade names them to load lazily.
_HOMES = {
    "schemawire.schema.config": ("CONFIG_FILE", "Config", "LintConfig", "find_root", "load_config"),
    "schemawire.schema.dialect": (
        "DEFAULT_DIALECT",
        "DIALECTS",
        "DRAFT_07",
        "DRAFT_2020_12",
        "KNOWN_FORMATS",
        "SUBSCHEMA_LISTS",
        "SUBSCHEMA_MAPS",
        "SUBSCHEMA_SINGLE",
        "Dialect",
        "dialect_named",
    ),
    "schemawire.schema.diff": (
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
    ),
    "schemawire.schema.fixtures": ("FixtureReport", "NotRun", "check_fixtures"),
    "schemawire.schema.implementations": (
        "implementation_findings",
        "implemented_specs",
        "load_implementations",
        "signature_mismatches",
    ),
    "schemawire.schema.lint": ("FILE_CHECKS", "SITE_CHECKS", "lint_file", "lint_repository"),
    "schemawire.schema.references": ("FileIndex", "Reference", "build_registry", "references_of"),
    "schemawire.schema.repository": ("Repository",),
    "schemawire.schema.rules": ("RULES", "Finding", "Rule", "Severity", "rule", "rules_markdown"),
    "schemawire.schema.sarif": ("SARIF_SCHEMA", "to_sarif"),
    "schemawire.schema.schema_file": (
        "KINDS",
        "OUTPUT_SUFFIX",
        "SchemaFile",
        "discover",
        "own_uri",
        "read_schema_file",
    ),
    "schemawire.schema.validator": (
        "CompiledSchema",
        "compile_schema",
        "metaschema_violations",
        "refuse_retrieval",
    ),
}
_NAMES = LazyNames("schemawire.schema", _HOMES)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)
