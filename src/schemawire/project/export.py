"""Adapters: the generated projection files a repository commits, and the check that they are
current.

``schemawire export`` writes one file per target (and options) under ``adapters/``: the exact
payloads to send, marked as generated, with the target and options that made them. A file holds
what was exported, so ``schemawire check`` can export again with the same target and options and
fail when the committed file differs: nobody edits an adapter by hand, and nobody forgets to
export after changing a schema. An adapter made from a schema that cannot be used (it cannot be
read or compiled) is not compared: the schema's own finding says what to fix. `refresh` exports
every adapter that exists again, each with the target and options it was written with
(`exports_to_refresh`).

`project_repository` is the same projection without the file: what a host or a test sends.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemawire._json import JSONValue, dumps, load_file, quoted
from schemawire._patch import diff_json
from schemawire.errors import JSONError, UsageError
from schemawire.project import TARGETS, Catalogue, project_catalogue
from schemawire.project.a2a import Agent
from schemawire.schema.repository import Repository
from schemawire.types import Loss

__all__ = [
    "DEFAULT_OPTIONS",
    "AdapterStatus",
    "Export",
    "adapter_status",
    "export",
    "export_all",
    "export_command",
    "exports_to_refresh",
    "project_repository",
    "write",
    "write_adapter",
]

_GENERATED = "schemawire export"
# Options whose command-line flag has another name.
_FLAGS = {"version": "mcp-version"}
# What `--target all` exports: every target with the options a repository usually wants.
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "openai.chat": {"strict": True},
    "openai.responses": {"strict": True},
    "openai.response_format": {},
    "openai.text_format": {},
    "anthropic": {},
    "gemini": {},
    "mcp": {"version": "2026-07-28"},
    "a2a": {},
}


@dataclass(frozen=True, slots=True)
class Export:
    """One target's adapter: its catalogue, and the file that holds it."""

    target: str
    options: dict[str, Any]
    catalogue: Catalogue

    @property
    def file_name(self) -> str:
        """``<target>[.<option>].json``, for example ``openai.chat.strict.json``."""
        parts = [self.target]
        for key, value in sorted(self.options.items()):
            if value is True:
                parts.append(key)
            elif value not in (False, None):
                parts.append(f"{key}-{value}")
        return ".".join(parts) + ".json"

    @property
    def command(self) -> str:
        """The command that writes this adapter, such as ``schemawire export --target
        openai.chat --strict``."""
        return export_command(self.target, self.options)

    def document(self) -> dict[str, Any]:
        """The adapter file's content: what generated it, and the payloads."""
        body: dict[str, Any] = {
            "generated": f"{self.command}; do not edit: change the schemas and export again",
            "target": self.target,
            "options": self.options,
        }
        key = {"a2a": "card"}.get(self.target, "tools")
        if set(TARGETS[self.target].kinds) != {"tools"}:
            key = "formats"
        body[key] = self.catalogue.payload
        projections = self.catalogue.projections
        renamed = {p.projected_name: p.name for p in projections if p.projected_name != p.name}
        if renamed:
            body["names"] = renamed
        return body


@dataclass(frozen=True, slots=True)
class AdapterStatus:
    """A committed adapter file, against a fresh export of the same target and options.

    Attributes:
        file: the adapter file's path, relative to the repository root.
        detail: what is wrong, in one sentence ("" when it is current).
        patch: the RFC 6902 patch from the committed file to the fresh export.
        refused: the fresh export's losses that make the target refuse it (limits).
        command: the command that writes the file again ("" when it is no adapter schemawire
            export wrote).
        not_compared: why the file was not compared ("" when it was): a schema it is made
            from cannot be used.
    """

    file: str
    detail: str = ""
    patch: tuple[dict[str, Any], ...] = ()
    refused: tuple[Loss, ...] = ()
    command: str = ""
    not_compared: str = ""

    @property
    def stale(self) -> bool:
        """Whether the committed file is not what schemawire export writes now."""
        return bool(self.detail)


def project_repository(repository: Repository, target: str, **options: Any) -> Catalogue:
    """Every schema of ``repository`` that ``target`` takes (tools, or handoffs and state),
    projected as one request: ``catalogue.payload`` is what to send, each projection lists its
    losses.

    Raises:
        UsageError: an unknown target or option.
    """
    if target not in TARGETS:
        raise UsageError(f"unknown target {quoted(target)}; targets: {', '.join(TARGETS)}")
    specs = repository.specs(*TARGETS[target].kinds)
    extra: dict[str, Any] = {"agent": _agent(repository)} if target == "a2a" else {}
    documents = repository.documents
    return project_catalogue(specs, target, documents=documents, **extra, **options)


