"""Importers: existing tool definitions (MCP, OpenAI, Anthropic) as canonical schemawire schemas.

Each importer reads one provider's envelope, normalises the parameter schema to standard draft
2020-12 JSON Schema and puts the canonical header in front of it::

    import_mcp / import_openai / import_anthropic   envelope -> _ToolSource
        -> SchemaNormaliser                         dialect fixes, each one a Normalisation
        -> _canonical_tool                           header, annotations, output schema
        -> metaschema check                          draft 2020-12, or InputError

A schema that is already standard comes through unchanged apart from its header (``$schema``,
``$id``, ``x-version``, ``title``, ``description``): exporting a canonical schema and importing
it again gives it back. Every change beyond the header is listed in ``ImportedTool.notes``.
Where the source is JSON Schema, no change alters which arguments are valid; where it is not (a
type name such as ``dict``, a flag such as ``"optional": true``), the change says in JSON Schema
what the dialect meant, and a type name that means nothing known becomes no type at all. Nothing
is closed on the way: open objects stay open for the lint rules to point out (the one exception
is a tool with no parameters at all, which gets MCP's no-argument schema).

The non-standard dialect of public function-calling collections (the Berkeley Function Calling
Leaderboard, xLAM and similar) is read too: ``"type": "dict"`` and other type names, per-property
``"optional"`` and ``"required"`` flags, ``"type": "str, optional"`` and ``"List[str]"`` type
expressions, and xLAM's flat ``{"name": {"type": ...}}`` parameter maps.

Input that cannot be imported raises `InputError` with ``ErrorCode.SCHEMA_INVALID`` and a
pointer into the input; a wrong ``id_base``, ``version`` or source name raises `UsageError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, Unpack

import jsonschema_rs

from schemawire._json import DEFAULT_LIMITS, quoted
from schemawire._pointer import join, to_pointer
from schemawire.errors import UsageError
from schemawire.project._normalise import (
    DRAFT_2020_12,
    SCHEMA_SHAPES,
    At,
    Normalisation,
    NormalisationCode,
    SchemaNormaliser,
    invalid,
)

__all__ = [
    "ImportOptions",
    "ImportedTool",
    "Normalisation",
    "NormalisationCode",
    "import_anthropic",
    "import_mcp",
    "import_openai",
    "import_tools",
    "normalise_schema",
]

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,
)
# Characters no file name may hold on Windows, macOS or Linux; dots and spaces are legal.
_NOT_IN_FILE_NAMES = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul"} | {f"{port}{i}" for port in ("com", "lpt") for i in range(1, 10)}
)
_OUTPUT_SUFFIX = ".output"
_NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_MCP_HINTS = {
    "readOnlyHint": "x-read-only",
    "destructiveHint": "x-destructive",
    "idempotentHint": "x-idempotent",
    "openWorldHint": "x-open-world",
}


@dataclass(frozen=True, slots=True)
class ImportedTool:
    """A tool as imported: its canonical schemas, ready to be written as files.

    Attributes:
        name: the tool's name as the source gave it.
        schema: the canonical input schema: header, then the parameter schema's keywords.
        output_schema: the canonical output schema (``<file_name>.output.json``), if the source
            had one (MCP ``outputSchema``, OpenAI ``output_schema``, BFCL ``response``).
        annotations: the MCP annotation hints as the ``x-`` keywords written into ``schema``,
            such as ``{"x-read-only": True}``.
        notes: every change made beyond the header, in document order.
    """

    name: str
    schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = field(default_factory=dict[str, Any])
    notes: tuple[Normalisation, ...] = ()

    @property
    def file_name(self) -> str:
        """The file stem of the input schema: the name, unless it cannot be a file name."""
        return str(self.schema["$id"]).rsplit("/", 1)[-1].removesuffix(".json")


class ImportOptions(TypedDict, total=False):
    """Options every importer takes.

    Attributes:
        id_base: the URI the ``$id`` of every schema starts with; it must end with ``/``.
        version: the ``x-version`` of every schema, a semantic version.
    """

    id_base: str
    version: str


def import_mcp(
    tools: Any, *, id_base: str = "https://example.com/", version: str = "1.0.0"
) -> tuple[ImportedTool, ...]:
    """Import the tools of an MCP ``tools/list`` result (or of its ``tools`` list).

    Accepts ``{"tools": [...]}``, the whole JSON-RPC response around it, or the list itself.
    ``title`` (or ``annotations.title``) becomes the schema title, ``outputSchema`` the output
    schema, and the annotation hints become ``x-read-only``, ``x-destructive``,
    ``x-idempotent`` and ``x-open-world``.

    Raises:
        InputError: the input is not a list of MCP tools, or a tool cannot be imported.
        UsageError: ``id_base`` or ``version`` is not usable.
    """
    return _import("mcp", tools, _read_mcp_tool, id_base, version)


# One public function per format, alike by design: what differs is the reader _import gets.
def import_openai(
    tools: Any, *, id_base: str = "https://example.com/", version: str = "1.0.0"
) -> tuple[ImportedTool, ...]:
    """Import an OpenAI ``tools`` array.

    Accepts Chat Completions tools (``{"type": "function", "function": {...}}``), Responses
    tools (``{"type": "function", "name": ..., "parameters": ...}``) and bare function objects,
    including those written in the dialect of public function-calling collections.

    Raises:
        InputError: the input is not a list of function tools, or a tool cannot be imported.
        UsageError: ``id_base`` or ``version`` is not usable.
    """
    return _import("openai", tools, _read_openai_tool, id_base, version)


def import_anthropic(
    tools: Any, *, id_base: str = "https://example.com/", version: str = "1.0.0"
) -> tuple[ImportedTool, ...]:
    """Import an Anthropic Messages API ``tools`` array of custom tools.

    ``input_examples`` become the schema's ``examples``.

    Raises:
        InputError: the input is not a list of custom tools, or a tool cannot be imported.
        UsageError: ``id_base`` or ``version`` is not usable.
    """
    return _import("anthropic", tools, _read_anthropic_tool, id_base, version)


def import_tools(
    source: Literal["mcp", "openai", "anthropic"], tools: Any, **options: Unpack[ImportOptions]
) -> tuple[ImportedTool, ...]:
    """Import ``tools`` written for ``source``: `import_mcp`, `import_openai` or `import_anthropic`.

    Raises:
        InputError: the tools cannot be imported.
        UsageError: ``source`` is none of the three, or an option is not usable.
    """
    importers = {"mcp": import_mcp, "openai": import_openai, "anthropic": import_anthropic}
    importer = importers.get(source)
    if importer is None:
        raise UsageError(f"source must be one of {', '.join(importers)}, got {quoted(source)}")
    return importer(tools, **options)


def normalise_schema(schema: Any) -> tuple[dict[str, Any], tuple[Normalisation, ...]]:
    """The dialect fixes alone: ``schema`` as standard draft 2020-12, and what was changed.

    Tool-level steps (the header, ``"type": "object"`` at the root, flat parameter maps) are the
    importers' business, not this function's. A standard schema comes back equal to the input.

    Raises:
        InputError: ``schema`` is not an object, or is not valid draft 2020-12 once normalised.
    """
    source = "<schema>"
    checked = _checked_json(schema, "", source, 0)
    if not isinstance(checked, dict):
        raise invalid(source, "", f"a schema must be a JSON object, got {_kind(checked)}")
    normaliser = SchemaNormaliser(source, "input")
    result = normaliser.root(checked, At("", ""))
    _check_metaschema(result, normaliser, source)
    return result, tuple(normaliser.notes)


# --- reading envelopes ------------------------------------------------------------------------


@dataclass(slots=True)
class _ToolSource:
    """What one envelope says about a tool, before any schema is normalised.

    ``parameters_at`` and ``output_at`` point into the input; ``dropped`` names the envelope
    fields (with their values) that have no place in the canonical schema.
    """

    name: str
    at: str
    title: str | None = None
    description: str | None = None
    parameters: Any = None
    parameters_at: str = ""
    output: Any = None
    output_at: str = ""
    annotations: dict[str, bool] = field(default_factory=dict[str, bool])
    examples: list[Any] | None = None
    dropped: list[tuple[str, Any]] = field(default_factory=list[tuple[str, Any]])


_Reader = Callable[[dict[str, Any], str, str], _ToolSource]


def _import(
    kind: str, tools: Any, read: _Reader, id_base: str, version: str
) -> tuple[ImportedTool, ...]:
    _check_options(id_base, version)
    source = f"<{kind} tools>"
    entries = _tool_entries(_checked_json(tools, "", source, 0), source)
    imported: list[ImportedTool] = []
    stems: dict[str, str] = {}
    for at, entry in entries:
        tool_source = read(entry, at, source)
        tool = _canonical_tool(tool_source, source, id_base, version)
        _refuse_duplicate(tool, tool_source, stems, source)
        imported.append(tool)
    return tuple(imported)


def _check_options(id_base: str, version: str) -> None:
    if not isinstance(id_base, str) or not id_base.endswith("/"):
        raise UsageError(f"id_base must be a URI ending with '/', got {quoted(id_base)}")
    if not isinstance(version, str) or not _SEMVER.match(version):
        raise UsageError(f"version must be a semantic version such as 1.0.0, got {quoted(version)}")


def _tool_entries(tools: Any, source: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool objects and their pointers, from a list or a ``{"tools": [...]}`` wrapper."""
    prefix = ""
    if isinstance(tools, dict) and isinstance(tools.get("result"), dict):
        tools, prefix = tools["result"], "/result"  # a whole JSON-RPC response
    if isinstance(tools, dict) and "tools" in tools:
        tools, prefix = tools["tools"], prefix + "/tools"
    if not isinstance(tools, list):
        raise invalid(source, prefix, f"expected a list of tools, got {_kind(tools)}")
    for index, entry in enumerate(tools):
        if not isinstance(entry, dict):
            raise invalid(
                source, join(prefix, index), f"a tool must be an object, got {_kind(entry)}"
            )
    return [(join(prefix, index), entry) for index, entry in enumerate(tools)]


