"""The Python functions that implement a repository's tools, as ``[serve.tools]`` names them.

    [serve]
    python-path = ["."]                       # where the modules are found, from the root
    [serve.tools]
    get_weather = "implementations:get_weather"

`load_implementations` imports them for `schemawire serve`, the host and evals; a module or
function that cannot be imported is a `ConfigError`. `implemented_specs` is the tools they
implement, or a `UsageError` for a function whose tool has no schema.

`implementation_findings` is what `schemawire check` makes of them, as findings: a module that
does not import (SW501), a function that is not there (SW502), a tool of a repository that serves
tools with no implementation (SW503), a function whose parameters do not match the tool's input
schema (SW504), and an implementation of a tool that has no schema (SW505).

Importing a module runs its code: it happens only for a repository whose settings name modules.
This module sits below the MCP layer, so `check` reads implementations without the MCP SDK.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import re
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemawire._pointer import join
from schemawire.errors import ConfigError, ErrorCode, UsageError, one_line
from schemawire.schema._files import relpath
from schemawire.schema.repository import Repository
from schemawire.schema.rules import Finding, rule
from schemawire.schema.schema_file import SchemaFile
from schemawire.types import ToolSpec

__all__ = [
    "implementation_findings",
    "implemented_specs",
    "load_implementations",
    "signature_mismatches",
]

# The keyword a workflow's journal may pass to a function that takes it (see host.tools).
_HOST_KEYWORDS = frozenset({"idempotency_key"})
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


@dataclass(frozen=True, slots=True)
class _Failure:
    """Why a ``module:function`` could not be had: SW501 (import) or SW502 (attribute)."""

    rule_id: str
    reason: str
    hint: str | None = None


def load_implementations(repository: Repository) -> dict[str, Callable[..., Any]]:
    """The functions ``[serve] tools`` names, imported (``python-path`` first on ``sys.path``).

    Raises:
        ConfigError: a module or function cannot be imported.
    """
    _add_python_path(repository)
    functions: dict[str, Callable[..., Any]] = {}
    modules: dict[str, Any] = {}
    for tool, target in repository.config.serve.tools.items():
        imported = _import(target, modules)
        if isinstance(imported, _Failure):
            raise ConfigError(
                ErrorCode.CONFIG_INVALID,
                imported.reason,
                source=str(repository.config.source or repository.root),
                pointer=f"/serve/tools/{tool}",
            )
        functions[tool] = imported
    return functions


def implemented_specs(repository: Repository, implemented: Iterable[str]) -> dict[str, ToolSpec]:
    """The specs of the tools ``implemented`` names (by tool name), in its order.

    Raises:
        UsageError: it names a tool the repository has no schema for.
    """
    specs = {spec.name: spec for spec in repository.tools()}
    names = list(implemented)
    unknown = sorted(set(names) - set(specs))
    if unknown:
        raise UsageError(f"no schema for tools {', '.join(unknown)} in {repository.root}")
    return {name: specs[name] for name in names}


def implementation_findings(
    repository: Repository, unusable: Collection[str] = ()
) -> Iterator[Finding]:
    """SW501-SW505 for the repository's ``[serve]`` settings; nothing when it has none.

    Args:
        repository: the repository.
        unusable: paths of schema files that cannot be used (their signatures are not compared:
            their own findings say why).
    """
    settings = repository.config.serve
    if not settings.declared and not settings.tools:
        return
    tools = {file.name: file for file in repository.files if file.is_tool_input}
    if settings.tools:
        _add_python_path(repository)
    entries = _Entries(repository, tools, unusable)
    for tool, target in settings.tools.items():
        yield from entries.check(tool, target)
    if settings.declared:
        yield from _unimplemented(repository, tools)


class _Entries:
    """Checks each ``[serve.tools]`` entry, importing each module once."""

    def __init__(
        self, repository: Repository, tools: Mapping[str, SchemaFile], unusable: Collection[str]
    ) -> None:
        self.repository = repository
        self.tools = tools
        self.unusable = unusable
        self.where = _SettingsFile(repository)
        self.modules: dict[str, Any] = {}

    def check(self, tool: str, target: str) -> Iterator[Finding]:
        """The findings of the entry ``tool = "target"``."""
        schema = self.tools.get(tool)
        if schema is None:
            missing = f"{tool} has no schema {self.repository.config.tools}/{tool}.json to serve"
            yield self.where.finding("SW505", tool, missing, _did_you_mean(tool, self.tools))
            return
        first_of_module = target.partition(":")[0] not in self.modules
        imported = _import(target, self.modules)
        if isinstance(imported, _Failure):
            if imported.rule_id == "SW502" or first_of_module:  # a module fails to import once
                yield self.where.finding(imported.rule_id, tool, imported.reason, imported.hint)
        elif schema.usable and schema.relpath not in self.unusable:
            yield from _mismatch_findings(schema, target, imported)


def signature_mismatches(
    function: Callable[..., Any], schema: Mapping[str, Any]
) -> Iterator[tuple[str, str]]:
    """``(pointer into schema, what is wrong)`` for each way ``function``'s parameters disagree
    with the input ``schema``'s ``properties`` and ``required``.

    The host calls a function with the accepted arguments as keywords, so a property the
    function does not take (without ``**kwargs``) fails every call that sends it, an optional
    property without a default fails every call that leaves it out, and a parameter without a
    default that is no property fails every call. A required property with a default is a
    disagreement about what callers must send. ``idempotency_key`` is the host's to pass.
    Nothing is reported when the signature cannot be read or the root has no ``properties``.
    """
    properties = schema.get("properties")
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin or an extension without a signature
        return
    if not isinstance(properties, dict):
        return
    required = _required(schema)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    for name in properties:
        parameter = parameters.get(name)
        if parameter is None or parameter.kind in _VARIADIC:
            if not takes_any:
                yield (
                    join("/properties", name),
                    (
                        f"the function takes no parameter {name} (and no **kwargs): every call "
                        "that sends it fails"
                    ),
                )
            continue
        yield from _property_mismatch(parameter, properties, required)
    for name, parameter in parameters.items():
        if name in properties or name in _HOST_KEYWORDS or parameter.kind in _VARIADIC:
            continue
        if parameter.default is inspect.Parameter.empty:
            yield (
                "/properties",
                (
                    f"parameter {name} has no default and is not a property of the schema: every "
                    "call fails"
                ),
            )


def _property_mismatch(
    parameter: inspect.Parameter, properties: Mapping[str, Any], required: dict[str, int]
) -> Iterator[tuple[str, str]]:
    name = parameter.name
    if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
        yield (
            join("/properties", name),
            (f"parameter {name} is positional-only, but arguments are passed by keyword"),
        )
        return
    has_default = parameter.default is not inspect.Parameter.empty
    if name in required and has_default:
        yield (
            f"/required/{required[name]}",
            (
                f"{name} is required by the schema, but the function gives it a default: one of "
                "the two is wrong"
            ),
        )
    elif name not in required and not has_default:
        yield (
            join("/properties", name),
            (
                f"{name} is optional in the schema, but the function has no default for it: every "
                "call that leaves it out fails"
            ),
        )


def _required(schema: Mapping[str, Any]) -> dict[str, int]:
    names = schema.get("required")
    if not isinstance(names, list):
        return {}
    return {name: index for index, name in enumerate(names) if isinstance(name, str)}


def _mismatch_findings(
    schema: SchemaFile, target: str, function: Callable[..., Any]
) -> Iterator[Finding]:
    for pointer, problem in signature_mismatches(function, schema.document):
        hint = "change the function's parameters or the schema, so that they agree"
        yield Finding(rule("SW504"), schema.relpath, pointer, f"{target}: {problem}", hint)


def _unimplemented(repository: Repository, tools: Mapping[str, SchemaFile]) -> Iterator[Finding]:
    implemented = repository.config.serve.tools
    for name, file in tools.items():
        if name not in implemented:
            yield Finding(
                rule("SW503"),
                file.relpath,
                "",
                f"tool {name} has no implementation under [serve.tools]: schemawire serve does "
                "not serve it",
                hint=f'add {name} = "module:function" under [serve.tools]; if another server '
                f'implements it, add "{file.relpath}" = ["SW503"] under [lint.per-file-ignores]',
            )


def _did_you_mean(name: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    if close:
        return f"did you mean {close[0]}?"
    return "name a tool the repository has a schema for, or add its schema"


def _add_python_path(repository: Repository) -> None:
    for folder in reversed(repository.config.serve.python_path):
        path = str((repository.root / folder).resolve())
        if path not in sys.path:
            sys.path.insert(0, path)


def _import(target: str, modules: dict[str, Any] | None = None) -> Callable[..., Any] | _Failure:
    """The callable ``module:attribute`` names, or why it cannot be had. ``modules`` keeps each
    module's import (or its failure) for the next target in the same module."""
    module_name, _, attribute = target.partition(":")
    modules = {} if modules is None else modules
    if module_name not in modules:
        modules[module_name] = _import_module(module_name)
    value = module = modules[module_name]
    if isinstance(module, _Failure):
        return module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except Exception:  # AttributeError, or whatever a module's __getattr__ raises
            return _Failure("SW502", f"{module_name} has no {attribute}", _close(part, module))
    if not callable(value):
        return _Failure("SW502", f"{target} is not callable (it is a {type(value).__name__})")
    return value  # type: ignore[no-any-return]


