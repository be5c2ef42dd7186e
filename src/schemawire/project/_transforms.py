"""The projection engine: one walk over a canonical schema that builds a target's schema.

Each keyword of each subschema is kept, rewritten or dropped according to the target's `Policy`,
and every change that makes the projected schema say something else than the canonical one is
recorded as a `Loss` at the canonical pointer and keyword. The walk also records where each
projected subschema came from (``origins``), and how to turn arguments sent in the projected
shape back into canonical ones (`ArgumentMap`).

Transforms shared by several targets live here as policy switches: closing objects and making
optional properties nullable (strict modes), ``oneOf`` to ``anyOf``, merging ``allOf``, ``const``
to ``enum``, type lists, inlining ``$ref``, cutting recursion, renaming property keys, turning
maps into key/value pairs, and restating dropped constraints in the description. The walk
itself is here; what it does by concept lives beside it: `_keywords` (one handler per keyword),
`_references` (``$ref``, recursion, definitions), `_strict` (closing, nullable optionals, maps
as pairs, typing) and `_draft07` (draft-07 read as 2020-12). Those steps are given the walk as
a `_walker.Walker`, the Protocol `Walk` satisfies, so that they need not import this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import cache
from typing import Any
from urllib.parse import unquote

from schemawire.project._arguments import IDENTITY, ArgumentMap
from schemawire.project._draft07 import in_2020_12
from schemawire.project._keywords import HANDLERS
from schemawire.project._limits import PER_PROPERTY, Size, TargetLimit, count_node
from schemawire.project._merge import merge_alternatives, merge_schemas
from schemawire.project._policy import (
    ANY_SCALAR,
    DEFINITIONS,
    METADATA,
    ROOT_ALTERNATIVES,
    Node,
    Policy,
    WalkResult,
    Where,
    exists,
    is_object,
    join_uri,
    short,
    upper_case_types,
)
from schemawire.project._references import inline, inlines, project_definitions
from schemawire.project._strict import TYPING_KEYWORDS, require_type, strict_object
from schemawire.schema.dialect import (
    DRAFT_07,
    SUBSCHEMA_LISTS,
    SUBSCHEMA_MAPS,
    SUBSCHEMA_SINGLE,
    dialect_named,
)
from schemawire.types import Loss

__all__ = ["METADATA", "Policy", "Walk", "WalkResult", "shared_loss"]

# The losses made so far, by their fields, for `shared_loss`; emptied when it holds this many.
_SHARED_LOSSES: dict[tuple[str, str, str, str | None, str], Loss] = {}
_MOST_SHARED_LOSSES = 1 << 16


def shared_loss(code: str, pointer: str, detail: str, keyword: str | None, document: str) -> Loss:
    """The `Loss` with these fields: one already made when there is one.

    A loss is frozen, and the same few come back tool after tool and request after request
    (every strict object is closed, every optional property made nullable at a pointer such as
    ``/properties/unit``): sharing them makes the walk keep a fifth of the objects it kept,
    which the garbage collector otherwise scans again and again. The table is bounded: it is
    emptied when full, so a process that projects ever new schemas does not grow with it.
    """
    key = (code, pointer, detail, keyword, document)
    loss = _SHARED_LOSSES.get(key)
    if loss is None:
        if len(_SHARED_LOSSES) >= _MOST_SHARED_LOSSES:
            _SHARED_LOSSES.clear()
        loss = _SHARED_LOSSES[key] = Loss(code, pointer, detail, keyword, document)
    return loss


class Walk:
    """One projection of one canonical document under one `Policy`.

    Args:
        policy: what the target takes.
        document: ``"input"`` or ``"output"``, for losses and origins.
        base_uri: the canonical document's URI (its ``$id``).
        documents: other schema documents that references may name, by URI.
        origins: record where each projected subschema came from.
        measure: the limits whose `Size` fields are counted on the result as the walk goes.
    """

    def __init__(
        self,
        policy: Policy,
        document: str,
        base_uri: str,
        documents: Mapping[str, Any],
        *,
        origins: bool = False,
        measure: tuple[TargetLimit, ...] = (),
    ) -> None:
        self.policy = policy
        self.track_origins = origins
        self.size = Size() if measure else None  # what the target counts, as the walk goes
        self._per_property = _bounds_per_property(measure)
        self._depth = 0
        self.document = document
        self.base_uri = base_uri
        self.documents = documents
        self.root: Any = None
        self.losses: list[Loss] = []
        self.draft_07 = False
        self.origins: dict[str, list[str]] = {}
        self.following: list[str] = []  # absolute URIs of the $refs being inlined
        self.kept_refs: set[str] = set()  # local fragments still referenced by the output
        self._moved = False  # subschemas merged or wrapped: some origins point at nothing now
        self._passes_as_is = False  # subschemas taken as they are are passed on unvisited

    def run(self, schema: Any) -> WalkResult:
        """Project ``schema`` (the canonical document)."""
        self.root = schema
        self.draft_07 = (
            isinstance(schema, dict)
            and dialect_named(
                schema.get("$schema") if isinstance(schema.get("$schema"), str) else None
            )
            is DRAFT_07
        )
        # What the target takes as it is can be passed on whole, unvisited, unless every
        # subschema must be visited: to record its origin, count its size, translate its
        # dialect, or close and type it (strict and typed targets).
        policy = self.policy
        self._passes_as_is = not (
            self.track_origins
            or self.size is not None
            or self.draft_07
            or policy.strict
            or policy.typed
        )
        if self._passes_as_is:
            unchanged = self._unchanged_root(schema)
            if unchanged is not None:
                return WalkResult(unchanged, [], {}, IDENTITY)
        where = Where("", "", self.base_uri, "")
        projected, arguments = self.schema(schema, where)
        if isinstance(schema, dict) and isinstance(projected, dict):
            project_definitions(self, schema, projected, where)
        origins = self.origins
        if self._moved:  # merged away, or wrapped: nothing is there now
            origins = {at: sources for at, sources in origins.items() if exists(projected, at)}
        return WalkResult(projected, self.losses, origins, arguments, self.size)

    def _unchanged_root(self, schema: Any) -> dict[str, Any] | None:
        """``schema`` itself (a shallow copy of its root) when the target takes every keyword
        of it as it is: the fast path for most tools under non-strict targets. Subschemas are
        shared with the canonical schema, which nobody changes."""
        policy = self.policy
        if not isinstance(schema, dict):
            return None
        body = {k: v for k, v in schema.items() if k not in METADATA and not k.startswith("x-")}
        if policy.object_root and ("anyOf" in body or "oneOf" in body):
            return None
        if not _takes_as_is(body, policy):
            return None
        kept = {k: v for k, v in schema.items() if k in policy.keep and k not in body}
        return {**kept, **body}

    # --- reporting ------------------------------------------------------------------------

    def lose(self, code: str, where: Where, keyword: str | None, detail: str) -> None:
        """Record that the projection does not say what the canonical schema says here."""
        self.losses.append(shared_loss(code, where.anchor, detail, keyword, self.document))

    # --- subschemas -----------------------------------------------------------------------

    def schema(self, schema: Any, where: Where) -> tuple[Any, ArgumentMap]:
        """``schema``, found at ``where``, as the target takes it, and its argument map."""
        if self.track_origins and where.pointer is not None:
            self.origins.setdefault(where.out, []).append(f"{self.document}:{where.pointer}")
        if isinstance(schema, bool):
            return self._boolean(schema, where), IDENTITY
        if not isinstance(schema, dict):
            return schema, IDENTITY
        if "$id" in schema and isinstance(schema["$id"], str) and where.out:
            where = replace(where, base=join_uri(where.base, schema["$id"]))
        if isinstance(schema.get("$ref"), str) and inlines(self, schema, where):
            return inline(self, schema, where)
        if self.draft_07:
            schema = in_2020_12(self, schema, where)
        node = Node()
        out, verbatim, handled = node.out, self.policy.verbatim, self.policy.handled_anywhere
        self._depth += 1
        for keyword, value in schema.items():
            if keyword in verbatim:  # most keywords: copied here, without a call per keyword
                out[keyword] = value
            elif keyword in handled:  # the type, properties, items: straight to the handler
                HANDLERS[keyword](self, node, value, schema, where)
            else:
                self._keyword(node, keyword, value, schema, where)
        self._finish(node, schema, where)
        self._depth -= 1
        return out, node.argument_map

    def child(
        self,
        schema: Any,
        where: Where,
        canonical: tuple[str | int, ...],
        projected: tuple[str | int, ...],
    ) -> tuple[Any, ArgumentMap]:
        """``schema``, found at ``canonical`` below ``where`` and sent at ``projected`` below it,
        as the target takes it. What the target takes as it is (most properties: a type and a
        description) is passed on, or copied, without making a `Where` or a `Node`."""
        taken = self.as_is(schema)
        if taken is not None:
            return taken, IDENTITY
        return self.schema(schema, where.child(canonical, projected))

    def as_is(self, schema: Any) -> dict[str, Any] | None:
        """``schema`` itself, or a copy, when the target takes it as it is and nothing needs it
        visited; else None."""
        if not isinstance(schema, dict) or self.track_origins:
            return None
        if self._passes_as_is and _takes_as_is(schema, self.policy):
            return schema  # shared, as the unchanged root's subschemas are
        return self._as_is_leaf(schema)

    def _as_is_leaf(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        """A copy of ``schema`` when the walk would copy it keyword by keyword and leave it as
        it is at the end, else None."""
        policy = self.policy
        if not policy.leaf_keywords.issuperset(schema) or self.draft_07:
            return None  # a subschema inside, or a keyword that needs its handler
        declared = schema.get("type")
        if isinstance(declared, list) and "type" in policy.handled:
            return None  # a type list, which this target writes differently
        if policy.strict and is_object(schema):
            return None  # closed, or sent as key/value pairs
        if policy.typed and (declared == "array" or TYPING_KEYWORDS.isdisjoint(schema)):
            return None  # narrowed to scalars
        leaf = dict(schema)
        if policy.upper_case_types:
            upper_case_types(leaf)
        if self.size is not None:
            count_node(leaf, self.size, per_property=self._per_property)
            self.size.depth = max(self.size.depth, self._depth + 1)
        return leaf

    def _boolean(self, schema: bool, where: Where) -> Any:
        if schema and self.policy.typed:
            self.lose("TYPE_NARROWED", where, None, "true (any value) narrowed to any scalar")
            return {"anyOf": list(ANY_SCALAR)}
        if self.policy.boolean_schemas:
            return schema
        if schema:
            return {}  # says the same: any value
        if "not" in self.policy.keep:
            return {"not": {}}
        self.lose(
            "FALSE_SCHEMA_DROPPED",
            where,
            None,
            "false (no value) cannot be said here; the gate still refuses any value",
        )
        return {}

    def _keyword(
        self, node: Node, keyword: str, value: Any, schema: dict[str, Any], where: Where
    ) -> None:
        """``keyword`` of ``schema`` as the target takes it, unless it is verbatim or handled
        anywhere (`schema` copies those itself, or calls their handler)."""
        policy = self.policy
        root_alternatives = keyword in ROOT_ALTERNATIVES and where.out == "" and policy.object_root
        if keyword in policy.handled and not root_alternatives:
            HANDLERS[keyword](self, node, value, schema, where)
        elif root_alternatives:
            self._root_alternatives(node, keyword, value, where)
        elif keyword in METADATA or keyword.startswith("x-"):
            if keyword in policy.keep and where.out == "":
                node.out[keyword] = value
        elif keyword in DEFINITIONS and where.pointer == "":
            pass  # projected once the rest is known: only what is still referenced is kept
        elif keyword in policy.keep:
            node.out[keyword] = self.subschemas(keyword, value, where)
        else:
            self.drop(node, keyword, value, where)

    def reshaped(self) -> None:
        """Note that subschemas were merged or rebuilt: some origins may point at nothing."""
        self._moved = True

    def _root_alternatives(self, node: Node, keyword: str, value: Any, where: Where) -> None:
        self.reshaped()
        if not isinstance(value, list):
            self.drop(node, keyword, value, where)
            return
        branches = []
        for index, branch in enumerate(value):
            branch_where = where.child((keyword, index), ())
            branches.append(self.schema(branch, branch_where)[0])
            self.lose(
                "ROOT_COMBINATOR_DROPPED",
                branch_where,
                None,
                "merged into the root object; the gate enforces the alternatives",
            )
        merged, _ = merge_alternatives(branches)
        combined, _ = merge_schemas(node.out, merged)
        node.out.clear()
        node.out.update(combined)
        self.lose(
            "ROOT_COMBINATOR_DROPPED",
            where,
            keyword,
            f"root {keyword} merged into one object taking every branch's properties",
        )

    def drop(self, node: Node, keyword: str, value: Any, where: Where) -> None:
        if keyword in self.policy.restate:
            node.restated.append(f"{keyword}: {short(value)}")
            self.lose(
                "CONSTRAINT_TO_DESCRIPTION",
                where,
                keyword,
                f"{keyword} is not supported; restated in the description",
            )
        elif keyword == "default":
            self.lose("DEFAULT_DROPPED", where, keyword, "default is not supported")
        else:
            self.lose("KEYWORD_DROPPED", where, keyword, f"{keyword} is not supported")

    def subschemas(self, keyword: str, value: Any, where: Where) -> Any:
        """``value`` of ``keyword`` with each subschema it holds projected in turn."""
        if keyword in SUBSCHEMA_MAPS and isinstance(value, dict):
            return {
                k: self.child(v, where, (keyword, k), (keyword, k))[0] for k, v in value.items()
            }
        if keyword in SUBSCHEMA_LISTS and isinstance(value, list):
            return [
                self.child(v, where, (keyword, i), (keyword, i))[0] for i, v in enumerate(value)
            ]
        if keyword in SUBSCHEMA_SINGLE and isinstance(value, dict | bool):
            return self.child(value, where, (keyword,), (keyword,))[0]
        return value

    def kept_reference(self, reference: str) -> None:
        """Note that the output keeps ``reference`` (a local one: the walk inlines the rest)."""
        self.kept_refs.add(unquote(reference[1:]))

    def _finish(self, node: Node, schema: dict[str, Any], where: Where) -> None:
        out, policy = node.out, self.policy
        if node.argument_map.renames and isinstance(out.get("required"), list):
            projected = {canonical: name for name, canonical in node.argument_map.renames.items()}
            out["required"] = [projected.get(name, name) for name in out["required"]]
        if policy.strict:
            strict_object(self, node, schema, where)
        if policy.typed:
            require_type(self, out, where)
        if node.restated:
            note = "Constraints: " + "; ".join(node.restated) + "."
            description = out.get("description")
            out["description"] = f"{description} {note}" if description else note
        if policy.upper_case_types:
            upper_case_types(out)
        if self.size is not None:
            count_node(out, self.size, per_property=self._per_property)
            self.size.depth = max(self.size.depth, self._depth)


@cache
def _bounds_per_property(limits: tuple[TargetLimit, ...]) -> bool:
    """Whether one of ``limits`` bounds a `PER_PROPERTY` field (the same few tuples of limits
    come back for every walk)."""
    return any(limit.field in PER_PROPERTY for limit in limits)


def _takes_as_is(schema: Any, policy: Policy) -> bool:
    """Whether ``policy`` takes ``schema`` and every subschema of it without any change."""
    if not isinstance(schema, dict):
        return isinstance(schema, bool) and policy.boolean_schemas
    verbatim = policy.verbatim
    if verbatim.issuperset(schema):
        return True  # a leaf, most of the time
    children: Iterable[Any]
    for keyword, value in schema.items():
        if keyword in verbatim:
            continue
        if keyword == "properties" and isinstance(value, dict):
            keys = policy.property_keys
            if keys is not None and not all(map(keys.accepts, value)):
                return False
            children = value.values()
        elif keyword in policy.as_is_holders:
            children = value if isinstance(value, list) else [value]
        else:
            return False
        for child in children:
            if not _takes_as_is(child, policy):
                return False
    return True
