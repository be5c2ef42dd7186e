"""A repository of schema files: discovered, identified by ``$id``, resolved locally, checked.

    schemas/tools/create_refund.json           a tool's input schema; tool name = file stem
    schemas/tools/create_refund.output.json    that tool's output schema
    schemas/handoffs/triage_to_billing.json    an object one agent hands to the next
    schemas/state/refund_flow.json             a workflow's checkpointed state
    schemas/common/money.json                  shared definitions that the others $ref

`Repository.load` reads every file, checks what makes a file a usable schema (JSON, dialect,
metaschema, a stable ``$id``, a semver ``x-version``, references that resolve inside the
repository), and collects each problem as a `Finding`: one bad file never hides the others.
References resolve through a registry of the repository's own files; nothing is ever fetched.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import jsonschema_rs

from schemawire._json import load_file, quoted
from schemawire._pointer import join
from schemawire.errors import ErrorCode, JSONError, SchemaError
from schemawire.schema.config import Config, load_config
from schemawire.schema.dialect import Dialect, dialect_named
from schemawire.schema.files import json_files, linked_outside, relpath
from schemawire.schema.rules import Finding, rule
from schemawire.schema.validator import CompiledSchema, compile_schema, metaschema_violations
from schemawire.schema.walk import Site, iter_sites
from schemawire.types import ToolSpec

__all__ = ["KINDS", "Reference", "Repository", "SchemaFile", "unreadable"]

KINDS = ("tools", "handoffs", "state", "common")
OUTPUT_SUFFIX = ".output"

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,
)
_REFERENCE_KEYWORDS = ("$ref", "$dynamicRef")


@dataclass(frozen=True, slots=True)
class SchemaFile:
    """One schema file of the repository.

    Attributes:
        kind: ``tools``, ``handoffs``, ``state`` or ``common``.
        name: the file stem: a tool's name, or ``<tool>.output`` for its output schema.
        relpath: path relative to the repository root, with ``/`` separators.
        path: absolute path.
        document: the parsed JSON (None when the file could not be read).
        dialect: the dialect ``$schema`` names, or None when unsupported or unreadable.
        uri: the ``$id``, or for a file without a usable one, its file URI (for resolution).
        readable: whether the file could be read as JSON at all.
    """

    kind: str
    name: str
    relpath: str
    path: Path
    document: Any
    dialect: Dialect | None
    uri: str
    readable: bool = True

    @property
    def schema_id(self) -> str | None:
        """The ``$id``, if the file declares one as a string."""
        value = self.document.get("$id") if isinstance(self.document, dict) else None
        return value if isinstance(value, str) else None

    @property
    def version(self) -> str | None:
        """The ``x-version``, if the file declares one as a string."""
        value = self.document.get("x-version") if isinstance(self.document, dict) else None
        return value if isinstance(value, str) else None

    @property
    def is_output(self) -> bool:
        """Whether this is a tool's output schema (``<name>.output.json``)."""
        return self.kind == "tools" and self.name.endswith(OUTPUT_SUFFIX)

    @property
    def is_tool_input(self) -> bool:
        """Whether this is a tool's input schema."""
        return self.kind == "tools" and not self.is_output

    @property
    def usable(self) -> bool:
        """Whether the file holds an object schema in a supported dialect."""
        return isinstance(self.document, dict) and self.dialect is not None


@dataclass(frozen=True, slots=True)
class Reference:
    """One ``$ref`` (or ``$dynamicRef``) of a schema file, resolved to an absolute target.

    Attributes:
        file: the path of the file that holds it, relative to the root.
        pointer: where the keyword is in that file.
        value: the reference as written.
        base_uri: the base URI it is resolved against.
        target: the absolute URI of the resource it names, without fragment ("" when the
            reference is not a URI reference).
        fragment: the fragment, percent-decoded: a JSON Pointer, an anchor name, or "".
    """

    file: str
    pointer: str
    value: str
    base_uri: str
    target: str
    fragment: str


