"""Case files: what one eval runs, and what the run must do.

A case file (``evals/<name>.json``) is checked against a JSON Schema schemawire ships
(`CASE_SCHEMA`, ``case.schema.json``, documented in docs/evals.md), then against what the
schema cannot say (a flow case and a single-agent case take different keys). Every error names
the case file, the JSON Pointer of the offending value and its line.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from schemawire._json import dumps, loads
from schemawire._jsonpos import nearest_offset, pointer_offsets, position
from schemawire.errors import ConfigError, ErrorCode
from schemawire.schema.config import find_root
from schemawire.schema.validator import CompiledSchema, compile_schema

__all__ = ["CASE_SCHEMA", "Case", "check_case", "load_case"]

CASE_SCHEMA: dict[str, Any] = json.loads(
    resources.files("schemawire.evals").joinpath("case.schema.json").read_text(encoding="utf-8")
)
_SHOWN_VIOLATIONS = 5
_FLOW_ONLY = 'applies to a flow case only: name the flow with "flow"'
# Keys only one kind of case takes: pointer -> why not in the other kind.
_NOT_IN_SINGLE = {
    "/models": _FLOW_ONLY,
    "/expect/route": _FLOW_ONLY,
    "/expect/steps": _FLOW_ONLY,
    "/expect/state": _FLOW_ONLY,
}
_NOT_IN_FLOW = {
    "/tools": "applies to a case without a flow: a flow's agents name their own tools",
    "/instructions": "applies to a case without a flow: a flow's agents have their own",
}


@dataclass(frozen=True, slots=True)
class Case:
    """One case file, checked against the case schema.

    Attributes:
        path: the case file.
        name: its name in reports.
        document: the case as written (plain JSON; pointers into it are pointers into the file).
        root: the repository the case runs in.
        text: the file's text, to say on which line a pointer is.
    """

    path: Path
    name: str
    document: dict[str, Any]
    root: Path
    text: str

    @property
    def input(self) -> str:
        """The user's request."""
        value: str = self.document["input"]
        return value

    @property
    def expect(self) -> dict[str, Any]:
        """What the run must do."""
        value: dict[str, Any] = self.document["expect"]
        return value

    @property
    def flow(self) -> Path | None:
        """The flow file, for a flow case."""
        named = self.document.get("flow")
        return self.root / named if isinstance(named, str) else None

    def line_of(self, pointer: str) -> tuple[int, int]:
        """The line and column of ``pointer`` in the file (of its nearest ancestor, when the
        case does not write it)."""
        return position(self.text, nearest_offset(_offsets(self.text), pointer))

    def where(self, pointer: str) -> str:
        """``file:line:column`` of ``pointer``, for messages and editors."""
        line, column = self.line_of(pointer)
        return f"{self.path}:{line}:{column}"

    def error(
        self, pointer: str, message: str, code: ErrorCode = ErrorCode.CONFIG_INVALID
    ) -> ConfigError:
        """A `ConfigError` about the value at ``pointer``: the case cannot be run."""
        line, column = self.line_of(pointer)
        return ConfigError(
            code,
            f"{pointer or '/'}: {message}",
            source=str(self.path),
            pointer=pointer,
            line=line,
            column=column,
        )


def load_case(path: str | Path) -> Case:
    """The case in ``path``.

    Raises:
        JSONError: the file is not JSON.
        ConfigError: it breaks the case schema, or mixes the keys of a flow case and of a
            single-agent case.
        OSError: it cannot be read.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    return _checked(path, loads(text, source=str(path)), text)


def check_case(document: Any, path: str | Path) -> Case:
    """``document``, a case about to be written to ``path``, checked as `load_case` would check
    the file (its lines are those of ``dumps(document)``, the text written).

    Raises:
        ConfigError: it breaks the case schema, mixes the keys of a flow case and of a
            single-agent case, or names a ``repo`` that is not there.
    """
    return _checked(Path(path), document, dumps(document))


def _checked(path: Path, document: Any, text: str) -> Case:
    violations = _validator().violations(document)
    if violations:
        first, *others = violations
        shown = [f"{v.pointer or '/'}: {v.message}" for v in others[: _SHOWN_VIOLATIONS - 1]]
        more = len(others) - len(shown)
        also = "".join(f"\n  also {line}" for line in shown)
        also += f"\n  and {more} more" if more else ""
        probe = Case(path, path.stem, {}, path.parent, text)
        raise probe.error(first.pointer, f"{first.message} (case.schema.json){also}")
    assert isinstance(document, dict)
    case = Case(path, document.get("name", path.stem), document, _root(path, document), text)
    if "repo" in document and not case.root.is_dir():
        raise case.error("/repo", f"no folder {case.root} (repo is relative to the case file)")
    mixed = next(_mixed_keys(document), None)
    if mixed is not None:
        raise case.error(*mixed)
    return case


@functools.cache
def _validator() -> CompiledSchema:
    return compile_schema(CASE_SCHEMA, source="case.schema.json")


def _root(path: Path, document: Mapping[str, Any]) -> Path:
    repo = document.get("repo")
    if isinstance(repo, str):
        return (path.parent / repo).resolve()
    return find_root(path.parent)


def _mixed_keys(document: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Keys one kind of case takes, written in a case of the other kind."""
    for pointer, why in (_NOT_IN_FLOW if "flow" in document else _NOT_IN_SINGLE).items():
        parent, _, name = pointer.rpartition("/")
        holder = document.get(parent.lstrip("/"), {}) if parent else document
        if isinstance(holder, dict) and name in holder:
            yield pointer, f'"{name}" {why}'


@functools.lru_cache(maxsize=64)
def _offsets(text: str) -> dict[str, int]:
    """The pointer offsets of a case's text (cached: a failing case asks for several)."""
    return pointer_offsets(text)
