"""Settings: ``schemawire.toml``, or ``[tool.schemawire]`` in ``pyproject.toml``.

The repository root is the nearest directory, from the one given upwards, that holds either file
(with a ``[tool.schemawire]`` table, for ``pyproject.toml``). Without one, the given directory is
the root and the defaults apply. The settings are checked against a JSON Schema, so a typo such as
``ignor`` is an error that names the key, not a setting silently ignored.

    [repository]
    tools = "schemas/tools"          # tool input schemas; <name>.output.json beside them
    handoffs = "schemas/handoffs"
    state = "schemas/state"
    common = "schemas/common"        # shared definitions that other schemas $ref
    fixtures = "fixtures"
    id-base = "https://example.com/" # optional: every $id must be id-base + the file's path
    allow-empty = false              # true: `schemawire check` passes without any schema file

    [export]
    adapters = "adapters"            # where `schemawire export` writes the projections
    [export.a2a]                     # what the A2A Agent Card says about the agent
    name = "support-desk"
    url = "https://agents.example.com/a2a"

    [lint]
    ignore = ["SW112"]               # rules off everywhere
    open-objects = ["metadata"]      # properties that may stay open (additionalProperties)
    formats = ["order-id"]           # formats your validators know, beyond the standard ones
    keywords = ["x-ui"]              # keywords your tools know, beyond the dialect's

    [lint.per-file-ignores]                # glob patterns (fnmatch: * also matches /)
    "schemas/tools/legacy_*.json" = ["SW101"]

    [gateway]                        # `schemawire serve`: many MCP servers as one
    shortlist = 5                    # optional: list only search_tools and call_tool
    [gateway.upstreams.fs]           # the upstream's name prefixes its tools: fs_read_file
    command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
    [gateway.upstreams.search]
    url = "http://127.0.0.1:3001/mcp"
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from schemawire._json import quoted
from schemawire.errors import ConfigError, ErrorCode
from schemawire.schema.rules import RULES
from schemawire.schema.validator import compile_schema

__all__ = ["CONFIG_FILE", "Config", "LintConfig", "find_root", "load_config"]

CONFIG_FILE = "schemawire.toml"
_PYPROJECT = "pyproject.toml"

_STRINGS = {"type": "array", "items": {"type": "string"}}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
# An upstream's name (the gateway's tool-name prefix): `schemawire.mcp._namespaces` says why.
_UPSTREAM_NAME = "^[A-Za-z][A-Za-z0-9-]{0,23}$"
_UPSTREAM = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "command": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        "url": {"type": "string", "pattern": "^https?://"},
        "env": _STRING_MAP,
        "cwd": {"type": "string", "minLength": 1},
        "headers": _STRING_MAP,
        "timeout": {"type": "number", "exclusiveMinimum": 0},
    },
}
# Settings that are paths, which must stay inside the repository.
_PATHS = {
    "repository": ("tools", "handoffs", "state", "common", "fixtures"),
    "export": ("adapters",),
}
_CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "repository": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "tools": {"type": "string"},
                "handoffs": {"type": "string"},
                "state": {"type": "string"},
                "common": {"type": "string"},
                "fixtures": {"type": "string"},
                "id-base": {"type": "string", "pattern": "^[a-zA-Z][a-zA-Z0-9+.-]*:.*/$"},
                "allow-empty": {"type": "boolean"},
            },
        },
        "lint": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "ignore": _STRINGS,
                "open-objects": _STRINGS,
                "formats": _STRINGS,
                "keywords": _STRINGS,
                "per-file-ignores": {"type": "object", "additionalProperties": _STRINGS},
            },
        },
        "export": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "adapters": {"type": "string"},
                "a2a": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        key: {"type": "string"} for key in ("name", "description", "url", "version")
                    },
                },
            },
        },
        "serve": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "python-path": _STRINGS,
                "timeout": {"type": "number", "exclusiveMinimum": 0},
                "tools": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "string",
                        "pattern": "^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_.]*$",
                    },
                },
            },
        },
        "gateway": {
            "type": "object",
            "additionalProperties": False,
            "required": ["upstreams"],
            "properties": {
                "shortlist": {"type": "integer", "minimum": 1, "maximum": 50},
                "upstreams": {
                    "type": "object",
                    "minProperties": 1,
                    "additionalProperties": _UPSTREAM,
                },
            },
        },
    },
}


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """What `schemawire serve` serves: each tool's implementation, a ``module:function``.

    Attributes:
        name: the server's name in ``serverInfo`` (default: the repository's directory name).
        python_path: directories, relative to the root, where the modules are found.
        tools: tool name -> ``module:function``.
        timeout: seconds one call of a tool may take.
        declared: whether the settings have a ``[serve]`` section at all: a repository that
            serves tools, whose every tool needs an implementation.
    """

    name: str | None = None
    python_path: tuple[str, ...] = (".",)
    tools: dict[str, str] = field(default_factory=dict[str, str])
    timeout: float = 60.0
    declared: bool = False


@dataclass(frozen=True, slots=True)
class GatewayUpstream:
    """One upstream of ``[gateway.upstreams.NAME]``: a command to start, or a URL to reach.

    Attributes:
        name: the upstream's name, which prefixes its tools' names.
        command: the program and its arguments (a stdio server), or None.
        url: a Streamable HTTP server's endpoint, or None.
        env: variables added to a command's environment.
        cwd: a command's working directory, relative to the repository's root.
        headers: headers sent with every request to the URL.
        timeout: seconds a call to it may take (None: `schemawire serve`'s).
    """

    name: str
    command: tuple[str, ...] | None = None
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict[str, str])
    cwd: str | None = None
    headers: dict[str, str] = field(default_factory=dict[str, str])
    timeout: float | None = None


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """``[gateway]``: the upstreams `schemawire serve` serves as one server.

    Attributes:
        upstreams: in the order the file gives them.
        shortlist: list only ``search_tools`` and ``call_tool``, each search returning this many
            tools; None lists every tool.
    """

    upstreams: tuple[GatewayUpstream, ...] = ()
    shortlist: int | None = None


@dataclass(frozen=True, slots=True)
class LintConfig:
    """What `schema.lint` checks, and where it keeps quiet."""

    ignore: frozenset[str] = frozenset()
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    open_objects: frozenset[str] = frozenset({"metadata"})
    formats: frozenset[str] = frozenset()
    keywords: frozenset[str] = frozenset()

    def ignores(self, rule: str, relpath: str) -> bool:
        """Whether ``rule`` is switched off for the file at ``relpath`` (relative to the root)."""
        if rule in self.ignore:
            return True
        return any(
            rule in rules and fnmatch.fnmatchcase(relpath, pattern)
            for pattern, rules in self.per_file_ignores
        )


@dataclass(frozen=True, slots=True)
class Config:
    """Where a repository keeps its files, and how it is checked.

    Paths are relative to ``root``; ``source`` is the file the settings came from, if any.
    """

    root: Path
    tools: str = "schemas/tools"
    handoffs: str = "schemas/handoffs"
    state: str = "schemas/state"
    common: str = "schemas/common"
    fixtures: str = "fixtures"
    id_base: str | None = None
    allow_empty: bool = False
    lint: LintConfig = field(default_factory=LintConfig)
    adapters: str = "adapters"
    a2a: dict[str, str] = field(default_factory=dict[str, str])
    serve: ServeConfig = field(default_factory=ServeConfig)
    gateway: GatewayConfig = field(default_factory=GatewayConfig)
    source: Path | None = None

    def kind_dirs(self) -> dict[str, str]:
        """Schema kind -> its directory, relative to the root."""
        return {
            "tools": self.tools,
            "handoffs": self.handoffs,
            "state": self.state,
            "common": self.common,
        }


def find_root(start: str | Path = ".") -> Path:
    """The nearest directory from ``start`` upwards with settings, else ``start`` itself."""
    start = Path(start).resolve()
    for directory in (start, *start.parents):
        if (directory / CONFIG_FILE).is_file() or _pyproject_table(directory) is not None:
            return directory
    return start


def load_config(start: str | Path = ".") -> Config:
    """The settings of the repository that holds ``start``.

    Raises:
        ConfigError: the settings file cannot be read, is not TOML, or breaks the settings schema.
    """
    root = find_root(start)
    own = root / CONFIG_FILE
    if own.is_file():
        return _config_from(_read_toml(own), root, own)
    table = _pyproject_table(root)
    if table is not None:
        return _config_from(table, root, root / _PYPROJECT)
    return Config(root=root)


def _pyproject_table(directory: Path) -> dict[str, Any] | None:
    path = directory / _PYPROJECT
    if not path.is_file():
        return None
    tool = _read_toml(path).get("tool")
    table = tool.get("schemawire") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except OSError as exc:
        message = exc.strerror or str(exc)
        raise ConfigError(ErrorCode.FILE_UNREADABLE, message, source=str(path)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(ErrorCode.CONFIG_INVALID, str(exc), source=str(path)) from None


def _config_from(table: dict[str, Any], root: Path, source: Path) -> Config:
    _check_settings(table, root, source)
    repository = table.get("repository", {})
    lint = table.get("lint", {})
    exporting = table.get("export", {})
    serving = table.get("serve", {})
    return Config(
        root=root,
        tools=repository.get("tools", "schemas/tools"),
        handoffs=repository.get("handoffs", "schemas/handoffs"),
        state=repository.get("state", "schemas/state"),
        common=repository.get("common", "schemas/common"),
        fixtures=repository.get("fixtures", "fixtures"),
        id_base=repository.get("id-base"),
        allow_empty=repository.get("allow-empty", False),
        lint=LintConfig(
            ignore=frozenset(lint.get("ignore", ())),
            per_file_ignores=tuple(
                (pattern, frozenset(rules))
                for pattern, rules in lint.get("per-file-ignores", {}).items()
            ),
            open_objects=frozenset(lint.get("open-objects", ("metadata",))),
            formats=frozenset(lint.get("formats", ())),
            keywords=frozenset(lint.get("keywords", ())),
        ),
        adapters=exporting.get("adapters", "adapters"),
        a2a=dict(exporting.get("a2a", {})),
        serve=ServeConfig(
            name=serving.get("name"),
            python_path=tuple(serving.get("python-path", (".",))),
            tools=dict(serving.get("tools", {})),
            timeout=float(serving.get("timeout", 60.0)),
            declared="serve" in table,
        ),
        gateway=_gateway_from(table.get("gateway", {})),
        source=source,
    )


def _gateway_from(table: dict[str, Any]) -> GatewayConfig:
    upstreams = tuple(
        GatewayUpstream(
            name=name,
            command=tuple(entry["command"]) if "command" in entry else None,
            url=entry.get("url"),
            env=dict(entry.get("env", {})),
            cwd=entry.get("cwd"),
            headers=dict(entry.get("headers", {})),
            timeout=float(entry["timeout"]) if "timeout" in entry else None,
        )
        for name, entry in table.get("upstreams", {}).items()
    )
    return GatewayConfig(upstreams=upstreams, shortlist=table.get("shortlist"))


def _check_settings(table: dict[str, Any], root: Path, source: Path) -> None:
    _refuse_toml_only_values(table, "", source)
    violations = compile_schema(_CONFIG_SCHEMA).violations(table)
    if violations:
        first = violations[0]
        hint = _did_you_mean(first.pointer) if first.keyword == "additionalProperties" else ""
        # A missing key is the table's mistake: name the table, the message names the key.
        pointer = first.pointer.rpartition("/")[0] if first.keyword == "required" else first.pointer
        _refuse(f"{first.message}{hint}", pointer, source)
    for section, keys in _PATHS.items():
        for key in keys:
            value = table.get(section, {}).get(key)
            if value is not None and not _stays_inside(root, value):
                _refuse(
                    "must be a path inside the repository, relative to its root",
                    f"/{section}/{key}",
                    source,
                )
    for index, value in enumerate(table.get("serve", {}).get("python-path", ())):
        if not _stays_inside(root, value):
            _refuse(
                "must be a path inside the repository, relative to its root",
                f"/serve/python-path/{index}",
                source,
            )
    _check_rule_ids(table.get("lint", {}), source)
    _check_upstreams(table.get("gateway", {}).get("upstreams", {}), root, source)


def _check_upstreams(upstreams: dict[str, Any], root: Path, source: Path) -> None:
    """What the settings schema cannot say well: each upstream's name, and that it is either a
    command (with its env and cwd) or a URL (with its headers)."""
    for name, entry in upstreams.items():
        pointer = f"/gateway/upstreams/{name}"
        if re.fullmatch(_UPSTREAM_NAME, name) is None:
            message = (
                f"upstream name {quoted(name)}: use a letter, then letters, digits or '-' "
                "(no '_': it separates the upstream's name from its tools'), at most 24 "
                "characters"
            )
            _refuse(message, pointer, source)
        if ("command" in entry) == ("url" in entry):
            _refuse("give the upstream a command (a stdio server) or a url: one", pointer, source)
        for key, needs in _UPSTREAM_NEEDS.items():
            if key in entry and needs not in entry:
                _refuse(f"{key} is for an upstream with a {needs}", f"{pointer}/{key}", source)
        if "cwd" in entry and not _stays_inside(root, entry["cwd"]):
            _refuse(
                "must be a path inside the repository, relative to its root",
                f"{pointer}/cwd",
                source,
            )


# An upstream's setting -> the kind of upstream it is for.
_UPSTREAM_NEEDS = {"env": "command", "cwd": "command", "headers": "url"}


def _refuse(message: str, pointer: str, source: Path) -> NoReturn:
    # The error's location names the file and the pointer; the message says what is wrong.
    where = pointer or None
    raise ConfigError(ErrorCode.CONFIG_INVALID, message, source=str(source), pointer=where)


def _refuse_toml_only_values(value: Any, pointer: str, source: Path) -> None:
    """Dates and times are TOML, not JSON; no setting takes one."""
    if isinstance(value, dict):
        for key, item in value.items():
            _refuse_toml_only_values(item, f"{pointer}/{key}", source)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_toml_only_values(item, f"{pointer}/{index}", source)
    elif not isinstance(value, str | int | float | bool):
        _refuse("must be a string, number, boolean, array or table", pointer, source)


def _stays_inside(root: Path, relative: str) -> bool:
    path = Path(relative)
    return not path.is_absolute() and (root / path).resolve().is_relative_to(root.resolve())


def _check_rule_ids(lint: dict[str, Any], source: Path) -> None:
    named = [("/lint/ignore", rule_id) for rule_id in lint.get("ignore", ())]
    for pattern, rules in lint.get("per-file-ignores", {}).items():
        named += [(f"/lint/per-file-ignores/{pattern}", rule_id) for rule_id in rules]
    for pointer, rule_id in named:
        if rule_id not in RULES:
            close = [known for known in RULES if known.lower() == rule_id.lower()]
            close = close or difflib.get_close_matches(rule_id, list(RULES), n=1)
            hint = f" (did you mean {quoted(close[0])}?)" if close else " (see docs/rules.md)"
            _refuse(f"unknown rule {quoted(rule_id)}{hint}", pointer, source)


def _did_you_mean(pointer: str) -> str:
    *parents, key = pointer.split("/") if pointer else [""]
    schema: dict[str, Any] = _CONFIG_SCHEMA
    for token in parents[1:]:  # a table's own key, or one of a table of tables (upstreams)
        properties = schema.get("properties", {})
        schema = (
            properties[token] if token in properties else schema.get("additionalProperties", {})
        )
    known = list(schema.get("properties", {}))
    close = difflib.get_close_matches(key, known, n=1)
    return f" (did you mean {quoted(close[0])}?)" if close else ""