class Repository:
    """The schema files of one repository, their problems, and validators for them.

    Load one with `Repository.load`. Validators are compiled on first use and cached.
    """

    def __init__(
        self,
        config: Config,
        files: tuple[SchemaFile, ...],
        *,
        findings: tuple[Finding, ...],
        registry: jsonschema_rs.Registry,
        sites: dict[str, tuple[Site, ...]],
        references: tuple[Reference, ...],
        index: _FileIndex | None = None,
    ) -> None:
        self.config = config
        self.files = files
        self.findings = findings
        self.registry = registry
        self.references = references
        self._sites = sites
        self._by_id = {f.schema_id: f for f in reversed(files) if f.schema_id is not None}
        self._index = index if index is not None else _FileIndex(files, config.id_base)
        self._validators: dict[str, CompiledSchema] = {}

    @classmethod
    def load(cls, start: str | Path = ".", *, config: Config | None = None) -> Repository:
        """Read and check every schema file of the repository that holds ``start``.

        Raises:
            ConfigError: the repository's settings cannot be used.
        """
        config = config if config is not None else load_config(start)
        findings: list[Finding] = []
        files = tuple(
            _read(config, kind, path, may_read, findings)
            for kind, path, may_read in _discover(config)
        )
        for file in files:
            findings.extend(_check_file(file, config))
        findings.extend(_check_ids(files))
        findings.extend(_check_names(files))
        registry, missing = _build_registry(files)
        sites = {
            f.relpath: tuple(iter_sites(f.document, f.dialect, f.uri))
            for f in files
            if f.usable and f.dialect is not None
        }
        references = tuple(r for f in files for r in _references(f, sites.get(f.relpath, ())))
        index = _FileIndex(files, config.id_base)
        findings.extend(_check_references(references, registry, missing, index))
        return cls(
            config,
            files,
            findings=tuple(findings),
            registry=registry,
            sites=sites,
            references=references,
            index=index,  # built once: resolving every file's path is not free
        )

    @property
    def root(self) -> Path:
        """The repository's root directory."""
        return self.config.root

    def find(self, reference: str) -> SchemaFile | None:
        """The file whose ``$id``, path (relative to the root) or tool name is ``reference``."""
        by_id = self._by_id.get(reference) or self._by_id.get(reference.partition("#")[0])
        if by_id is not None:
            return by_id
        for file in self.files:
            if reference in (file.relpath, f"{file.kind}/{file.name}") or (
                file.is_tool_input and reference == file.name
            ):
                return file
        return None

    def referenced_file(self, reference: Reference) -> SchemaFile | None:
        """The file of this repository that ``reference`` names, even one that cannot be read:
        by ``$id``, by its path from the referring file, or by ``id-base`` and its path."""
        return self._index.file_of(reference)

    @functools.cached_property
    def documents(self) -> dict[str, Any]:
        """Every usable schema document, by its URI (``$id``): what a ``$ref`` may name."""
        return {f.uri: f.document for f in self.files if f.usable}

    def sites(self, file: SchemaFile) -> tuple[Site, ...]:
        """Every subschema of ``file`` (none when the file is not a usable schema)."""
        return self._sites.get(file.relpath, ())

    def validator(self, file: SchemaFile) -> CompiledSchema:
        """The compiled validator of ``file``, resolving references within the repository.

        Raises:
            SchemaError: the file does not hold a usable schema, or it does not compile.
        """
        compiled = self._validators.get(file.relpath)
        if compiled is None:
            if not file.usable:
                raise SchemaError(
                    ErrorCode.SCHEMA_INVALID, "not a usable schema", source=file.relpath
                )
            compiled = compile_schema(
                file.document,
                registry=self.registry,
                base_uri=file.uri,
                dialect=file.dialect,
                source=file.relpath,
            )
            self._validators[file.relpath] = compiled
        return compiled

    def tools(self) -> tuple[ToolSpec, ...]:
        """Every tool, from its input schema and its output schema when there is one."""
        return self.specs("tools")

    def specs(self, *kinds: str) -> tuple[ToolSpec, ...]:
        """Every usable schema of ``kinds`` as a spec to project; for ``tools``, one per tool
        (its input schema, with its output schema beside it)."""
        outputs = {f.name.removesuffix(OUTPUT_SUFFIX): f for f in self.files if f.is_output}
        return tuple(
            _tool_spec(f, outputs.get(f.name) if f.kind == "tools" else None)
            for f in self.files
            if f.kind in kinds and f.usable and not f.is_output
        )


def _discover(config: Config) -> Iterator[tuple[str, Path, bool]]:
    for kind, directory in config.kind_dirs().items():
        for path, readable in json_files(config.root, config.root / directory):
            yield kind, path, readable


def _read(
    config: Config, kind: str, path: Path, may_read: bool, findings: list[Finding]
) -> SchemaFile:
    relative = relpath(config.root, path)
    name = path.name.removesuffix(".json")
    document: Any = None
    try:
        if not may_read:
            raise linked_outside()
        document = load_file(path, source=relative)
    except (JSONError, OSError) as error:
        findings.append(unreadable(relative, error))
        return SchemaFile(kind, name, relative, path, None, None, path.as_uri(), readable=False)
    uri = _own_uri(document) or path.resolve().as_uri()
    return SchemaFile(kind, name, relative, path, document, _dialect_of(document), uri)


def unreadable(relpath: str, error: JSONError | OSError) -> Finding:
    """The SW001 finding for a file that cannot be read, or read as JSON, at its position."""
    if isinstance(error, OSError):
        return Finding(rule("SW001"), relpath, "", f"cannot read: {error.strerror or error}")
    finding = Finding(rule("SW001"), relpath, error.pointer or "", error.message)
    if error.line is not None and error.column is not None:
        return finding.at(error.line, error.column)
    return finding


