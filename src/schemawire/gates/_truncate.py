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

The work is linear in the size of the value times the nesting of the members that are cut: each
value is measured once by its container (orjson, at the speed of C), the bytes an object saves
as its members leave are kept as a running total, and a string's kept beginning is searched for
only within the room it may take.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemawire._pointer import join
from schemawire.gates._values import size_of
from schemawire.gates.verdict import Change

__all__ = ["shares", "size_of", "truncate"]

Required = Callable[[str], frozenset[str]]  # pointer of an object -> its required members
_SHRINK_FROM = 48  # room (bytes) worth cutting one more array item into, rather than dropping it


def truncate(
    value: Any,
    budget: int,
    required: Required | None = None,
    pointer: str = "",
    *,
    say_if_over: bool = True,
) -> tuple[Any, list[Change]]:
    """``value`` cut to at most ``budget`` bytes of compact JSON where it can be, and the cuts.

    Args:
        value: plain JSON.
        budget: bytes of compact JSON.
        required: the members required of the object at a pointer (kept when others leave).
        pointer: where ``value`` sits, for the changes' pointers.
        say_if_over: record a change when what is left is still over ``budget``; off for a
            part of a larger value whose own cut says so.
    """
    changes: list[Change] = []
    cut = _Cutter(required or _none_required, changes).fit(value, budget, pointer)
    final = size_of(cut) if say_if_over else budget
    if final > budget:
        detail = f"still {final} bytes, over the budget of {budget}: the rest is required or "
        changes.append(Change("truncated", pointer, detail + "cannot be cut"))
    return cut, changes


def _none_required(pointer: str) -> frozenset[str]:
    return frozenset()


class _Cutter:
    def __init__(self, required: Required, changes: list[Change]) -> None:
        self.required = required
        self.changes = changes

    def fit(self, value: Any, room: int, pointer: str, size: int | None = None) -> Any:
        """``value`` cut to ``room`` bytes where it can be; ``size``, its own, when known."""
        size = size_of(value) if size is None else size
        if size <= room:
            return value
        first_change = len(self.changes)  # every change below ``pointer`` is made from here on
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
            del self.changes[first_change:]
            return value
        return cut

    # --- strings ---------------------------------------------------------------------------

    def _string(self, text: str, room: int, pointer: str) -> str:
        # The longest kept beginning that fits, by bisection; a character takes a byte at least,
        # so no more than ``room`` of them can fit.
        low, high = 0, max(min(len(text), room), 0)
        while low < high:
            middle = (low + high + 1) // 2
            if size_of(_cut_text(text, middle)) <= room:
                low = middle
            else:
                high = middle - 1
        self.changes.append(
            Change(
                "truncated",
                pointer,
                f"string cut: kept {low} of {len(text)} characters",
                before=len(text),
                after=low,
            )
        )
        return _cut_text(text, low)

    # --- arrays ----------------------------------------------------------------------------

    def _array(self, items: list[Any], room: int, pointer: str) -> list[Any]:
        marker_room = size_of(_more_items(len(items))) + 1  # and its comma
        left = room - 2 - marker_room  # brackets
        kept: list[Any] = []
        for index, item in enumerate(items):
            comma = 1 if kept else 0
            size = size_of(item)
            if size + comma <= left:
                kept.append(item)
                left -= size + comma
                continue
            if left >= _SHRINK_FROM and isinstance(item, str | list | dict):
                kept.append(self.fit(item, left - comma, join(pointer, index), size))
            break
        whole, dropped = len(kept), len(items) - len(kept)
        if dropped:
            kept.append(_more_items(dropped))
            detail = f"array cut: kept {whole} of {len(items)} items"
            self.changes.append(Change("truncated", pointer, detail, len(items), whole))
        return kept

    # --- objects ---------------------------------------------------------------------------

    def _object(self, members: dict[str, Any], room: int, pointer: str) -> dict[str, Any]:
        key_sizes = {key: size_of(key) + 1 for key in members}  # and its colon
        keys_room = sum(key_sizes.values()) + max(len(members) - 1, 0) + 2
        sizes = {key: size_of(value) for key, value in members.items()}
        room_of = shares(sizes, room - keys_room)
        first_change = len(self.changes)
        cut: dict[str, Any] = {}
        for key, value in members.items():
            kept = self.fit(value, room_of[key], join(pointer, key), sizes[key])
            cut[key] = kept
            sizes[key] = sizes[key] if kept is value else size_of(kept)
        return self._drop_optional(cut, (key_sizes, sizes), room, pointer, first_change)

    def _drop_optional(
        self,
        members: dict[str, Any],
        sizes: tuple[dict[str, int], dict[str, int]],
        room: int,
        pointer: str,
        first_change: int,
    ) -> dict[str, Any]:
        """``members`` without their largest optional ones, until they fit ``room``.

        ``sizes`` are the bytes of each member's key (with its colon) and of its value: the
        object's size is kept as a running total as members leave, not measured again.
        """
        key_sizes, value_sizes = sizes
        required = self.required(pointer)
        optional = sorted(
            (key for key in members if key not in required),
            key=value_sizes.__getitem__,
            reverse=True,
        )
        total = 2 + sum(key_sizes.values()) + sum(value_sizes.values()) + max(len(members) - 1, 0)
        dropped: list[str] = []
        for key in optional:
            if total <= room:
                break
            comma = 1 if len(members) > 1 else 0
            total -= key_sizes[key] + value_sizes[key] + comma
            del members[key]
            dropped.append(key)
        if dropped:
            self._record_dropped(pointer, dropped, first_change)
        return members

    def _record_dropped(self, pointer: str, dropped: list[str], first_change: int) -> None:
        """A member left out was maybe cut first: only its leaving is worth a record."""
        gone = {join(pointer, key) for key in dropped}
        below = len(pointer) + 1
        self.changes[first_change:] = [
            change
            for change in self.changes[first_change:]
            if _member_of(change.pointer, below) not in gone
        ]
        for key in dropped:
            at = join(pointer, key)
            detail = "optional member left out to fit the budget"
            self.changes.append(Change("truncated", at, detail))


def shares(sizes: dict[Any, int], room: int) -> dict[Any, int]:
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


def _member_of(pointer: str, below: int) -> str:
    """The pointer of the member of an object that ``pointer`` is at or below, given where the
    object's own pointer ends (``below``, its length plus the slash)."""
    end = pointer.find("/", below)
    return pointer if end < 0 else pointer[:end]


def _cut_text(text: str, kept: int) -> str:
    return f"{text[:kept]}…[truncated {len(text) - kept} of {len(text)} characters]"


def _more_items(count: int) -> str:
    return f"…[truncated: {count} more items]"
