"""The local JSON toolbox: format JSON and JSON Lines, and validate instance files.

Everything runs on the machine; nothing is uploaded. The command line (``schemawire fmt``,
``validate``) and the local web page call these functions; ``schemawire diff`` of two JSON
documents is `schemawire._patch`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from schemawire._json import (
    DEFAULT_LIMITS,
    JSONValue,
    ParseLimits,
    dumps,
    load_file,
    loads,
    loads_lines,
)
from schemawire.errors import ErrorCode, InputError, JSONError, SchemaError
from schemawire.schema._breakage import Unusable, diagnose
from schemawire.schema._positions import locate
from schemawire.schema.repository import Repository
from schemawire.schema.schema_file import SchemaFile
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import Violation

__all__ = [
    "Indent",
    "InstanceResult",
    "format_json",
    "format_json_lines",
    "load_schema",
    "repository_schema",
    "schema_from_text",
    "validate_file",
    "validate_text",
]

Indent: TypeAlias = Literal[2, 4, "\t"] | None
"""How `format_json` indents: 2 or 4 spaces, a tab per level, or None for one compact line."""


def format_json(
    text: bytes | str,
    *,
    limits: ParseLimits = DEFAULT_LIMITS,
    source: str = "<input>",
    indent: Indent = 2,
    sort_keys: bool = False,
) -> str:
    """``text`` formatted stably: two-space indentation (or ``indent``), key order kept (or
    sorted), non-ASCII readable.

    Formatting is idempotent and never changes a value (big integers stay exact).

    Raises:
        JSONError: ``text`` is not acceptable JSON.
    """
    value = loads(text, limits=limits, source=source)
    if indent is None:
        return dumps(value, indent=False, sort_keys=sort_keys) + "\n"
    return _reindented(dumps(value, sort_keys=sort_keys), indent) + "\n"


def _reindented(text: str, indent: Literal[2, 4, "\t"]) -> str:
    """Two-space indented ``text`` (from `dumps`) at ``indent`` per level. Only indentation
    starts a line of it: a string's own line breaks are written as escapes."""
    if indent == 2:
        return text
    unit = " " * indent if isinstance(indent, int) else indent
    lines = text.split("\n")
    return "\n".join(unit * ((len(ln) - len(ln.lstrip(" "))) // 2) + ln.lstrip(" ") for ln in lines)


def format_json_lines(
    text: bytes | str,
    *,
    limits: ParseLimits = DEFAULT_LIMITS,
    source: str = "<input>",
    sort_keys: bool = False,
) -> str:
    """JSON Lines formatted one compact value per line; blank lines are dropped.

    Raises:
        JSONError: the first line that is not acceptable JSON.
    """
    lines: list[str] = []
    for line in loads_lines(text, limits=limits, source=source):
        if line.error is not None:
            raise line.error
        lines.append(dumps(line.value, indent=False, sort_keys=sort_keys))
    return "".join(line + "\n" for line in lines)


@dataclass(frozen=True, slots=True)
class InstanceResult:
    """The verdict on one instance: a file, or one line of a JSON Lines file.

    ``error`` is set, and ``valid`` is False, when the instance could not be read as JSON.
    """

    source: str
    valid: bool
    violations: tuple[Violation, ...] = ()
    error: InputError | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"source", "valid", "violations": [{"pointer", "keyword", "message"}]}``, plus
        ``"error"`` when the instance could not be read."""
        result: dict[str, Any] = {
            "source": self.source,
            "valid": self.valid,
            "violations": [
                {"pointer": v.pointer, "keyword": v.keyword, "message": v.message}
                for v in self.violations
            ],
        }
        if self.error is not None:
            result["error"] = self.error.to_json()
        return result


def validate_file(
    schema: CompiledSchema,
    path: Path,
    *,
    label: str | None = None,
    limits: ParseLimits = DEFAULT_LIMITS,
) -> Iterator[InstanceResult]:
    """Check the JSON file at ``path`` (JSON Lines when it ends in ``.jsonl``) against ``schema``.

    One result per instance; an unreadable instance is a result too, so it hides no others.
    ``limits`` apply to the file, or to each line of a JSON Lines file.
    """
    source = label if label is not None else str(path)
    try:
        if path.suffix == ".jsonl":
            raw = path.read_bytes()
            yield from validate_text(schema, raw, source=source, lines=True, limits=limits)
        else:
            yield _verdict(schema, source, load_file(path, source=source, limits=limits))
    except JSONError as error:
        yield InstanceResult(source, False, error=error)
    except OSError as error:
        message = error.strerror or str(error)
        yield InstanceResult(
            source, False, error=InputError(ErrorCode.FILE_UNREADABLE, message, source=source)
        )


def validate_text(
    schema: CompiledSchema,
    text: bytes | str,
    *,
    source: str = "<input>",
    lines: bool = False,
    limits: ParseLimits = DEFAULT_LIMITS,
) -> Iterator[InstanceResult]:
    """Check one JSON text, or each line of a JSON Lines text, against ``schema``."""
    if not lines:
        try:
            yield _verdict(schema, source, loads(text, source=source, limits=limits))
        except JSONError as error:
            yield InstanceResult(source, False, error=error)
        return
    for line in loads_lines(text, source=source, limits=limits):
        label = f"{source}:{line.number}"
        if line.error is not None:
            yield InstanceResult(label, False, error=line.error)
        else:
            yield _verdict(schema, label, line.value)


def _verdict(schema: CompiledSchema, source: str, instance: JSONValue) -> InstanceResult:
    violations = schema.violations(instance)
    return InstanceResult(source, not violations, violations)


def load_schema(
    reference: str, *, repository_dir: Path | None = None
) -> tuple[CompiledSchema, str]:
    """The compiled schema that ``reference`` names, and a label for it.

    ``reference`` is a schema file, or the ``$id``, path or tool name of a schema in the
    repository that holds ``repository_dir`` (by default, the schema file's directory or the
    current one). A file's own ``$ref``s resolve through that repository.

    Raises:
        SchemaError: ``reference`` names no schema, or the schema cannot be used; the error
            names the file, and the place in it, where the cause is written (a shared
            definition the schema references, say).
        JSONError: the schema file is not acceptable JSON.
    """
    path = Path(reference)
    if path.is_file():
        return _load_schema_file(path, Repository.load(repository_dir or path.parent))
    return repository_schema(reference, repository_dir=repository_dir or Path("."))


def repository_schema(reference: str, *, repository_dir: Path) -> tuple[CompiledSchema, str]:
    """The compiled schema of the repository at ``repository_dir`` whose ``$id``, path or tool
    name is ``reference``, and its path. Unlike `load_schema`, ``reference`` is never read as
    a file of its own (the local page takes it from a request: no file outside the repository).

    Raises:
        SchemaError: no schema of the repository is named so, or it cannot be used.
    """
    repository = Repository.load(repository_dir)
    known = repository.find(reference)
    if known is None:
        raise SchemaError(
            ErrorCode.SCHEMA_UNKNOWN,
            f"no such file, and no schema of the repository at {repository.root.name}/ has this "
            "$id, path or tool name",
            source=reference,
        )
    return _validator(repository, known), known.relpath


def _validator(repository: Repository, file: SchemaFile) -> CompiledSchema:
    """The compiled ``file``, or an error at the cause when it cannot be used."""
    verdict = diagnose(repository, file)
    if verdict is not None:
        raise _unusable(repository, verdict)
    return repository.validator(file)


def _unusable(repository: Repository, verdict: Unusable) -> SchemaError:
    (cause,) = locate([verdict.cause], repository.root)
    message = cause.message
    if verdict.inherited:
        message = f"{verdict.file.relpath} depends on {cause.file}, which cannot be used: {message}"
    return SchemaError(
        ErrorCode.SCHEMA_INVALID,
        message,
        source=cause.file,
        pointer=cause.pointer or None,
        line=cause.line,
        column=cause.column,
    )


def schema_from_text(
    text: bytes | str, *, repository_dir: Path | None = None, source: str = "<schema>"
) -> CompiledSchema:
    """A schema given as text (pasted on the page), compiled; its ``$ref``s to a repository's
    schemas resolve through the repository at ``repository_dir``, when there is one.

    Raises:
        JSONError: ``text`` is not acceptable JSON.
        SchemaError: it is not a usable schema.
    """
    document = loads(text, source=source)
    if not isinstance(document, dict | bool):
        raise SchemaError(
            ErrorCode.SCHEMA_INVALID, "a schema must be an object or a boolean", source=source
        )
    registry = Repository.load(repository_dir).registry if repository_dir is not None else None
    return compile_schema(document, registry=registry, source=source)


def _load_schema_file(path: Path, repository: Repository) -> tuple[CompiledSchema, str]:
    resolved = path.resolve()
    if resolved.is_relative_to(repository.root):
        known = repository.find(resolved.relative_to(repository.root).as_posix())
        if known is not None:
            return _validator(repository, known), known.relpath
    document = load_file(path, source=str(path))
    if not isinstance(document, dict | bool):
        raise SchemaError(
            ErrorCode.SCHEMA_INVALID, "a schema must be an object or a boolean", source=str(path)
        )
    compiled = compile_schema(
        document, registry=repository.registry, base_uri=resolved.as_uri(), source=str(path)
    )
    return compiled, str(path)
