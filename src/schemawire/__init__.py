"""schemawire: one JSON Schema per tool, handoff and state, checked in CI and enforced at every hop.

The public API is flat: import what you need from ``schemawire``. Submodules whose names start
with an underscore are private.
"""

from schemawire._json import (
    DEFAULT_LIMITS,
    JSONLine,
    JSONValue,
    Limits,
    dumps,
    load_file,
    loads,
    loads_lines,
)
from schemawire._version import __version__
from schemawire.check import CheckReport, check_repository
from schemawire.errors import (
    ConfigError,
    ErrorCode,
    InputError,
    JSONError,
    SchemaError,
    SchemawireError,
    UsageError,
)
from schemawire.schema.config import Config, LintConfig, load_config
from schemawire.schema.dialect import Dialect
from schemawire.schema.fixtures import FixtureReport, check_fixtures
from schemawire.schema.lint import lint_repository
from schemawire.schema.repository import Reference, Repository, SchemaFile
from schemawire.schema.rules import RULES, Finding, Rule, Severity
from schemawire.schema.sarif import to_sarif
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import ToolSpec, Violation

__all__ = [
    "DEFAULT_LIMITS",
    "RULES",
    "CheckReport",
    "CompiledSchema",
    "Config",
    "ConfigError",
    "Dialect",
    "ErrorCode",
    "Finding",
    "FixtureReport",
    "InputError",
    "JSONError",
    "JSONLine",
    "JSONValue",
    "Limits",
    "LintConfig",
    "Reference",
    "Repository",
    "Rule",
    "SchemaError",
    "SchemaFile",
    "SchemawireError",
    "Severity",
    "ToolSpec",
    "UsageError",
    "Violation",
    "__version__",
    "check_fixtures",
    "check_repository",
    "compile_schema",
    "dumps",
    "lint_repository",
    "load_config",
    "load_file",
    "loads",
    "loads_lines",
    "to_sarif",
]
