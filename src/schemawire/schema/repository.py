"""A repository of schema files: discovered, identified by ``$id``, resolved locally, checked.

`Repository.load` reads every file (`schemawire.schema.schema_file`), checks what makes a file a
usable schema (`schemawire.schema._repository_checks`: JSON, dialect, metaschema, a stable
``$id``, a semver ``x-version``, references that resolve inside the repository), and collects
each problem as a `Finding`: one bad file never hides the others. References resolve through a
registry of the repository's own files (`schemawire.schema.references`); nothing is ever
fetched.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs

from schemawire.errors import ErrorCode, SchemaError
from schemawire.schema._repository_checks import (
    check_file,
    check_ids,
    check_names,
    check_references,
    unreadable,
)
from schemawire.schema._walk import Site, iter_sites
from schemawire.schema.config import Config, load_config
from schemawire.schema.references import FileIndex, Reference, build_registry, references_of
from schemawire.schema.rules import Finding
from schemawire.schema.schema_file import OUTPUT_SUFFIX, SchemaFile, discover, read_schema_file
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import ToolSpec

__all__ = ["Repository"]


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
        index: FileIndex | None = None,
    ) -> None:
        self.config = config
        self.files = files
        self.findings = findings
        self.registry = registry
        self.references = references
        self._sites = sites
        self._by_id = {f.schema_id: f for f in reversed(files) if f.schema_id is not None}
        self._index = index if index is not None else FileIndex(files, config.id_base)
        self._validators: dict[str, CompiledSchema] = {}

    @classmethod
    def load(cls, start: str | Path = ".", *, config: Config | None = None) -> Repository:
        """Read and check every schema file of the repository that holds ``start``.

        Raises:
            ConfigError: the repository's settings cannot be used.
        """
        config = config if config is not None else load_config(start)
        findings: list[Finding] = []
        files = tuple(_read_all(config, findings))
        for file in files:
            findings.extend(check_file(file, config))
        findings.extend(check_ids(files))
        findings.extend(check_names(files))
        registry, missing = build_registry(files)
        sites = {
            f.relpath: tuple(iter_sites(f.document, f.dialect, f.uri))
            for f in files
            if f.usable and f.dialect is not None
        }
        references = tuple(r for f in files for r in references_of(f, sites.get(f.relpath, ())))
        index = FileIndex(files, config.id_base)
        findings.extend(check_references(references, registry, missing, index))
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


def _read_all(config: Config, findings: list[Finding]) -> Iterator[SchemaFile]:
    """Every schema file the settings name; SW001 in ``findings`` for each that cannot be read."""
    for kind, path, may_read in discover(config):
        file, error = read_schema_file(config, kind, path, may_read)
        if error is not None:
            findings.append(unreadable(file.relpath, error))
        yield file


def _tool_spec(file: SchemaFile, output: SchemaFile | None) -> ToolSpec:
    output_schema = output.document if output is not None and output.usable else None
    return ToolSpec(file.name, file.document, output_schema)
