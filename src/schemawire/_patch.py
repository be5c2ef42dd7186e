"""JSON patches: the RFC 6902 patch between two documents, and each of its edits for people.

Below every layer that compares JSON: the adapter check (`schemawire.project.export`) says where
a committed file differs from a fresh export, and ``schemawire diff`` shows each edit with the
value it replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonpatch

from schemawire._json import JSONValue, dumps

__all__ = ["PatchEdit", "diff_json", "edit_line", "summarise_patch"]


def diff_json(old: JSONValue, new: JSONValue) -> list[dict[str, Any]]:
    """The RFC 6902 patch that turns ``old`` into ``new`` (empty when they are equal)."""
    operations: list[dict[str, Any]] = jsonpatch.make_patch(old, new).patch
    return operations


@dataclass(frozen=True, slots=True)
class PatchEdit:
    """One operation of a patch, for people: where, what kind, and the values before and after."""

    op: str
    path: str
    old: Any = None
    new: Any = None
    source: str | None = None  # for a move or copy, where the value came from


def summarise_patch(old: JSONValue, operations: list[dict[str, Any]]) -> list[PatchEdit]:
    """Each operation of ``operations`` (made by `diff_json` from ``old``) with its old value."""
    document = old
    edits: list[PatchEdit] = []
    for operation in operations:
        op, path = operation["op"], operation["path"]
        before = _value_at(document, path) if op in ("replace", "remove") else None
        edits.append(PatchEdit(op, path, before, operation.get("value"), operation.get("from")))
        document = jsonpatch.apply_patch(document, [operation])
    return edits


def edit_line(edit: PatchEdit, width: int = 100) -> str:
    """``edit`` on one line, as ``schemawire diff`` prints it (and the page shows it):
    ``+ /path: new``, ``- /path: old``, ``~ /path: old → new``, ``move /from → /path``. Values
    longer than ``width`` characters are cut with an ellipsis."""
    where = edit.path or "/"
    if edit.op == "add":
        return f"+ {where}: {_short(edit.new, width)}"
    if edit.op == "remove":
        return f"- {where}: {_short(edit.old, width)}"
    if edit.op == "replace":
        return f"~ {where}: {_short(edit.old, width)} → {_short(edit.new, width)}"
    return f"{edit.op} {edit.source or ''} → {where}"  # move, copy


def _short(value: Any, width: int) -> str:
    text = dumps(value, indent=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def _value_at(document: Any, pointer: str) -> Any:
    return jsonpatch.JsonPointer(pointer).resolve(document)