def _refuse_duplicate(
    tool: ImportedTool, tool_source: _ToolSource, stems: dict[str, str], source: str
) -> None:
    # Case-insensitive file systems (macOS, Windows) would write both tools to one file.
    key = tool.file_name.casefold()
    if key in stems:
        raise invalid(
            source,
            join(tool_source.at, "name"),
            f"tool {quoted(tool.name)} has the same name (or file name) as tool "
            f"{quoted(stems[key])}",
        )
    stems[key] = tool.name


def _read_mcp_tool(tool: dict[str, Any], at: str, source: str) -> _ToolSource:
    known = {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
    found = _read_common(tool, at, source, "inputSchema", known)
    found.title = _optional_text(tool, "title", at, source)
    found.output, found.output_at = tool.get("outputSchema"), join(at, "outputSchema")
    _read_mcp_annotations(tool.get("annotations"), found, source)
    return found


def _read_mcp_annotations(annotations: Any, found: _ToolSource, source: str) -> None:
    at = join(found.at, "annotations")
    if annotations is not None and not isinstance(annotations, dict):
        raise invalid(source, at, f"annotations must be an object, got {_kind(annotations)}")
    for key, value in (annotations or {}).items():
        if key in _MCP_HINTS:
            if not isinstance(value, bool):
                raise invalid(source, join(at, key), f"{key} must be true or false")
            found.annotations[_MCP_HINTS[key]] = value
        elif key == "title" and isinstance(value, str) and found.title in (None, value):
            found.title = value  # the display name when the tool has no title of its own
        else:
            found.dropped.append((f"annotations.{key}", value))


def _read_openai_tool(tool: dict[str, Any], at: str, source: str) -> _ToolSource:
    kind = tool.get("type")
    if kind is not None and kind != "function":
        raise invalid(
            source, join(at, "type"), f"only function tools have a schema, not {quoted(kind)}"
        )
    if "function" not in tool or "name" in tool:
        return _read_function({k: v for k, v in tool.items() if k != "type"}, at, source)
    function = tool["function"]  # Chat Completions: {"type": "function", "function": {...}}
    if not isinstance(function, dict):
        raise invalid(source, join(at, "function"), "function must be an object")
    found = _read_function(function, join(at, "function"), source)
    found.dropped.extend((k, v) for k, v in tool.items() if k not in ("type", "function"))
    return found


def _read_function(function: dict[str, Any], at: str, source: str) -> _ToolSource:
    """A function object: Chat's ``function``, a Responses tool, or a bare one (BFCL)."""
    # Responses tools call the result's schema output_schema; BFCL function docs call it response.
    output_key = "output_schema" if "output_schema" in function else "response"
    known = {"name", "description", "parameters", output_key}
    found = _read_common(function, at, source, "parameters", known)
    found.output, found.output_at = function.get(output_key), join(at, output_key)
    return found


def _read_anthropic_tool(tool: dict[str, Any], at: str, source: str) -> _ToolSource:
    kind = tool.get("type")
    if kind is not None and kind != "custom":
        raise invalid(
            source, join(at, "type"), f"only custom tools have a schema, not {quoted(kind)}"
        )
    known = {"name", "description", "input_schema", "input_examples", "type"}
    found = _read_common(tool, at, source, "input_schema", known)
    examples = tool.get("input_examples")
    if examples is not None and not isinstance(examples, list):
        raise invalid(source, join(at, "input_examples"), "input_examples must be a list")
    found.examples = examples
    return found


def _read_common(
    tool: dict[str, Any], at: str, source: str, parameters_key: str, known: set[str]
) -> _ToolSource:
    """The fields every envelope has: name, description, parameters, and those it drops."""
    found = _ToolSource(_name(tool, at, source), at)
    found.description = _optional_text(tool, "description", at, source)
    found.parameters, found.parameters_at = tool.get(parameters_key), join(at, parameters_key)
    found.dropped.extend((key, value) for key, value in tool.items() if key not in known)
    return found


def _name(tool: dict[str, Any], at: str, source: str) -> str:
    name = tool.get("name")
    if "name" not in tool:
        raise invalid(source, at, "the tool has no name")
    if not isinstance(name, str) or not name:
        raise invalid(
            source, join(at, "name"), f"name must be a non-empty string, got {_kind(name)}"
        )
    return name


def _optional_text(tool: dict[str, Any], key: str, at: str, source: str) -> str | None:
    value = tool.get(key)
    if value is not None and not isinstance(value, str):
        raise invalid(source, join(at, key), f"{key} must be a string, got {_kind(value)}")
    return value


# --- canonical schemas ------------------------------------------------------------------------


def _canonical_tool(found: _ToolSource, source: str, id_base: str, version: str) -> ImportedTool:
    notes: list[Normalisation] = []
    stem = _file_stem(found.name)
    if stem != found.name:
        detail = f"tool {quoted(found.name)} is written to {stem}.json"
        notes.append(Normalisation("/$id", NormalisationCode.NAME_CHANGED_FOR_FILE, detail))
    schema = _input_schema(found, source, id_base + f"schemas/tools/{stem}.json", version, notes)
    output = None
    if found.output is not None:
        output_id = id_base + f"schemas/tools/{stem}{_OUTPUT_SUFFIX}.json"
        output = _output_schema(found, source, output_id, version, notes)
    notes.extend(_dropped_field_notes(found.dropped))
    return ImportedTool(found.name, schema, output, dict(found.annotations), tuple(notes))


def _file_stem(name: str) -> str:
    """``name`` as a file stem legal everywhere, and not mistaken for an output schema."""
    stem = _NOT_IN_FILE_NAMES.sub("_", name)
    if stem.endswith((".", " ")):
        stem = stem[:-1] + "_"  # Windows drops a trailing dot or space
    if stem.split(".", 1)[0].casefold() in _WINDOWS_DEVICES:
        stem = "_" + stem
    if stem.endswith(_OUTPUT_SUFFIX):
        stem = stem.removesuffix(_OUTPUT_SUFFIX) + "_output"
    return stem


def _input_schema(
    found: _ToolSource, source: str, schema_id: str, version: str, notes: list[Normalisation]
) -> dict[str, Any]:
    normaliser = SchemaNormaliser(source, "input")
    body = _parameter_schema(found, normaliser)
    header = _header(schema_id, version, found.title, found.description, body)
    schema = normaliser.with_header(header, body)
    if found.examples is not None:
        normaliser.move_examples(schema, found.examples)
    normaliser.add_annotations(schema, found.annotations)
    _check_metaschema(schema, normaliser, source)
    notes.extend(normaliser.notes)
    return schema


def _parameter_schema(found: _ToolSource, normaliser: SchemaNormaliser) -> dict[str, Any]:
    parameters, at = found.parameters, At(found.parameters_at, "")
    normaliser.node_origin(at)
    if parameters is None:
        normaliser.note(
            "",
            NormalisationCode.PARAMETERS_MISSING,
            "the tool had no parameter schema: it takes no arguments",
        )
        return dict(_NO_PARAMETERS, properties={})
    if not isinstance(parameters, dict):
        raise normaliser.fail(at.source, f"parameters must be an object, got {_kind(parameters)}")
    if _is_parameter_map(parameters):
        return normaliser.wrap_parameter_map(parameters, at)
    body = normaliser.root(parameters, at)
    return normaliser.object_root(body, at)


def _is_parameter_map(parameters: dict[str, Any]) -> bool:
    """Whether ``parameters`` maps names to schemas (xLAM) instead of being a schema itself."""
    if not parameters or isinstance(parameters.get("type"), str | list):
        return False
    return all(
        key not in SCHEMA_SHAPES
        and isinstance(value, dict)
        and (isinstance(value.get("type"), str) or isinstance(value.get("description"), str))
        for key, value in parameters.items()
    )


def _header(
    schema_id: str, version: str, title: str | None, description: str | None, body: dict[str, Any]
) -> dict[str, Any]:
    header: dict[str, Any] = {"$schema": DRAFT_2020_12, "$id": schema_id, "x-version": version}
    title = title if title is not None else body.get("title")
    description = description if description is not None else body.get("description")
    if title is not None:
        header["title"] = title
    if description is not None:
        header["description"] = description
    return header


def _output_schema(
    found: _ToolSource, source: str, schema_id: str, version: str, notes: list[Normalisation]
) -> dict[str, Any]:
    normaliser = SchemaNormaliser(source, "output")
    output, at = found.output, At(found.output_at, "")
    if not isinstance(output, dict):
        raise normaliser.fail(at.source, f"an output schema must be an object, got {_kind(output)}")
    body = normaliser.root(output, at)
    header = _header(schema_id, version, None, None, body)
    schema = normaliser.with_header(header, body)
    _check_metaschema(schema, normaliser, source)
    notes.extend(normaliser.notes)
    return schema


def _dropped_field_notes(dropped: list[tuple[str, Any]]) -> Iterator[Normalisation]:
    for key, value in dropped:
        if value is None or value is False:
            continue  # the field's default: nothing is lost
        yield Normalisation(
            "",
            NormalisationCode.FIELD_DROPPED,
            f"envelope field {quoted(key)} ({quoted(value)}) has no place in the canonical schema",
        )


def _check_metaschema(schema: dict[str, Any], normaliser: SchemaNormaliser, source: str) -> None:
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as error:
        at = normaliser.source_of(to_pointer(error.instance_path))
        raise normaliser.fail(at, f"not valid JSON Schema 2020-12: {error.message}") from None
    except jsonschema_rs.ReferencingError as error:
        raise normaliser.fail(normaliser.source_of(""), f"cannot be checked: {error}") from None


# --- input checks -----------------------------------------------------------------------------


def _checked_json(value: Any, pointer: str, source: str, depth: int) -> Any:
    """A private copy of ``value``, refused unless it is JSON: str keys, finite numbers, bounded."""
    if depth > DEFAULT_LIMITS.max_depth:
        raise invalid(source, pointer, f"nested deeper than {DEFAULT_LIMITS.max_depth} levels")
    if isinstance(value, dict):
        copied: dict[str, Any] = {}
        for key, member in value.items():
            if not isinstance(key, str):
                raise invalid(source, pointer, f"object key {quoted(key)} is not a string")
            copied[key] = _checked_json(member, join(pointer, key), source, depth + 1)
        return copied
    if isinstance(value, list):
        return [_checked_json(v, join(pointer, i), source, depth + 1) for i, v in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise invalid(source, pointer, f"{value} is not a JSON number")
    if value is None or isinstance(value, str | int | float):
        return value
    raise invalid(source, pointer, f"{type(value).__name__} is not a JSON value")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")