def export(repository: Repository, target: str, **options: Any) -> Export:
    """``target``'s adapter of the repository's schemas: `project_repository`, with the target
    and options that name its file.

    Raises:
        UsageError: an unknown target or option.
    """
    return Export(target, dict(options), project_repository(repository, target, **options))


def export_all(repository: Repository) -> list[Export]:
    """Every target with `DEFAULT_OPTIONS`."""
    return [export(repository, target, **options) for target, options in DEFAULT_OPTIONS.items()]


def adapter_status(
    repository: Repository, directory: Path, *, unusable: Collection[str] = ()
) -> Iterator[AdapterStatus]:
    """The status of each adapter file under ``directory``, sorted by file name.

    An adapter whose target takes a kind of schema that has a file in ``unusable`` (paths
    relative to the root) is not compared: a fresh export would leave that schema out, and every
    tool after it would seem to have changed.
    """
    broken = [file for file in repository.files if file.relpath in unusable]
    for path, committed in _committed(directory):
        relative = path.relative_to(repository.root).as_posix()
        if isinstance(committed, str):
            yield AdapterStatus(relative, committed)
            continue
        target, options = str(committed["target"]), committed["options"]
        blocked = sorted(f.relpath for f in broken if f.kind in TARGETS[target].kinds)
        if blocked:  # no export: it would leave the schema out
            more = f" (and {len(blocked) - 1} more)" if len(blocked) > 1 else ""
            why = f"{blocked[0]}{more} cannot be used"
            yield AdapterStatus(relative, command=export_command(target, options), not_compared=why)
            continue
        fresh = export(repository, target, **options)
        refused = tuple(fresh.catalogue.refusals)
        patch = tuple(diff_json(_payloads(committed), _payloads(fresh.document())))
        detail = f"differs from a fresh export in {len(patch)} place(s)" if patch else ""
        yield AdapterStatus(relative, detail, patch, refused, fresh.command)


def exports_to_refresh(repository: Repository, directory: Path) -> list[tuple[Path, Export]]:
    """A fresh export for each adapter file under ``directory`` that schemawire export wrote,
    with the target and options it names, and the file to write it to."""
    return [
        (path, export(repository, committed["target"], **committed["options"]))
        for path, committed in _committed(directory)
        if not isinstance(committed, str)
    ]


def _committed(directory: Path) -> Iterator[tuple[Path, dict[str, Any] | str]]:
    """Each adapter file under ``directory``, sorted by name, with what it holds (or, as a
    string, why it is not an adapter schemawire wrote)."""
    for path in sorted(directory.glob("*.json")):
        yield path, _read_adapter(path)


def export_command(target: str, options: Mapping[str, Any]) -> str:
    """The command that writes the adapter of ``target`` with ``options``."""
    flags = "".join(
        f" --{_FLAGS.get(key, key)}" if value is True else f" --{_FLAGS.get(key, key)} {value}"
        for key, value in sorted(options.items())
        if value not in (False, None)
    )
    return f"{_GENERATED} --target {target}{flags}"


def write(exports: list[Export], directory: Path) -> list[Path]:
    """Write each export's adapter file under ``directory``; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for item in exports:
        path = directory / item.file_name
        write_adapter(path, item)
        written.append(path)
    return written


def write_adapter(path: Path, item: Export) -> None:
    """Write ``item``'s adapter file at ``path``."""
    path.write_text(dumps(item.document()) + "\n", encoding="utf-8")


def _payloads(document: dict[str, Any]) -> dict[str, Any]:
    """An adapter file without its ``generated`` note: the note is for people (and older
    versions worded it differently), the rest is what a fresh export must match."""
    return {key: value for key, value in document.items() if key != "generated"}


def _read_adapter(path: Path) -> dict[str, Any] | str:
    """The adapter file's content, or why it is not an adapter schemawire can re-export."""
    try:
        document: JSONValue = load_file(path)
    except (JSONError, OSError) as error:
        return f"cannot be read: {error}"
    if not isinstance(document, dict) or not str(document.get("generated", "")).startswith(
        _GENERATED
    ):
        return "is not a file schemawire export generated"
    target, options = document.get("target"), document.get("options")
    if target not in TARGETS or not isinstance(options, dict):
        return f"names an unknown target {quoted(target)}"
    if set(options) - set(TARGETS[str(target)].options):
        return "has options its target does not take"
    return document


def _agent(repository: Repository) -> Agent:
    settings = repository.config.a2a
    return Agent(**settings) if settings else Agent(name=repository.root.name)
