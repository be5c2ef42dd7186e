"""schemawire: one JSON Schema per tool, handoff and state, checked in CI and enforced at every hop.

Everything a caller needs is importable from here, in one line::

    from schemawire import Host, Repository, python_tools

Each name loads its module on first use, so ``import schemawire`` costs almost nothing and a
program that only checks schemas never imports the agent loop, the model clients or the MCP SDK.
Submodules whose names start with an underscore are private.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from schemawire._lazy import LazyNames as _LazyNames
from schemawire._version import __version__

if _TYPE_CHECKING:
    from schemawire._json import (
        DEFAULT_LIMITS,
        JSONLine,
        JSONValue,
        ParseLimits,
        dumps,
        load_file,
        loads,
        loads_lines,
    )
    from schemawire.application.check import CheckReport, check_repository
    from schemawire.application.json_toolbox import (
        Indent,
        InstanceResult,
        format_json,
        format_json_lines,
        load_schema,
        repository_schema,
        schema_from_text,
        validate_file,
        validate_text,
    )
    from schemawire.errors import (
        ConfigError,
        ErrorCode,
        FlowError,
        GateRefusal,
        InputError,
        JSONError,
        ModelError,
        RunLookupError,
        SchemaError,
        SchemawireError,
        ServerError,
        StoreError,
        UsageError,
    )
    from schemawire.flows.definition import Flow, load_flow
    from schemawire.gates import (
        CODES,
        ArgumentGate,
        ArgumentOptions,
        Change,
        HandoffDecision,
        HandoffGate,
        ResultGate,
        ResultOptions,
        Route,
        Shortlist,
        ShortlistedTool,
        ToolIndex,
        ValueLimits,
        Verdict,
    )
    from schemawire.host import (
        CallRecord,
        Host,
        HostOptions,
        HttpModel,
        McpTool,
        Model,
        PythonTool,
        RunResult,
        ScriptedModel,
        ToolRunner,
        mcp_tools,
        model_from_spec,
        python_tools,
    )
    from schemawire.host.workflow import FlowResult, FlowRunner
    from schemawire.mcp import HttpServer, McpCall, McpClient, StdioServer
    from schemawire.project import LOSS_CODES, TARGETS, Catalogue
    from schemawire.project.export import project_repository
    from schemawire.schema.config import Config, LintConfig, load_config
    from schemawire.schema.dialect import Dialect
    from schemawire.schema.fixtures import FixtureReport, check_fixtures
    from schemawire.schema.lint import lint_repository
    from schemawire.schema.references import Reference
    from schemawire.schema.repository import Repository
    from schemawire.schema.rules import RULES, Finding, Rule, Severity
    from schemawire.schema.sarif import to_sarif
    from schemawire.schema.schema_file import SchemaFile
    from schemawire.schema.validator import CompiledSchema, compile_schema
    from schemawire.store import Store, open_store
    from schemawire.trace import Trace, read_trace
    from schemawire.types import (
        ArgumentRestorer,
        Hop,
        Loss,
        Projection,
        Rejection,
        ToolCall,
        ToolResult,
        ToolSpec,
        Violation,
    )

__all__ = [
    "CODES",
    "DEFAULT_LIMITS",
    "LOSS_CODES",
    "RULES",
    "TARGETS",
    "ArgumentGate",
    "ArgumentOptions",
    "ArgumentRestorer",
    "CallRecord",
    "Catalogue",
    "Change",
    "CheckReport",
    "CompiledSchema",
    "Config",
    "ConfigError",
    "Dialect",
    "ErrorCode",
    "Finding",
    "FixtureReport",
    "Flow",
    "FlowError",
    "FlowResult",
    "FlowRunner",
    "GateRefusal",
    "HandoffDecision",
    "HandoffGate",
    "Hop",
    "Host",
    "HostOptions",
    "HttpModel",
    "HttpServer",
    "Indent",
    "InputError",
    "InstanceResult",
    "JSONError",
    "JSONLine",
    "JSONValue",
    "LintConfig",
    "Loss",
    "McpCall",
    "McpClient",
    "McpTool",
    "Model",
    "ModelError",
    "ParseLimits",
    "Projection",
    "PythonTool",
    "Reference",
    "Rejection",
    "Repository",
    "ResultGate",
    "ResultOptions",
    "Route",
    "Rule",
    "RunLookupError",
    "RunResult",
    "SchemaError",
    "SchemaFile",
    "SchemawireError",
    "ScriptedModel",
    "ServerError",
    "Severity",
    "Shortlist",
    "ShortlistedTool",
    "StdioServer",
    "Store",
    "StoreError",
    "ToolCall",
    "ToolIndex",
    "ToolResult",
    "ToolRunner",
    "ToolSpec",
    "Trace",
    "UsageError",
    "ValueLimits",
    "Verdict",
    "Violation",
    "__version__",
    "check_fixtures",
    "check_repository",
    "compile_schema",
    "dumps",
    "format_json",
    "format_json_lines",
    "lint_repository",
    "load_config",
    "load_file",
    "load_flow",
    "load_schema",
    "loads",
    "loads_lines",
    "mcp_tools",
    "model_from_spec",
    "open_store",
    "project_repository",
    "python_tools",
    "read_trace",
    "repository_schema",
    "schema_from_text",
    "to_sarif",
    "validate_file",
    "validate_text",
]

# Where each public name lives: the module is imported the first time the name is asked for.
# Each home's names stand again in its own __all__: the facade must name them to load lazily.
_HOMES = {
    "schemawire._json": (
        "DEFAULT_LIMITS",
        "JSONLine",
        "JSONValue",
        "ParseLimits",
        "dumps",
        "load_file",
        "loads",
        "loads_lines",
    ),
    "schemawire.application.check": ("CheckReport", "check_repository"),
    "schemawire.application.json_toolbox": (
        "Indent",
        "InstanceResult",
        "format_json",
        "format_json_lines",
        "load_schema",
        "repository_schema",
        "schema_from_text",
        "validate_file",
        "validate_text",
    ),
    "schemawire.errors": (
        "ConfigError",
        "ErrorCode",
        "FlowError",
        "GateRefusal",
        "InputError",
        "JSONError",
        "ModelError",
        "RunLookupError",
        "SchemaError",
        "SchemawireError",
        "ServerError",
        "StoreError",
        "UsageError",
    ),
    "schemawire.gates": (
        "CODES",
        "ArgumentGate",
        "ArgumentOptions",
        "Change",
        "HandoffDecision",
        "HandoffGate",
        "ResultGate",
        "ResultOptions",
        "Route",
        "Shortlist",
        "ShortlistedTool",
        "ToolIndex",
        "ValueLimits",
        "Verdict",
    ),
    "schemawire.host": (
        "CallRecord",
        "Host",
        "HostOptions",
        "HttpModel",
        "McpTool",
        "Model",
        "PythonTool",
        "RunResult",
        "ScriptedModel",
        "ToolRunner",
        "mcp_tools",
        "model_from_spec",
        "python_tools",
    ),
    "schemawire.flows.definition": ("Flow", "load_flow"),
    "schemawire.host.workflow": ("FlowResult", "FlowRunner"),
    "schemawire.mcp": ("HttpServer", "McpCall", "McpClient", "StdioServer"),
    # Not `project` itself: the name is the subpackage's (importing it rebinds the attribute).
    "schemawire.project": ("LOSS_CODES", "TARGETS", "Catalogue"),
    "schemawire.project.export": ("project_repository",),
    "schemawire.schema.config": ("Config", "LintConfig", "load_config"),
    "schemawire.schema.dialect": ("Dialect",),
    "schemawire.schema.fixtures": ("FixtureReport", "check_fixtures"),
    "schemawire.schema.lint": ("lint_repository",),
    "schemawire.schema.references": ("Reference",),
    "schemawire.schema.repository": ("Repository",),
    "schemawire.schema.schema_file": ("SchemaFile",),
    "schemawire.schema.rules": ("RULES", "Finding", "Rule", "Severity"),
    "schemawire.schema.sarif": ("to_sarif",),
    "schemawire.schema.validator": ("CompiledSchema", "compile_schema"),
    "schemawire.store": ("Store", "open_store"),
    "schemawire.trace": ("Trace", "read_trace"),
    "schemawire.types": (
        "ArgumentRestorer",
        "Hop",
        "Loss",
        "Projection",
        "Rejection",
        "ToolCall",
        "ToolResult",
        "ToolSpec",
        "Violation",
    ),
}
_NAMES = _LazyNames("schemawire", _HOMES)


def __getattr__(name: str) -> _Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
