"""One schema file of a repository: where it is, what kind it is, and what it holds.

    schemas/tools/create_refund.json           a tool's input schema; tool name = file stem
    schemas/tools/create_refund.output.json    that tool's output schema
    schemas/handoffs/triage_to_billing.json    an object one agent hands to the next
    schemas/state/refund_flow.json             a workflow's checkpointed state
    schemas/common/money.json                  shared definitions that the others $ref

`discover` lists the files of the settings' folders and `read_schema_file` reads one; a file
that cannot be read is a `SchemaFile` too, and the reason is returned beside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from schemawire._json import load_file
from schemawire.errors import JSONError
from schemawire.schema._files import json_files, linked_outside, relpath
from schemawire.schema.config import Config
from schemawire.schema.dialect import Dialect, dialect_named

__all__ = ["KINDS", "OUTPUT_SUFFIX", "SchemaFile", "discover", "own_uri", "read_schema_file"]

KINDS = ("tools", "handoffs", "state", "common")
OUTPUT_SUFFIX = ".output"


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


def discover(config: Config) -> Iterator[tuple[str, Path, bool]]:
    """``(kind, path, may be read)`` of each JSON file under the settings' schema folders."""
    for kind, directory in config.kind_dirs().items():
        for path, readable in json_files(config.root, config.root / directory):
            yield kind, path, readable


def read_schema_file(
    config: Config, kind: str, path: Path, may_read: bool
) -> tuple[SchemaFile, JSONError | OSError | None]:
    """The schema file at ``path``, and why it could not be read (None when it could).

    A file that cannot be read is still a `SchemaFile` (``readable`` False, found by its path),
    so that a reference to it can be told from a reference to nothing.
    """
    relative = relpath(config.root, path)
    name = path.name.removesuffix(".json")
    document: Any = None
    try:
        if not may_read:
            raise linked_outside()
        document = load_file(path, source=relative)
    except (JSONError, OSError) as error:
        unread = SchemaFile(kind, name, relative, path, None, None, path.as_uri(), readable=False)
        return unread, error
    uri = own_uri(document) or path.resolve().as_uri()
    return SchemaFile(kind, name, relative, path, document, _dialect_of(document), uri), None


def _dialect_of(document: Any) -> Dialect | None:
    if not isinstance(document, dict):
        return None
    declared = document.get("$schema")
    return dialect_named(declared) if declared is None or isinstance(declared, str) else None


def own_uri(document: Any) -> str | None:
    """The ``$id`` when it is usable as a base URI: absolute, without a fragment."""
    identifier = document.get("$id") if isinstance(document, dict) else None
    if not isinstance(identifier, str) or "#" in identifier:
        return None
    try:
        return identifier if urlsplit(identifier).scheme else None
    except ValueError:  # not a URI at all, such as "http://[::1"
        return None
