"""Where things are in a JSON text: lines, columns, excerpts and a position-tracking scanner.

The fast parser (orjson) says whether a text is acceptable, but not where a duplicate key, a deep
nest or an oversized integer sits, nor where the value behind a JSON Pointer starts. This module
answers those questions on the slow path only: after a problem is known to exist, or when a finding
needs a line and column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from schemawire._pointer import join

__all__ = [
    "Node",
    "ScanError",
    "excerpt",
    "iter_nodes",
    "nearest_offset",
    "pointer_offsets",
    "position",
]

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_EXCERPT_WIDTH = 72


class ScanError(Exception):
    """The text is not JSON at ``offset``; callers fall back to a less precise location.

    Private: `schemawire._json` catches it and raises a `JSONError`; it never crosses the public
    API, so it is not a `SchemawireError`."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"unexpected text at offset {offset}")
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Node:
    """One value of a JSON document, as the scanner meets it.

    Attributes:
        pointer: where the value is in the document.
        offset: index of the value's first character in the text.
        depth: how many arrays and objects enclose the value (the root value has depth 0).
        key_offset: index of the member's key, for values inside an object.
        duplicate: the member's key already appeared earlier in the same object.
    """

    pointer: str
    offset: int
    depth: int
    key_offset: int | None = None
    duplicate: bool = False


@dataclass(slots=True)
class _Frame:
    """An open array or object: its pointer, and the member being read."""

    closer: str
    pointer: str
    index: int = -1
    current: str = ""
    keys: set[str] = field(default_factory=set[str])


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``offset`` in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def excerpt(text: str, offset: int) -> str:
    """The line holding ``offset``, cut to a readable window, with a caret under the offset."""
    offset = max(0, min(offset, len(text)))
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    line = text[start : len(text) if end == -1 else end].rstrip("\r")
    column = offset - start
    window_start = max(0, column - _EXCERPT_WIDTH // 2)
    window = line[window_start : window_start + _EXCERPT_WIDTH]
    prefix = "…" if window_start > 0 else ""
    suffix = "…" if window_start + _EXCERPT_WIDTH < len(line) else ""
    shown = "".join(
        char if char.isprintable() or char == "\t" else "\N{REPLACEMENT CHARACTER}"
        for char in window
    )
    caret = " " * (len(prefix) + column - window_start) + "^"
    return f"  {prefix}{shown}{suffix}\n  {caret}"


def iter_nodes(text: str) -> Iterator[Node]:
    """Every value of the JSON document in ``text``, in document order.

    Raises:
        ScanError: where the text stops being JSON (the generator has yielded what came before).
    """
    frames: list[_Frame] = []
    node = Node("", _skip_whitespace(text, 0), 0)
    while True:
        yield node
        try:
            pos = _after_value(text, node.offset, frames)
            pos = _close_frames(text, pos, frames)
            if not frames:
                return
            node, pos = _next_member(text, pos, frames[-1], len(frames))
        except IndexError:
            raise ScanError(len(text)) from None


def pointer_offsets(text: str) -> dict[str, int]:
    """Offset of every pointer in ``text``: a member's key, or the value itself for array items.

    A text that is not JSON gives the offsets found before the point where it stops being JSON.
    """
    offsets: dict[str, int] = {}
    try:
        for node in iter_nodes(text):
            offsets.setdefault(
                node.pointer, node.offset if node.key_offset is None else node.key_offset
            )
    except ScanError:
        pass
    return offsets


def nearest_offset(offsets: dict[str, int], pointer: str) -> int:
    """The offset of ``pointer``, or of its nearest ancestor in ``offsets`` (0 for none).

    A missing required property has no place in the text; its parent object has.
    """
    while pointer not in offsets and pointer:
        pointer = pointer[: pointer.rfind("/")]
    return offsets.get(pointer, 0)


def _skip_whitespace(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _after_value(text: str, pos: int, frames: list[_Frame]) -> int:
    """Enter a container (and return past its opener) or skip a scalar."""
    char = text[pos]
    if char in "{[":
        pointer = frames[-1].current if frames else ""
        frames.append(_Frame("}" if char == "{" else "]", pointer))
        return _skip_whitespace(text, pos + 1)
    match = (_STRING if char == '"' else _SCALAR).match(text, pos)
    if match is None:
        raise ScanError(pos)
    return _skip_whitespace(text, match.end())


def _close_frames(text: str, pos: int, frames: list[_Frame]) -> int:
    """Consume closing brackets; stop before the next member (after its comma) or at the end."""
    while frames:
        char = text[pos] if pos < len(text) else ""
        if char == frames[-1].closer:
            frames.pop()
            pos = _skip_whitespace(text, pos + 1)
        elif char == "," and frames[-1].index >= 0:
            return _skip_whitespace(text, pos + 1)
        elif frames[-1].index < 0:
            return pos  # a container that was just opened: its first member starts here
        else:
            raise ScanError(pos)
    return pos


def _next_member(text: str, pos: int, frame: _Frame, depth: int) -> tuple[Node, int]:
    if pos >= len(text):
        raise ScanError(pos)
    frame.index += 1
    if frame.closer == "]":
        frame.current = join(frame.pointer, frame.index)
        return Node(frame.current, pos, depth), pos
    match = _STRING.match(text, pos)
    if match is None:
        raise ScanError(pos)
    key = json.loads(match.group())
    colon = _skip_whitespace(text, match.end())
    if text[colon : colon + 1] != ":":
        raise ScanError(colon)
    value_pos = _skip_whitespace(text, colon + 1)
    duplicate = key in frame.keys
    frame.keys.add(key)
    frame.current = join(frame.pointer, key)
    return Node(frame.current, value_pos, depth, key_offset=pos, duplicate=duplicate), value_pos
