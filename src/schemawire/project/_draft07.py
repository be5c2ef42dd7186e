"""Draft-07 subschemas in draft 2020-12's words, the dialect every target reads: tuple
``items`` as ``prefixItems``, ``dependencies`` split in two; each translation reported."""

from __future__ import annotations

from typing import Any

from schemawire.project._policy import Where
from schemawire.project._walker import Walker

__all__ = ["in_2020_12"]


def in_2020_12(walk: Walker, schema: dict[str, Any], where: Where) -> dict[str, Any]:
    """A draft-07 subschema in draft 2020-12's words: every target reads 2020-12."""
    translated = dict(schema)
    translated.pop("$schema", None)  # 2020-12 is the dialect of every projection
    if isinstance(schema.get("items"), list):
        translated["prefixItems"] = translated.pop("items")
        if "additionalItems" in translated:
            translated["items"] = translated.pop("additionalItems")
        walk.lose(
            "DIALECT_TRANSLATED",
            where,
            "items",
            "draft-07 tuple items written as prefixItems (2020-12)",
        )
    elif "additionalItems" in translated:
        del translated["additionalItems"]  # ignored by draft-07 without tuple items
        walk.lose(
            "DIALECT_TRANSLATED",
            where,
            "additionalItems",
            "no effect without tuple items; left out",
        )
    dependencies = translated.pop("dependencies", None)
    if isinstance(dependencies, dict):
        _split_dependencies(walk, translated, dependencies, where)
    return translated


def _split_dependencies(
    walk: Walker, translated: dict[str, Any], dependencies: dict[str, Any], where: Where
) -> None:
    required = {k: v for k, v in dependencies.items() if isinstance(v, list)}
    schemas = {k: v for k, v in dependencies.items() if not isinstance(v, list)}
    if required:
        translated["dependentRequired"] = required
    if schemas:
        translated["dependentSchemas"] = schemas
    walk.lose(
        "DIALECT_TRANSLATED",
        where,
        "dependencies",
        "draft-07 dependencies written as dependentRequired and dependentSchemas (2020-12)",
    )
