"""Cutting a JSON value to a byte budget while keeping it valid JSON.

A value over budget (measured as compact JSON, in UTF-8 bytes) is cut from the inside out:

- a string keeps its beginning and ends with ``…[truncated N of M characters]``;
- an array keeps its first items whole, the next one cut to the room left, and ends with a
  string item ``…[truncated: N more items]``;
- an object shares its room among its members so that small members stay whole and large ones
  are cut; if that is not enough, optional members are left out, largest first, and required
  members (as the output schema says) are always kept.

Numbers, booleans and null are never changed. Every cut is recorded as a change at its pointer,
so the model and the trace can tell a short list from a cut one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from schemawire._json import dumps
from schemawire._pointer import join
from schemawire.gates.verdict import Change

__all__ = ["size_of", "truncate"]

Required = Callable[[str], frozenset[str]]  # pointer of an object -> its required members
_SHRINK_FROM = 48  # room (bytes) worth cutting one more array item into, rather than dropping it


def size_of(value: Any) -> int:
    """The bytes of ``value`` as compact JSON."""
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:  # integers beyond 64 bits; the slower writer keeps them
        return len(dumps(value, indent=False).encode("utf-8"))


def truncate(
    value: Any, budget: int, required: Required | None = None, pointer: str = ""
) -> tuple[Any, list[Change]]:
    """``value`` cut to at most ``budget`` bytes of compact JSON where it can be, and the cuts."""
    changes: list[Change] = []
    cut = _Cutter(required or _none_required, changes).fit(value, budget, pointer)
    final = size_of(cut)
    if final > budget:
        changes.append(Change("truncated", pointer, f"still {final} bytes, over the budget of "
                              f"{budget}: the rest is required or cannot be cut"))  # fmt: skip
    return cut, changes


def _none_required(pointer: str) -> frozenset[str]:
    return frozenset()


class _Cutter:
    def __init__(self, required: Required, changes: list[Change]) -> None:
        self.required = required
        self.changes = changes

    def fit(self, value: Any, room: int, pointer: str) -> Any:
        size = size_of(value)
        if size <= room:
            return value
        if isinstance(value, str):
            cut: Any = self._string(value, room, pointer)
        elif isinstance(value, list):
            cut = self._array(value, room, pointer)
        elif isinstance(value, dict):
            cut = self._object(value, room, pointer)
        else:
            return value  # a number, boolean or null: never changed
        if size_of(cut) >= size:
            # Less room than the "…[truncated …]" marker takes: cutting would only add to it.
            self.changes[:] = [c for c in self.changes if not _at_or_below(c.pointer, pointer)]
            return value
        return cut

    # --- strings ---------------------------------------------------------------------------

    def _string(self, text: str, room: int, pointer: str) -> str:
        low, high = 0, len(text)  # the longest kept beginning that fits, by bisection
        while low < high:
            middle = (low + high + 1) // 2
            if size_of(_cut_text(text, middle)) <= room:
                low = middle
            else:
                high = middle - 1
        self.changes.append(Change("truncated", pointer, f"string cut: kept {low} of {len(text)} "
                                   "characters", before=len(text), after=low))  # fmt: skip
        return _cut_text(text, low)

    # --- arrays ----------------------------------------------------------------------------

    def _array(self, items: list[Any], room: int, pointer: str) -> list[Any]:
        marker_room = size_of(_more_items(len(items))) + 1  # and its comma
        left = room - 2 - marker_room  # brackets
        kept: list[Any] = []
        for index, item in enumerate(items):
            size = size_of(item) + (1 if kept else 0)
            if size <= left:
                kept.append(item)
                left -= size
                continue
            if left >= _SHRINK_FROM and isinstance(item, str | list | dict):
                kept.append(self.fit(item, left - (1 if kept else 0), join(pointer, index)))
            break
        whole, dropped = len(kept), len(items) - len(kept)
        if dropped:
            kept.append(_more_items(dropped))
            detail = f"array cut: kept {whole} of {len(items)} items"
            self.changes.append(Change("truncated", pointer, detail, len(items), whole))
        return kept

    # --- objects ---------------------------------------------------------------------------

    def _object(self, members: dict[str, Any], room: int, pointer: str) -> dict[str, Any]:
        keys_room = sum(size_of(key) + 1 for key in members) + max(len(members) - 1, 0) + 2
        shares = _shares({key: size_of(value) for key, value in members.items()}, room - keys_room)
        cut = {
            key: self.fit(value, shares[key], join(pointer, key)) for key, value in members.items()
        }
        return self._drop_optional(cut, room, pointer)

    def _drop_optional(self, members: dict[str, Any], room: int, pointer: str) -> dict[str, Any]:
        required = self.required(pointer)
        optional = sorted((key for key in members if key not in required),
                          key=lambda key: size_of(members[key]), reverse=True)  # fmt: skip
        for key in optional:
            if size_of(members) <= room:
                break
            del members[key]
            at = join(pointer, key)
            # A member left out was maybe cut first: only its leaving is worth a record.
            self.changes[:] = [c for c in self.changes if not _at_or_below(c.pointer, at)]
            self.changes.append(Change("truncated", at, "optional member left out to fit the "
                                       "budget"))  # fmt: skip
        return members


def _shares(sizes: dict[str, int], room: int) -> dict[str, int]:
    """Room per member, filled from the smallest: a member smaller than an even share of what is
    left keeps its size, and the larger ones split the rest evenly."""
    shares: dict[str, int] = {}
    left = max(room, 0)
    ordered = sorted(sizes, key=sizes.__getitem__)
    for position, key in enumerate(ordered):
        share = left // (len(ordered) - position)
        shares[key] = min(sizes[key], share)
        left -= shares[key]
    return shares


def _at_or_below(pointer: str, ancestor: str) -> bool:
    return pointer == ancestor or pointer.startswith(ancestor + "/")


def _cut_text(text: str, kept: int) -> str:
    return f"{text[:kept]}…[truncated {len(text) - kept} of {len(text)} characters]"


def _more_items(count: int) -> str:
    return f"…[truncated: {count} more items]"