def _import_module(name: str) -> Any:
    """The module, or why it cannot be imported. What it prints while it is imported goes to
    stderr: stdout carries `check --json` output, or a stdio MCP server's messages."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return importlib.import_module(name)
    except (Exception, SystemExit) as error:  # user code: whatever it raises is the reason
        reason = f"cannot import {name}: {one_line(error)}"
        hint = f"python -c 'import {name}' in a python-path folder shows the traceback"
        return _Failure("SW501", reason, hint)


def _close(name: str, module: Any) -> str | None:
    known = [key for key, value in vars(module).items() if callable(value)]
    close = difflib.get_close_matches(name, known, n=1)
    return f"did you mean {close[0]}?" if close else None


class _SettingsFile:
    """The file the settings came from, to place findings about ``[serve.tools]`` entries."""

    def __init__(self, repository: Repository) -> None:
        source = repository.config.source
        self.relpath = relpath(repository.root, source) if source else "schemawire.toml"
        self.text = _read_text(source)

    def finding(self, rule_id: str, tool: str, message: str, hint: str | None) -> Finding:
        """A finding about the ``[serve.tools]`` entry of ``tool``, at its line."""
        finding = Finding(rule(rule_id), self.relpath, f"/serve/tools/{tool}", message, hint)
        position = _key_position(self.text, tool)
        return finding.at(*position) if position else finding


def _read_text(path: Path | None) -> str:
    try:
        return path.read_text(encoding="utf-8") if path else ""
    except (OSError, UnicodeDecodeError):
        return ""


# The tables that may hold a tool's key, and what comes before the key there.
_KEY_PREFIXES = {
    "serve.tools": "",
    "tool.schemawire.serve.tools": "",
    "serve": r"tools\s*\.\s*",
    "tool.schemawire.serve": r"tools\s*\.\s*",
}


def _key_position(text: str, tool: str) -> tuple[int, int] | None:
    """The line and column of ``tool``'s key in the settings' TOML text, if it can be found:
    in a ``[serve.tools]`` table, or as ``tools.<tool>`` in ``[serve]``."""
    key = rf"(?:{re.escape(tool)}|\"{re.escape(tool)}\"|'{re.escape(tool)}')"
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"\s*\[([^\[\]]+)\]\s*(?:#.*)?$", line)
        if header:
            table = re.sub(r"\s+", "", header.group(1))
            continue
        prefix = _KEY_PREFIXES.get(table)
        if prefix is None:
            continue
        found = re.match(rf"(\s*){prefix}{key}\s*=", line)
        if found:
            return number, len(found.group(1)) + 1
    return None
