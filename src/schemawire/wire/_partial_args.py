"""Gemini's streamed function-call arguments (Vertex AI ``streamFunctionCallArguments``).

With that option a call comes in parts: one with the ``name`` (and ``willContinue: true``)
opens it; then each part's ``partialArgs`` entries set one value each, at a ``jsonPath``
(``$.recipe.steps[0]``), as ``stringValue``, ``numberValue``, ``boolValue`` or ``nullValue``.
A string may come in several entries of the same path, each but the last with
``willContinue: true``: they are joined. `ArgumentsBuilder` builds the arguments object from
the entries. Pure: no I/O.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from schemawire.wire._render import Cursor

__all__ = ["ArgumentsBuilder", "parse_json_path"]

# $ then .name, [index] or ['name'] / ["name"] steps
_STEP = re.compile(r"""\.([^.\[]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]""")
_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue")

Path = tuple[str | int, ...]


def parse_json_path(text: str) -> Path | None:
    """The steps of a JSONPath that names one value (``$.a[0]['b c']`` is ``("a", 0,
    "b c")``), or None when ``text`` is not one."""
    if not text.startswith("$"):
        return None
    steps: list[str | int] = []
    position = 1
    while position < len(text):
        found = _STEP.match(text, position)
        if found is None:
            return None
        name, index, single, double = found.groups()
        if index is not None:
            steps.append(int(index))
        else:
            steps.append(next(step for step in (name, single, double) if step is not None))
        position = found.end()
    return tuple(steps)


class ArgumentsBuilder:
    """The arguments of one call, built from its ``partialArgs`` entries as they come.

    Example:
        >>> builder = ArgumentsBuilder()
        >>> entries = [{"jsonPath": "$.city", "stringValue": "San ", "willContinue": True},
        ...            {"jsonPath": "$.city", "stringValue": "Francisco"},
        ...            {"jsonPath": "$.days[1]", "numberValue": 3}]
        >>> builder.add(Cursor(entries, "<chunk>"))
        >>> builder.arguments
        {'city': 'San Francisco', 'days': [None, 3]}
    """

    def __init__(self, arguments: dict[str, Any] | None = None) -> None:
        self.arguments: dict[str, Any] = arguments if arguments is not None else {}
        self._continuing: set[Path] = set()  # strings whose next entry is appended

    def add(self, entries: Cursor) -> None:
        """Apply a part's ``partialArgs`` entries, in order (none when missing).

        Raises:
            InputError: an entry has no JSONPath naming one value, no value, or a path that
                goes through a value of another kind.
        """
        for entry in entries.items():
            self._add_entry(entry)

    def _add_entry(self, entry: Cursor) -> None:
        path = parse_json_path(entry.at("jsonPath").string())
        if path is None or not path:
            raise entry.at("jsonPath").error("a JSONPath to one member, such as $.city")
        value = self._value(entry, path)
        if entry.at("willContinue").value is True:
            self._continuing.add(path)
        else:
            self._continuing.discard(path)
        self._set(path, value, entry)

    def _value(self, entry: Cursor, path: Path) -> Any:
        member = next((name for name in _VALUES if name in entry.object()), None)
        if member is None:
            raise entry.error("a partial argument with one of " + ", ".join(_VALUES))
        value = entry.at(member).value
        if member == "nullValue":
            return None
        if member == "stringValue":
            piece = entry.at(member).string()
            return self._get(path) + piece if path in self._continuing else piece
        return value

    def _get(self, path: Path) -> str:
        holder: Any = self.arguments
        for step in path:
            holder = holder[step]
        return holder if isinstance(holder, str) else ""

    def _set(self, path: Path, value: Any, entry: Cursor) -> None:
        holder: Any = self.arguments
        for step, following in itertools.pairwise(path):
            holder = _child(holder, step, {} if isinstance(following, str) else [], entry)
        _put(holder, path[-1], value, entry)


def _child(holder: Any, step: str | int, empty: Any, entry: Cursor) -> Any:
    """The container at ``step`` of ``holder``, made ``empty`` when there is none yet."""
    current = _slot(holder, step, entry)
    if current is None:
        _put(holder, step, empty, entry)
        return empty
    if type(current) is not type(empty):
        expected = "a path through the objects and arrays of the arguments so far"
        raise entry.at("jsonPath").error(expected)
    return current


def _slot(holder: Any, step: str | int, entry: Cursor) -> Any:
    if isinstance(step, str) and isinstance(holder, dict):
        return holder.get(step)
    # Items arrive in order: an index is one that is there, or the next one. (A path may not
    # name item 999999999 of an array of two, which would fill memory with nulls.)
    if isinstance(step, int) and isinstance(holder, list) and step <= len(holder):
        return holder[step] if step < len(holder) else None
    raise entry.at("jsonPath").error("a path whose steps match the arguments built so far")


def _put(holder: Any, step: str | int, value: Any, entry: Cursor) -> None:
    _slot(holder, step, entry)  # the step fits the holder
    if isinstance(holder, list):
        assert isinstance(step, int)
        holder.extend([None] * (step + 1 - len(holder)))
    holder[step] = value
