"""References in a projection: ``$ref`` inlined (with its siblings merged in), recursion kept
or cut, references resolved in the document or in others, and the root definitions the output
still references projected once the rest is known."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urldefrag

from schemawire._pointer import resolve
from schemawire.project._arguments import IDENTITY, ArgumentMap
from schemawire.project._merge import merge_schemas
from schemawire.project._policy import ANY_SCALAR, DEFINITIONS, MISSING, Where, find, join_uri
from schemawire.project._walker import Walker

__all__ = ["inline", "inlines", "project_definitions"]


def inlines(walk: Walker, schema: dict[str, Any], where: Where) -> bool:
    """Whether the walk replaces the ``$ref`` of ``schema`` by what it names (the policy's
    ``inline_refs``), rather than keeping it."""
    reference = schema["$ref"]
    mode = walk.policy.inline_refs
    local_pointer = reference.startswith("#/") or reference == "#"
    if not (local_pointer and where.base == walk.base_uri):
        return True  # another document, or an anchor: only the walk can follow it
    # Without recursion, every reference is followed, so that a cycle is found and cut.
    return mode == "all" or not walk.policy.recursion or (mode == "siblings" and len(schema) > 1)


def inline(walk: Walker, schema: dict[str, Any], where: Where) -> tuple[Any, ArgumentMap]:
    """``schema`` with its ``$ref`` replaced by what it names, projected (a reference back
    into itself kept or cut, one that does not resolve left out), and its argument map."""
    reference = schema["$ref"]
    target_uri = join_uri(where.base, reference)
    if target_uri in walk.following:
        return _recursion(walk, schema, where)
    resolved = _resolve_reference(walk, reference, where)
    if resolved is None:
        walk.lose("REF_UNRESOLVED", where, "$ref", f"{reference} does not resolve")
        return walk.schema({k: v for k, v in schema.items() if k != "$ref"}, where)
    target, target_where = resolved
    walk.lose("REF_INLINED", where, "$ref", f"{reference} replaced by what it names")
    walk.following.append(target_uri)
    try:
        projected, arguments = walk.schema(target, target_where)
    finally:
        walk.following.pop()
    siblings = {k: v for k, v in schema.items() if k != "$ref"}
    if siblings:
        projected, arguments = _with_siblings(walk, projected, arguments, siblings, where)
    return projected, arguments


def _recursion(walk: Walker, schema: dict[str, Any], where: Where) -> tuple[Any, ArgumentMap]:
    reference = schema["$ref"]
    local = reference.startswith("#") and where.base == walk.base_uri
    if walk.policy.recursion and local:
        walk.kept_reference(reference)
        return {"$ref": reference}, IDENTITY
    walk.lose(
        "RECURSION_TRUNCATED",
        where,
        "$ref",
        f"recursive {reference} cut here: the target takes no recursion",
    )
    return ({"anyOf": list(ANY_SCALAR)} if walk.policy.typed else {}), IDENTITY


def _resolve_reference(walk: Walker, reference: str, where: Where) -> tuple[Any, Where] | None:
    target = urldefrag(join_uri(where.base, reference))
    fragment = unquote(target.fragment)
    if target.url == walk.base_uri and (fragment == "" or fragment.startswith("/")):
        try:
            found = resolve(walk.root, fragment)
        except KeyError:
            return None
        return found, Where(fragment, fragment, walk.base_uri, where.out)
    return _resolve_elsewhere(walk, reference, where)


def _resolve_elsewhere(walk: Walker, reference: str, where: Where) -> tuple[Any, Where] | None:
    target = urldefrag(join_uri(where.base, reference))
    document = walk.documents.get(target.url)
    if document is None:
        return None
    found = find(document, unquote(target.fragment))
    return None if found is MISSING else (found, Where(None, where.anchor, target.url, where.out))


def _with_siblings(
    walk: Walker, projected: Any, arguments: ArgumentMap, siblings: dict[str, Any], where: Where
) -> tuple[Any, ArgumentMap]:
    # A $ref with siblings applies both (2020-12); inlined, they merge into one subschema.
    own, own_arguments = walk.schema(siblings, where)
    if not isinstance(projected, dict) or not isinstance(own, dict):
        return own if projected is True else projected, arguments
    walk.reshaped()
    merged, conflicts = merge_schemas(projected, own)
    for keyword in conflicts:
        walk.lose(
            "REF_SIBLINGS_DROPPED",
            where,
            keyword,
            f"{keyword} beside $ref conflicts with the referenced schema",
        )
    return merged, own_arguments if arguments.is_identity else arguments


def project_definitions(
    walk: Walker, schema: dict[str, Any], projected: dict[str, Any], where: Where
) -> None:
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
            if _still_referenced(walk, child.anchor):
                taken = walk.as_is(definition)
                if taken is None:
                    taken = walk.schema(definition, child)[0]
                projected.setdefault(keyword, {})[name] = taken
                pending.remove(item)
                progress = True
    for keyword in DEFINITIONS:
        dropped = [name for kw, name, _ in pending if kw == keyword]
        if dropped and keyword not in projected:
            walk.lose(
                "DEFINITION_DROPPED",
                where,
                keyword,
                "no definition is referenced by "
                "the projected schema (inlined where used, or never used)",
            )
            continue
        for name in dropped:
            walk.lose(
                "DEFINITION_DROPPED",
                where.child((keyword, name), ()),
                None,
                "not referenced by the projected schema (inlined where it is used, or never used)",
            )


def _still_referenced(walk: Walker, pointer: str) -> bool:
    if walk.policy.inline_refs == "external":
        return True
    return any(ref == pointer or ref.startswith(pointer + "/") for ref in walk.kept_refs)
