"""Turning arguments sent under a projected schema back into canonical arguments.

A projection may rename a property key (a provider refuses the canonical one), make an optional
property required and nullable (strict modes require every property), or turn a map into a list
of key and value pairs (strict modes close every object). A model then answers in the projected
shape. `ArgumentMap.restore` undoes each of those changes, so that the argument gate checks the
canonical shape against the canonical schema; anything it cannot undo it leaves as it is, for
the gate to reject. It is the projections' `schemawire.types.ArgumentRestorer`, the type of
`Projection.argument_map`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IDENTITY", "ArgumentMap"]


@dataclass(frozen=True, slots=True)
class ArgumentMap:
    """How one value of a projected shape maps back to the canonical shape.

    Attributes:
        renames: projected key -> canonical key, for this object's properties.
        optional_nulls: canonical keys whose ``null`` stands for "absent" (optional properties
            that a strict target made required and nullable).
        properties: canonical key -> the map for that property's value.
        items: the map for each item, when this value is an array.
        values: the map for each value of a map (``additionalProperties``).
        pairs: this value was an object turned into ``[{"key": ..., "value": ...}]``.
    """

    # Plain dict factories: calling dict[str, str] (a generic alias) makes each map 3x slower.
    renames: Mapping[str, str] = field(default_factory=dict)
    optional_nulls: frozenset[str] = frozenset()
    properties: Mapping[str, ArgumentMap] = field(default_factory=dict)
    items: ArgumentMap | None = None
    values: ArgumentMap | None = None
    pairs: bool = False

    @property
    def is_identity(self) -> bool:
        """Whether restoring changes nothing."""
        return not (
            self.renames
            or self.optional_nulls
            or self.properties
            or self.items
            or self.values
            or self.pairs
        )

    def with_optional_nulls(self, names: Iterable[str]) -> ArgumentMap:
        """This map, with ``null`` also standing for "absent" under the keys ``names``.

        (`dataclasses.replace` says the same, at twice the cost: the walk calls this for every
        object of a strict target.)"""
        return ArgumentMap(
            renames=self.renames,
            optional_nulls=self.optional_nulls | frozenset(names),
            properties=self.properties,
            items=self.items,
            values=self.values,
            pairs=self.pairs,
        )

    def with_properties(
        self, renames: Mapping[str, str], properties: Mapping[str, ArgumentMap]
    ) -> ArgumentMap:
        """This map, with ``renames`` and the maps of the ``properties`` values (what
        `dataclasses.replace` says, at a third of the cost, once per object walked)."""
        return ArgumentMap(
            renames=renames,
            optional_nulls=self.optional_nulls,
            properties=properties,
            items=self.items,
            values=self.values,
            pairs=self.pairs,
        )

    def restore(self, value: Any) -> Any:
        """``value``, as sent under the projection, in the canonical shape."""
        if self.is_identity:
            return value
        if self.pairs and isinstance(value, list):
            value = _object_from_pairs(value)
        if isinstance(value, dict):
            return self._restore_object(value)
        if isinstance(value, list) and self.items is not None:
            return [self.items.restore(item) for item in value]
        return value

    def _restore_object(self, value: dict[str, Any]) -> dict[str, Any]:
        restored: dict[str, Any] = {}
        for key, item in value.items():
            canonical = self.renames.get(key, key)
            if item is None and canonical in self.optional_nulls:
                continue  # null stood for "absent"
            child = self.properties.get(canonical, self.values)
            restored[canonical] = child.restore(item) if child is not None else item
        return restored


IDENTITY = ArgumentMap()


def _object_from_pairs(pairs: list[Any]) -> Any:
    """``[{"key": k, "value": v}, ...]`` as ``{k: v, ...}``; anything else unchanged."""
    if not all(
        isinstance(p, dict) and set(p) == {"key", "value"} and isinstance(p["key"], str)
        for p in pairs
    ):
        return pairs
    return {pair["key"]: pair["value"] for pair in pairs}
