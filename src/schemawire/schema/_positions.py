"""Where a finding is: the line and column of its JSON Pointer in its file."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from schemawire._jsonpos import nearest_offset, pointer_offsets, position
from schemawire.schema.rules import Finding

__all__ = ["locate"]


def locate(findings: Iterable[Finding], root: Path) -> list[Finding]:
    """``findings`` with a line and column for each pointer, read from the files under ``root``.

    A pointer to something absent (a missing property) takes the place of its nearest ancestor.
    Findings located already, and findings in files that are not JSON, are left as they are.
    """
    offsets_by_file: dict[str, tuple[str, dict[str, int]] | None] = {}
    located: list[Finding] = []
    for finding in findings:
        if finding.line is not None:
            located.append(finding)
            continue
        if finding.file not in offsets_by_file:
            offsets_by_file[finding.file] = _offsets(root / finding.file)
        known = offsets_by_file[finding.file]
        if known is None:
            located.append(finding)
            continue
        text, offsets = known
        line, column = position(text, nearest_offset(offsets, finding.pointer))
        located.append(finding.at(line, column))
    return located


def _offsets(path: Path) -> tuple[str, dict[str, int]] | None:
    if path.suffix != ".json" or not path.is_file():
        return None
    try:
        text = path.read_bytes().decode("utf-8", "replace").removeprefix("\ufeff")
    except OSError:
        return None
    return text, pointer_offsets(text)