def _dialect_of(document: Any) -> Dialect | None:
    if not isinstance(document, dict):
        return None
    declared = document.get("$schema")
    return dialect_named(declared) if declared is None or isinstance(declared, str) else None


def _own_uri(document: Any) -> str | None:
    """The ``$id`` when it is usable as a base URI: absolute, without a fragment."""
    identifier = document.get("$id") if isinstance(document, dict) else None
    if not isinstance(identifier, str) or "#" in identifier:
        return None
    try:
        return identifier if urlsplit(identifier).scheme else None
    except ValueError:  # not a URI at all, such as "http://[::1"
        return None


def _check_file(file: SchemaFile, config: Config) -> Iterator[Finding]:
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
    elif _own_uri(file.document) is None:
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


def _check_ids(files: tuple[SchemaFile, ...]) -> Iterator[Finding]:
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


def _check_names(files: tuple[SchemaFile, ...]) -> Iterator[Finding]:
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


def _build_registry(files: tuple[SchemaFile, ...]) -> tuple[jsonschema_rs.Registry, set[str]]:
    """A registry of the repository's files, and the URIs their references name but lack.

    jsonschema-rs resolves every reference while it builds a registry; an unknown URI is recorded
    and stands in as a ``false`` schema, so that building never fails and validation of anything
    that depends on it fails closed.
    """
    missing: set[str] = set()

    def record_missing(uri: str) -> bool:
        missing.add(urldefrag(uri).url)
        return False

    resources: dict[str, Any] = {}
    for file in files:
        if file.usable:
            resources.setdefault(file.uri, file.document)
    try:
        registry = jsonschema_rs.Registry(list(resources.items()), retriever=record_missing)
    except (jsonschema_rs.ReferencingError, ValueError):
        # One malformed reference fails the whole registry: keep every file that builds alone.
        resources = {uri: doc for uri, doc in resources.items() if _builds_alone(uri, doc)}
        registry = jsonschema_rs.Registry(list(resources.items()), retriever=record_missing)
    return registry, missing


def _builds_alone(uri: str, document: Any) -> bool:
    try:
        jsonschema_rs.Registry([(uri, document)], retriever=lambda _: False)
    except (jsonschema_rs.ReferencingError, ValueError):
        return False
    return True


def _references(file: SchemaFile, sites: tuple[Site, ...]) -> Iterator[Reference]:
    for site in sites:
        if not isinstance(site.schema, dict):
            continue
        for keyword in _REFERENCE_KEYWORDS:
            value = site.schema.get(keyword)
            if isinstance(value, str):
                target, fragment = _target_of(value, site.base_uri)
                pointer = join(site.pointer, keyword)
                yield Reference(file.relpath, pointer, value, site.base_uri, target, fragment)


def _target_of(reference: str, base_uri: str) -> tuple[str, str]:
    """The absolute resource URI a reference names and its (percent-decoded) fragment; an
    empty URI when the reference is not a URI reference at all."""
    try:
        target = urldefrag(urljoin(base_uri, reference))
    except ValueError:
        return "", ""
    return target.url, unquote(target.fragment)


class _FileIndex:
    """The repository file a reference names, including files that cannot be read (whose
    ``$id`` is unknown): they are found by their path."""

    def __init__(self, files: tuple[SchemaFile, ...], id_base: str | None) -> None:
        self._by_uri = {f.uri: f for f in reversed(files)}
        self._by_path = {f.path.resolve().as_uri(): f for f in reversed(files)}
        self._by_relpath = {f.relpath: f for f in reversed(files)}
        self._id_base = id_base

    def file_of(self, reference: Reference) -> SchemaFile | None:
        """The file ``reference`` names, or None when it names none of the repository's."""
        if not reference.target:
            return None
        return (
            self._by_uri.get(reference.target)
            or self._by_location(reference)
            or self._by_id_base(reference.target)
        )

    def _by_location(self, reference: Reference) -> SchemaFile | None:
        referrer = self._by_relpath.get(reference.file)
        address = reference.value.partition("#")[0]
        try:
            if referrer is None or not address or urlsplit(address).scheme:
                return None
            return self._by_path.get(urljoin(referrer.path.resolve().as_uri(), address))
        except ValueError:  # not a URI reference at all
            return None

    def _by_id_base(self, target: str) -> SchemaFile | None:
        if self._id_base is None or not target.startswith(self._id_base):
            return None
        return self._by_relpath.get(target.removeprefix(self._id_base))


def _check_references(
    references: tuple[Reference, ...],
    registry: jsonschema_rs.Registry,
    missing: set[str],
    index: _FileIndex,
) -> Iterator[Finding]:
    """SW011 for each reference that resolves to nothing; a reference to a file of the
    repository that cannot be read is not blamed here (`schema.breakage` names the file)."""
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


def _tool_spec(file: SchemaFile, output: SchemaFile | None) -> ToolSpec:
    output_schema = output.document if output is not None and output.usable else None
    return ToolSpec(file.name, file.document, output_schema)
