"""Adapters: the generated projection files a repository commits, and the check that they are
current.

``schemawire export`` writes one file per target (and options) under ``adapters/``: the exact
payloads to send, marked as generated, with the target and options that made them. A file holds
what was exported, so ``schemawire check`` can export again with the same target and options and
fail when the committed file differs: nobody edits an adapter by hand, and nobody forgets to
export after changing a schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemawire._json import JSONValue, dumps, load_file
from schemawire.errors import JSONError, UsageError
from schemawire.project import TARGETS, Catalogue, project_catalogue
from schemawire.project.a2a import Agent
from schemawire.schema.repository import Repository
from schemawire.toolbox import diff_json
from schemawire.types import Loss

__all__ = [
    "DEFAULT_OPTIONS",
    "AdapterStatus",
    "Export",
    "adapter_status",
    "export",
    "export_all",
    "write",
]

_GENERATED = "schemawire export"
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

    def document(self) -> dict[str, Any]:
        """The adapter file's content: what generated it, and the payloads."""
        flags = "".join(
            f" --{key}" if value is True else f" --{key} {value}"
            for key, value in sorted(self.options.items())
            if value not in (False, None)
        )
        body: dict[str, Any] = {
            "generated": f"{_GENERATED} --target {self.target}{flags}; do not edit: change the "
            "schemas and export again",
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
    """

    file: str
    detail: str = ""
    patch: tuple[dict[str, Any], ...] = ()
    refused: tuple[Loss, ...] = ()

    @property
    def stale(self) -> bool:
        """Whether the committed file is not what schemawire export writes now."""
        return bool(self.detail)


def export(repository: Repository, target: str, **options: Any) -> Export:
    """``target``'s catalogue of the repository's schemas (tools, or handoffs and state).

    Raises:
        UsageError: an unknown target or option.
    """
    if target not in TARGETS:
        raise UsageError(f"unknown target {target!r}; targets: {', '.join(TARGETS)}")
    specs = repository.specs(*TARGETS[target].kinds)
    extra: dict[str, Any] = {"agent": _agent(repository)} if target == "a2a" else {}
    documents = repository.documents
    catalogue = project_catalogue(specs, target, documents=documents, **extra, **options)
    return Export(target, dict(options), catalogue)


def export_all(repository: Repository) -> list[Export]:
    """Every target with `DEFAULT_OPTIONS`."""
    return [export(repository, target, **options) for target, options in DEFAULT_OPTIONS.items()]


def adapter_status(repository: Repository, directory: Path) -> Iterator[AdapterStatus]:
    """The status of each adapter file under ``directory``, sorted by file name."""
    for path in sorted(directory.glob("*.json")):
        relative = path.relative_to(repository.root).as_posix()
        committed = _read_adapter(path)
        if isinstance(committed, str):
            yield AdapterStatus(relative, committed)
            continue
        fresh = export(repository, committed["target"], **committed["options"])
        refused = tuple(fresh.catalogue.refusals)
        patch = tuple(diff_json(committed, fresh.document()))
        detail = f"differs from a fresh export in {len(patch)} place(s)" if patch else ""
        yield AdapterStatus(relative, detail, patch, refused)


def write(exports: list[Export], directory: Path) -> list[Path]:
    """Write each export's adapter file under ``directory``; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for item in exports:
        path = directory / item.file_name
        path.write_text(dumps(item.document()) + "\n", encoding="utf-8")
        written.append(path)
    return written


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
        return f"names an unknown target {target!r}"
    if set(options) - set(TARGETS[str(target)].options):
        return "has options its target does not take"
    return document


def _agent(repository: Repository) -> Agent:
    settings = repository.config.a2a
    return Agent(**settings) if settings else Agent(name=repository.root.name)
