"""The projection engine: one walk over a canonical schema that builds a target's schema.

Each keyword of each subschema is kept, rewritten or dropped according to the target's `Policy`,
and every change that makes the projected schema say something else than the canonical one is
recorded as a `Loss` at the canonical pointer and keyword. The walk also records where each
projected subschema came from (``origins``), and how to turn arguments sent in the projected
shape back into canonical ones (`ArgumentMap`).

Transforms shared by several targets live here as policy switches: closing objects and making
optional properties nullable (strict modes), ``oneOf`` to ``anyOf``, merging ``allOf``, ``const``
to ``enum``, type lists, inlining ``$ref``, cutting recursion, renaming property keys, turning
maps into key/value pairs, and restating dropped constraints in the description.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import unquote, urldefrag

from schemawire._pointer import join, resolve
from schemawire.project._arguments import IDENTITY, ArgumentMap
from schemawire.project._keywords import HANDLERS
from schemawire.project._limits import Size, count_node
from schemawire.project._merge import merge_alternatives, merge_schemas
from schemawire.project._policy import (
    ANNOTATIONS_KEPT_ON_PAIRS,
    ANY_SCALAR,
    DEFINITIONS,
    METADATA,
    MISSING,
    NULL,
    Node,
    Policy,
    WalkResult,
    Where,
    exists,
    find,
    is_object,
    join_uri,
    short,
    upper_case_types,
)
from schemawire.schema.dialect import (
    DRAFT_07,
    SUBSCHEMA_LISTS,
    SUBSCHEMA_MAPS,
    SUBSCHEMA_SINGLE,
    dialect_named,
)
from schemawire.types import Loss

__all__ = ["METADATA", "Policy", "Walk", "WalkResult"]


class Walk:
    """One projection of one canonical document under one `Policy`.

    Args:
        policy: what the target takes.
        document: ``"input"`` or ``"output"``, for losses and origins.
        base_uri: the canonical document's URI (its ``$id``).
        documents: other schema documents that references may name, by URI.
    """

    def __init__(
        self,
        policy: Policy,
        document: str,
        base_uri: str,
        documents: Mapping[str, Any],
        *,
        origins: bool = False,
        measure: bool = False,
    ) -> None:
        self.policy = policy
        self.track_origins = origins
        self.size = Size() if measure else None  # what the target counts, as the walk goes
        self._depth = 0
        self.document = document
        self.base_uri = base_uri
        self.documents = documents
        self.root: Any = None
        self.losses: list[Loss] = []
        self.draft_07 = False
        self.origins: dict[str, list[str]] = {}
        self._following: list[str] = []  # absolute URIs of the $refs being inlined
        self._kept_refs: set[str] = set()  # local fragments still referenced by the output
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
            self._definitions(schema, projected, where)
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
        self.losses.append(Loss(code, where.anchor, detail, keyword, self.document))

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
        if isinstance(schema.get("$ref"), str) and self._inlines(schema, where):
            return self._inline(schema, where)
        if self.draft_07:
            schema = self._in_2020_12(schema, where)
        node = Node()
        out, verbatim = node.out, self.policy.verbatim
        self._depth += 1
        for keyword, value in schema.items():
            if keyword in verbatim:  # most keywords: copied here, without a call per keyword
                out[keyword] = value
            else:
                self._keyword(node, keyword, value, schema, where)
        self._finish(node, schema, where)
        self._depth -= 1
        return out, node.arguments

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
        taken = self._as_is(schema)
        if taken is not None:
            return taken, IDENTITY
        return self.schema(schema, where.child(canonical, projected))

    def _as_is(self, schema: Any) -> dict[str, Any] | None:
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
        if policy.typed and (declared == "array" or _TYPING_KEYWORDS.isdisjoint(schema)):
            return None  # narrowed to scalars
        leaf = dict(schema)
        if policy.upper_case_types:
            upper_case_types(leaf)
        if self.size is not None:
            count_node(leaf, self.size)
            self.size.depth = max(self.size.depth, self._depth + 1)
        return leaf

    def _in_2020_12(self, schema: dict[str, Any], where: Where) -> dict[str, Any]:
        """A draft-07 subschema in draft 2020-12's words: every target reads 2020-12."""
        translated = dict(schema)
        translated.pop("$schema", None)  # 2020-12 is the dialect of every projection
        if isinstance(schema.get("items"), list):
            translated["prefixItems"] = translated.pop("items")
            if "additionalItems" in translated:
                translated["items"] = translated.pop("additionalItems")
            self.lose(
                "DIALECT_TRANSLATED",
                where,
                "items",
                "draft-07 tuple items written as prefixItems (2020-12)",
            )
        elif "additionalItems" in translated:
            del translated["additionalItems"]  # ignored by draft-07 without tuple items
            self.lose(
                "DIALECT_TRANSLATED",
                where,
                "additionalItems",
                "no effect without tuple items; left out",
            )
        dependencies = translated.pop("dependencies", None)
        if isinstance(dependencies, dict):
            self._split_dependencies(translated, dependencies, where)
        return translated

    def _split_dependencies(
        self, translated: dict[str, Any], dependencies: dict[str, Any], where: Where
    ) -> None:
        required = {k: v for k, v in dependencies.items() if isinstance(v, list)}
        schemas = {k: v for k, v in dependencies.items() if not isinstance(v, list)}
        if required:
            translated["dependentRequired"] = required
        if schemas:
            translated["dependentSchemas"] = schemas
        self.lose(
            "DIALECT_TRANSLATED",
            where,
            "dependencies",
            "draft-07 dependencies written as dependentRequired and dependentSchemas (2020-12)",
        )

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
        """``keyword`` of ``schema`` as the target takes it, unless it is verbatim (`schema`
        copies those itself)."""
        policy = self.policy
        root_alternatives = keyword in _ALTERNATIVES and where.out == "" and policy.object_root
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

    # --- references -------------------------------------------------------------------------

    def _inlines(self, schema: dict[str, Any], where: Where) -> bool:
        reference = schema["$ref"]
        mode = self.policy.inline_refs
        local_pointer = reference.startswith("#/") or reference == "#"
        if not (local_pointer and where.base == self.base_uri):
            return True  # another document, or an anchor: only the walk can follow it
        # Without recursion, every reference is followed, so that a cycle is found and cut.
        return (
            mode == "all" or not self.policy.recursion or (mode == "siblings" and len(schema) > 1)
        )

    def _inline(self, schema: dict[str, Any], where: Where) -> tuple[Any, ArgumentMap]:
        reference = schema["$ref"]
        target_uri = join_uri(where.base, reference)
        if target_uri in self._following:
            return self._recursion(schema, where)
        resolved = self._resolve(reference, where)
        if resolved is None:
            self.lose("REF_UNRESOLVED", where, "$ref", f"{reference} does not resolve")
            return self.schema({k: v for k, v in schema.items() if k != "$ref"}, where)
        target, target_where = resolved
        self.lose("REF_INLINED", where, "$ref", f"{reference} replaced by what it names")
        self._following.append(target_uri)
        try:
            projected, arguments = self.schema(target, target_where)
        finally:
            self._following.pop()
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        if siblings:
            projected, arguments = self._with_siblings(projected, arguments, siblings, where)
        return projected, arguments

    def _recursion(self, schema: dict[str, Any], where: Where) -> tuple[Any, ArgumentMap]:
        reference = schema["$ref"]
        local = reference.startswith("#") and where.base == self.base_uri
        if self.policy.recursion and local:
            self.kept_reference(reference)
            return {"$ref": reference}, IDENTITY
        self.lose(
            "RECURSION_TRUNCATED",
            where,
            "$ref",
            f"recursive {reference} cut here: the target takes no recursion",
        )
        return ({"anyOf": list(ANY_SCALAR)} if self.policy.typed else {}), IDENTITY

    def _resolve(self, reference: str, where: Where) -> tuple[Any, Where] | None:
        target = urldefrag(join_uri(where.base, reference))
        fragment = unquote(target.fragment)
        if target.url == self.base_uri and (fragment == "" or fragment.startswith("/")):
            try:
                found = resolve(self.root, fragment)
            except KeyError:
                return None
            return found, Where(fragment, fragment, self.base_uri, where.out)
        return self._resolve_elsewhere(reference, where)

    def _resolve_elsewhere(self, reference: str, where: Where) -> tuple[Any, Where] | None:
        target = urldefrag(join_uri(where.base, reference))
        document = self.documents.get(target.url)
        if document is None:
            return None
        found = find(document, unquote(target.fragment))
        return (
            None if found is MISSING else (found, Where(None, where.anchor, target.url, where.out))
        )

    def _with_siblings(
        self, projected: Any, arguments: ArgumentMap, siblings: dict[str, Any], where: Where
    ) -> tuple[Any, ArgumentMap]:
        # A $ref with siblings applies both (2020-12); inlined, they merge into one subschema.
        own, own_arguments = self.schema(siblings, where)
        if not isinstance(projected, dict) or not isinstance(own, dict):
            return own if projected is True else projected, arguments
        self.reshaped()
        merged, conflicts = merge_schemas(projected, own)
        for keyword in conflicts:
            self.lose(
                "REF_SIBLINGS_DROPPED",
                where,
                keyword,
                f"{keyword} beside $ref conflicts with the referenced schema",
            )
        return merged, own_arguments if arguments.is_identity else arguments

    def _definitions(self, schema: dict[str, Any], projected: dict[str, Any], where: Where) -> None:
        """Project the root definitions that the output still references; report the rest."""
        if schema.keys().isdisjoint(DEFINITIONS):
            return  # most tools
        pending = [
            (keyword, name, definition)
            for keyword in DEFINITIONS
            if isinstance(schema.get(keyword), dict)
            for name, definition in schema[keyword].items()
        ]
        progress = True
        while pending and progress:  # a kept definition may reference another one
            progress = False
            for item in list(pending):
                keyword, name, definition = item
                child = where.child((keyword, name), (keyword, name))
                if self._still_referenced(child.anchor):
                    taken = self._as_is(definition)
                    if taken is None:
                        taken = self.schema(definition, child)[0]
                    projected.setdefault(keyword, {})[name] = taken
                    pending.remove(item)
                    progress = True
        for keyword in DEFINITIONS:
            dropped = [name for kw, name, _ in pending if kw == keyword]
            if dropped and keyword not in projected:
                self.lose(
                    "DEFINITION_DROPPED",
                    where,
                    keyword,
                    "no definition is referenced by "
                    "the projected schema (inlined where used, or never used)",
                )
                continue
            for name in dropped:
                self.lose(
                    "DEFINITION_DROPPED",
                    where.child((keyword, name), ()),
                    None,
                    "not referenced by the projected schema (inlined where it is used, "
                    "or never used)",
                )

    def kept_reference(self, reference: str) -> None:
        """Note that the output keeps ``reference`` (a local one: the walk inlines the rest)."""
        self._kept_refs.add(unquote(reference[1:]))

    def _still_referenced(self, pointer: str) -> bool:
        if self.policy.inline_refs == "external":
            return True
        return any(ref == pointer or ref.startswith(pointer + "/") for ref in self._kept_refs)

    # --- the end of a subschema -------------------------------------------------------------

    def _finish(self, node: Node, schema: dict[str, Any], where: Where) -> None:
        out, policy = node.out, self.policy
        if node.arguments.renames and isinstance(out.get("required"), list):
            projected = {canonical: name for name, canonical in node.arguments.renames.items()}
            out["required"] = [projected.get(name, name) for name in out["required"]]
        if policy.strict:
            self._strict_object(node, schema, where)
        if policy.typed:
            self._require_type(out, where)
        if node.restated:
            note = "Constraints: " + "; ".join(node.restated) + "."
            description = out.get("description")
            out["description"] = f"{description} {note}" if description else note
        if policy.upper_case_types:
            upper_case_types(out)
        if self.size is not None:
            count_node(out, self.size)
            self.size.depth = max(self.size.depth, self._depth)

    def _strict_object(self, node: Node, schema: dict[str, Any], where: Where) -> None:
        """A strict target's object: closed, or sent as key/value pairs (a map)."""
        an_object = is_object(node.out)
        if node.map_values is None and an_object:
            self._open_by_default(node, schema, where)
        if node.map_values is not None:
            self._map_to_pairs(node, schema, where)
        elif an_object:
            self._close_object(node, where)

    def _open_by_default(self, node: Node, schema: dict[str, Any], where: Where) -> None:
        """An object that says nothing of other keys takes any: JSON Schema's default, which a
        strict target reverses. A free-form object (no properties) below the root is sent as
        pairs like any map; otherwise the closing is reported."""
        if not _OTHER_KEYS.isdisjoint(schema):
            return  # their handlers decided
        if "properties" in schema:
            detail = "keys other than the named ones are refused: the target takes no open objects"
        elif self.policy.maps == "pairs" and where.out:
            node.map_values = {}
            return
        else:
            detail = "a free-form object can only be empty: the target takes no open objects"
        self.lose("MAP_CLOSED", where, None, detail)

    def _map_to_pairs(self, node: Node, schema: dict[str, Any], where: Where) -> None:
        self.reshaped()
        kept = {k: v for k, v in node.out.items() if k in ANNOTATIONS_KEPT_ON_PAIRS}
        for keyword in set(node.out) - set(kept) - {"additionalProperties"}:
            self.lose("MAP_TO_PAIRS", where, keyword, "the object is sent as a list of pairs")
        value_where = where.child(("additionalProperties",), ("items", "properties", "value"))
        values, arguments = self.schema(node.map_values, value_where)
        pair = {
            "type": "object",
            "properties": {"key": {"type": "string"}, "value": values},
            "required": ["key", "value"],
            "additionalProperties": False,
        }
        node.out.clear()
        node.out.update({"type": "array", "items": pair, **kept})
        node.restated.append("send the entries as a list of {key, value} objects")
        node.arguments = replace(
            node.arguments, pairs=True, values=None if arguments.is_identity else arguments
        )
        self.lose(
            "MAP_TO_PAIRS",
            where,
            "additionalProperties",
            "a map is sent as a list of {key, value} objects, turned back before the gate",
        )

    def _close_object(self, node: Node, where: Where) -> None:
        out = node.out
        properties: dict[str, Any] = out.setdefault("properties", {})
        out["additionalProperties"] = False
        required = out.get("required", [])
        declared = [name for name in required if name in properties]
        listed = set(declared)
        optional = [name for name in properties if name not in listed]
        if len(declared) < len(required):
            self.lose(
                "KEYWORD_DROPPED",
                where,
                "required",
                "required names a property that is "
                "not defined; strict objects take defined properties only",
            )
        out["required"] = declared + optional
        if not optional:
            return
        renames = node.arguments.renames
        canonical = {name: renames.get(name, name) for name in optional}
        self.lose(
            "OPTIONAL_TO_NULLABLE",
            where,
            "required",
            f"optional {', '.join(canonical.values())} made required; null stands for absent",
        )
        for name in optional:
            child = where.child(("properties", canonical[name]), ("properties", name))
            properties[name] = self._nullable(properties[name], child)
        node.arguments = node.arguments.with_optional_nulls(canonical.values())

    def _nullable(self, schema: Any, where: Where) -> Any:
        """``schema`` that also takes ``null`` (an optional property made required)."""
        if not isinstance(schema, dict):
            return schema
        nullable = dict(schema)
        declared = nullable.get("type")
        changed: list[str] = []
        if isinstance(nullable.get("enum"), list):
            if None not in nullable["enum"]:
                nullable["enum"] = [*nullable["enum"], None]
                changed.append("enum")
        elif "const" in nullable or (declared is None and "anyOf" not in nullable):
            return self._null_or(schema, where)
        if isinstance(declared, str) and declared != "null":
            nullable["type"] = [declared, "null"]
            changed.append("type")
        elif isinstance(declared, list) and "null" not in declared:
            nullable["type"] = [*declared, "null"]
            changed.append("type")
        elif declared is None and NULL not in nullable.get("anyOf", [NULL]):
            nullable["anyOf"] = [*nullable["anyOf"], dict(NULL)]
            changed.append("anyOf")
        for keyword in changed:
            self.lose("OPTIONAL_TO_NULLABLE", where, keyword, "also takes null, for absent")
        return nullable

    def _null_or(self, schema: dict[str, Any], where: Where) -> dict[str, Any]:
        """``{"anyOf": [schema, null]}``, with the origins below ``schema`` moved along."""
        self._move_origins(where.out, join(where.out, "anyOf", 0))
        self.lose("OPTIONAL_TO_NULLABLE", where, None, "wrapped to also take null, for absent")
        return {"anyOf": [schema, dict(NULL)]}

    def _move_origins(self, old: str, new: str) -> None:
        moved = {
            key: value
            for key, value in self.origins.items()
            if key == old or key.startswith(old + "/")
        }
        for key, value in moved.items():
            del self.origins[key]
            self.origins[new + key[len(old) :]] = value

    def _require_type(self, out: dict[str, Any], where: Where) -> None:
        if not _TYPING_KEYWORDS.isdisjoint(out):
            if out.get("type") == "array" and "items" not in out:
                out["items"] = {"anyOf": list(ANY_SCALAR)}
                self.lose("TYPE_NARROWED", where, "items", "untyped items narrowed to scalars")
            return
        out["anyOf"] = list(ANY_SCALAR)
        self.lose("TYPE_NARROWED", where, None, "any value narrowed to any scalar")


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


_ALTERNATIVES = frozenset({"anyOf", "oneOf"})
# Keywords that say what an object does with keys it does not name.
_OTHER_KEYS = frozenset({"additionalProperties", "unevaluatedProperties", "patternProperties"})
# Keywords that say what type a value has, directly or through other schemas.
_TYPING_KEYWORDS = frozenset({"type", "anyOf", "enum", "const", "$ref", "allOf", "oneOf"})
