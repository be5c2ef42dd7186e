"""The repository rules SW001-SW013: what makes each file a usable schema of the repository.

Every file is JSON holding an object (SW001, SW002) in a supported dialect (SW003) that its
metaschema accepts (SW004), with a stable ``$id`` (SW005-SW008) and a semver ``x-version``
(SW009, SW010); every reference resolves inside the repository (SW011); an output schema has its
tool (SW012) and no two files of a kind share a name (SW013). Each problem is a `Finding`: one
bad file never hides the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import jsonschema_rs

from schemawire._json import quoted
from schemawire.errors import JSONError
from schemawire.schema.config import Config
from schemawire.schema.references import FileIndex, Reference
from schemawire.schema.rules import Finding, rule
from schemawire.schema.schema_file import OUTPUT_SUFFIX, SchemaFile, own_uri
from schemawire.schema.validator import metaschema_violations

__all__ = ["check_file", "check_ids", "check_names", "check_references", "unreadable"]

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,
)


def unreadable(relpath: str, error: JSONError | OSError) -> Finding:
    """The SW001 finding for a file that cannot be read, or read as JSON, at its position."""
    if isinstance(error, OSError):
        return Finding(rule("SW001"), relpath, "", f"cannot read: {error.strerror or error}")
    finding = Finding(rule("SW001"), relpath, error.pointer or "", error.message)
    if error.line is not None and error.column is not None:
        return finding.at(error.line, error.column)
    return finding


def check_file(file: SchemaFile, config: Config) -> Iterator[Finding]:
    """SW002-SW007, SW009 and SW010: what makes one file a usable, identified, versioned schema."""
    document = file.document
    if not file.readable:
        return  # already reported
    if not isinstance(document, dict):
        yield Finding(
            rule("SW002"),
            file.relpath,
            "",
            "the file holds no JSON object",
            hint="wrap the schema in { ... }",
        )
        return
    if file.dialect is None:
        yield Finding(
            rule("SW003"),
            file.relpath,
            "/$schema",
            f"unsupported $schema {quoted(document.get('$schema'))}",
            hint="use https://json-schema.org/draft/2020-12/schema or "
            "http://json-schema.org/draft-07/schema#",
        )
    own = [*_check_id(file, config), *_check_version(file)]
    explained = {finding.pointer for finding in own}  # say it once, in the clearer words
    for violation in metaschema_violations(document, file.dialect) if file.dialect else ():
        if violation.pointer not in explained:
            yield Finding(rule("SW004"), file.relpath, violation.pointer, violation.message)
    yield from own


def _check_id(file: SchemaFile, config: Config) -> Iterator[Finding]:
    identifier = file.document.get("$id")
    expected = config.id_base + file.relpath if config.id_base else None
    hint = f'add "$id": "{expected}"' if expected else None
    if identifier is None:
        yield Finding(rule("SW005"), file.relpath, "", "no $id", hint=hint)
    elif own_uri(file.document) is None:
        yield Finding(
            rule("SW006"),
            file.relpath,
            "/$id",
            f"$id {quoted(identifier)} is not an absolute URI without a fragment",
            hint=hint,
        )
    elif expected is not None and identifier != expected:
        yield Finding(
            rule("SW007"),
            file.relpath,
            "/$id",
            f"$id {quoted(identifier)} does not match the file's path",
            hint=f'use "$id": "{expected}"',
        )


def _check_version(file: SchemaFile) -> Iterator[Finding]:
    version = file.document.get("x-version")
    if version is None:
        yield Finding(
            rule("SW009"), file.relpath, "", "no x-version", hint='add "x-version": "1.0.0"'
        )
    elif not isinstance(version, str) or not _SEMVER.match(version):
        yield Finding(
            rule("SW010"),
            file.relpath,
            "/x-version",
            f"x-version {quoted(version)} is not a semantic version (MAJOR.MINOR.PATCH)",
        )


def check_ids(files: tuple[SchemaFile, ...]) -> Iterator[Finding]:
    """SW008 for each file whose ``$id`` an earlier file already has."""
    first_with: dict[str, SchemaFile] = {}
    for file in files:
        identifier = file.schema_id
        if identifier is None:
            continue
        if identifier in first_with:
            yield Finding(
                rule("SW008"),
                file.relpath,
                "/$id",
                f"$id {quoted(identifier)} is also the $id of {first_with[identifier].relpath}",
                hint="give each file its own $id",
            )
        else:
            first_with[identifier] = file


def check_names(files: tuple[SchemaFile, ...]) -> Iterator[Finding]:
    """SW013 for a name two files of one kind share; SW012 for an output schema without its
    tool."""
    seen: dict[tuple[str, str], SchemaFile] = {}
    for file in files:
        key = (file.kind, file.name)
        if key in seen:
            yield Finding(
                rule("SW013"),
                file.relpath,
                "",
                f"{file.kind} name {quoted(file.name)} is also used by {seen[key].relpath}",
            )
        else:
            seen[key] = file
    inputs = {f.name for f in files if f.is_tool_input}
    for file in files:
        tool = file.name.removesuffix(OUTPUT_SUFFIX)
        if file.is_output and tool not in inputs:
            yield Finding(
                rule("SW012"),
                file.relpath,
                "",
                f"output schema for {quoted(tool)}, but there is no {tool}.json",
                hint=f"add {tool}.json beside it, or rename the file",
            )


def check_references(
    references: tuple[Reference, ...],
    registry: jsonschema_rs.Registry,
    missing: set[str],
    index: FileIndex,
) -> Iterator[Finding]:
    """SW011 for each reference that resolves to nothing; a reference to a file of the
    repository that cannot be read is not blamed here (`schema._breakage` names the file)."""
    for reference in references:
        target = index.file_of(reference)
        if target is not None and not target.usable:
            continue
        problem = _reference_problem(reference, registry, missing)
        if problem:
            yield Finding(rule("SW011"), reference.file, reference.pointer, problem)


def _reference_problem(
    reference: Reference, registry: jsonschema_rs.Registry, missing: set[str]
) -> str | None:
    if not reference.target:
        return f"{quoted(reference.value)} is not a URI reference"
    if reference.target in missing:
        value = quoted(reference.value)
        return f"{value} names a schema that is not in this repository (never fetched)"
    try:
        registry.resolver(reference.base_uri).lookup(reference.value)
    except (jsonschema_rs.ReferencingError, ValueError) as exc:
        return f"{quoted(reference.value)} does not resolve: {getattr(exc, 'message', exc)}"
    return None
