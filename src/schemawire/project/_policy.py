"""The parts of a projection every step shares: a target's `Policy`, where the walk is
(`Where`), the subschema under construction (`Node`), the walk's result, and small helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urljoin

from schemawire._json import dumps
from schemawire._pointer import escape, resolve
from schemawire.project._arguments import IDENTITY, ArgumentMap
from schemawire.project._limits import Size
from schemawire.project._names import NameRule
from schemawire.schema.dialect import SUBSCHEMA_LISTS, SUBSCHEMA_MAPS, SUBSCHEMA_SINGLE
from schemawire.types import Loss

__all__ = [
    "ANNOTATIONS_KEPT_ON_PAIRS",
    "ANY_SCALAR",
    "DEFINITIONS",
    "METADATA",
    "MISSING",
    "NULL",
    "RESTATABLE",
    "Node",
    "Policy",
    "WalkResult",
    "Where",
    "enum_value_ok",
    "exists",
    "find",
    "is_object",
    "join_uri",
    "short",
    "upper_case_types",
]

# Keywords that schemawire and JSON Schema tooling use about a schema, not constraints on the
# data: they are never sent to a model and never count as a loss.
METADATA = frozenset({"$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary"})

# Keywords worth saying to the model in a description when a target cannot keep them: every
# target restates those of these it does not keep (`Policy.restate`).
RESTATABLE = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "prefixItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "patternProperties",
        "dependentRequired",
        "default",
        "examples",
        "not",
        "if",
        "then",
        "else",
    }
)

DEFINITIONS = ("$defs", "definitions")
# What a root that must be one object merges into itself instead of keeping.
ROOT_ALTERNATIVES = frozenset({"anyOf", "oneOf"})
# Keywords holding subschemas that a policy keeping them may pass on as they are.
_AS_IS_HOLDERS = frozenset(
    {
        "items",
        "additionalProperties",
        "anyOf",
        "allOf",
        "oneOf",
        "prefixItems",
        "not",
        "contains",
        "if",
        "then",
        "else",
    }
)
NULL = {"type": "null"}
ANNOTATIONS_KEPT_ON_PAIRS = ("description", "title")
# What an untyped subschema becomes where a target needs a type: any JSON scalar.
ANY_SCALAR = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]


@dataclass(frozen=True, slots=True)
class Policy:
    """What one target takes, as switches of the shared transforms.

    Attributes:
        keep: keywords passed through (their subschemas projected in turn); the others are
            dropped, or restated in the description when they are in ``restate``.
        restate: dropped keywords worth saying to the model in the description text.
        strict: close every object and require every property (optional ones become nullable).
        typed: every subschema needs a type (an untyped one becomes any JSON scalar).
        one_of_to_any_of: rewrite ``oneOf`` as ``anyOf`` (exclusivity is lost).
        merge_all_of: merge ``allOf`` branches into the subschema that holds them.
        const_to_enum: rewrite ``const`` as a one-value ``enum``.
        type_lists: ``keep`` type lists; ``null_only`` keeps ``[T, "null"]`` and turns others into
            ``anyOf``; ``nullable`` writes OpenAPI's ``nullable: true`` and one type.
        inline_refs: which ``$ref`` to replace by their target: ``external`` (other documents
            only), ``siblings`` (also those with sibling keywords), ``all``.
        recursion: the target takes recursive references (else they are cut).
        property_keys: the rule property keys must follow (None: any key).
        formats: the formats the target takes (None: any).
        enum_values: which values an ``enum`` may hold.
        maps: what becomes of ``additionalProperties`` with a schema under ``strict``:
            ``pairs`` (a list of key/value objects) or ``close``.
        upper_case_types: write type names in upper case (OpenAPI, for Gemini).
        max_min_items: the largest ``minItems`` the target takes (None: any).
        pattern_ok: which ``pattern`` values the target takes (None: any).
        object_root: the root must be one object: root ``anyOf``/``oneOf`` branches are merged
            into it (the gate still enforces the alternatives).
        boolean_schemas: the target takes ``true`` and ``false`` as schemas.
    """

    keep: frozenset[str]
    restate: frozenset[str] = frozenset()
    strict: bool = False
    typed: bool = False
    one_of_to_any_of: bool = False
    merge_all_of: bool = False
    const_to_enum: bool = False
    type_lists: Literal["keep", "null_only", "nullable"] = "keep"
    inline_refs: Literal["external", "siblings", "all"] = "external"
    recursion: bool = True
    property_keys: NameRule | None = None
    formats: frozenset[str] | None = None
    enum_values: Literal["any", "primitives", "strings", "strings_and_numbers"] = "any"
    maps: Literal["pairs", "close"] = "pairs"
    upper_case_types: bool = False
    max_min_items: int | None = None
    pattern_ok: Callable[[str], bool] | None = None
    object_root: bool = False
    boolean_schemas: bool = True
    # Derived once: keywords copied as they are, and keywords that need their handler.
    verbatim: frozenset[str] = field(init=False, default=frozenset())
    handled: frozenset[str] = field(init=False, default=frozenset())
    # Keywords a subschema may hold to be taken as it is, whole: the verbatim ones, and a type
    # (its handler only rewrites type lists; the walk checks the value).
    leaf_keywords: frozenset[str] = field(init=False, default=frozenset())
    # Keywords holding subschemas that are passed on as they are, when those are.
    as_is_holders: frozenset[str] = field(init=False, default=frozenset())
    # Handled keywords whose handler runs wherever they are: all but a root's anyOf and oneOf,
    # which an object root merges instead.
    handled_anywhere: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        handled = {keyword for keyword, needed in self._handler_needs().items() if needed}
        holders = SUBSCHEMA_SINGLE | SUBSCHEMA_MAPS | SUBSCHEMA_LISTS
        verbatim = self.keep - holders - handled - METADATA
        object.__setattr__(self, "handled", frozenset(handled))
        object.__setattr__(self, "handled_anywhere", frozenset(handled - ROOT_ALTERNATIVES))
        object.__setattr__(self, "verbatim", frozenset(verbatim))
        leaf_keywords = verbatim | ({"type"} if "type" in self.keep else set())
        object.__setattr__(self, "leaf_keywords", frozenset(leaf_keywords))
        rewritten = handled - {"items", "additionalProperties"}
        object.__setattr__(self, "as_is_holders", (_AS_IS_HOLDERS & self.keep) - rewritten)

    def _handler_needs(self) -> dict[str, bool]:
        """Keyword -> whether projecting it takes more than copying it (under this policy)."""
        return {
            "$ref": True,
            "properties": True,
            "items": True,
            "additionalProperties": True,
            "type": self.type_lists != "keep" or self.upper_case_types,
            "enum": self.enum_values != "any" or "enum" not in self.keep,
            "const": self.const_to_enum or "const" not in self.keep,
            "oneOf": self.one_of_to_any_of or "oneOf" not in self.keep,
            "allOf": self.merge_all_of or "allOf" not in self.keep,
            "format": self.formats is not None or "format" not in self.keep,
            "pattern": self.pattern_ok is not None or "pattern" not in self.keep,
            "minItems": self.max_min_items is not None or "minItems" not in self.keep,
            "required": False,
        }


# Not frozen: a frozen dataclass is 4x slower to make, and the walk makes one per subschema.
@dataclass(slots=True)
class Where:
    """Where the walk is: in the canonical document (or in content it references), and in the
    projected schema. Nothing changes a Where once it is made."""

    pointer: str | None  # in the canonical document; None inside another document
    anchor: str  # the canonical pointer that losses are reported at
    base: str  # the base URI of $ref here
    out: str  # in the projected schema

    def child(self, canonical: tuple[str | int, ...], projected: tuple[str | int, ...]) -> Where:
        if self.pointer is None:
            return Where(None, self.anchor, self.base, _extend(self.out, projected))
        pointer = _extend(self.pointer, canonical)
        # Most subschemas are at the same place in both schemas: the pointer is made once.
        same = projected == canonical and self.out == self.pointer
        return Where(pointer, pointer, self.base, pointer if same else _extend(self.out, projected))


def _extend(pointer: str, tokens: tuple[str | int, ...]) -> str:
    # join(), unrolled for the walk's hot path: most tokens need no escaping.
    for token in tokens:
        text = token if isinstance(token, str) else str(token)
        pointer += "/" + (text if "~" not in text and "/" not in text else escape(text))
    return pointer


@dataclass(slots=True)
class WalkResult:
    """What a walk produced: the projected schema and everything learned on the way.

    ``origins`` maps each projected subschema's pointer to the canonical subschemas it came from
    (several when branches were merged), as ``"input:/pointer"``.
    """

    schema: Any
    losses: list[Loss]
    origins: dict[str, list[str]]
    argument_map: ArgumentMap
    size: Size | None = None


@dataclass(slots=True)
class Node:
    """A projected subschema under construction."""

    # Plain factories: dict[str, Any]() is a generic alias call, 3x slower to make a Node.
    out: dict[str, Any] = field(default_factory=dict)
    restated: list[str] = field(default_factory=list)
    argument_map: ArgumentMap = IDENTITY
    map_values: Any = None  # a map's value schema, when it is to be sent as key/value pairs


# --- small helpers ----------------------------------------------------------------------------


def is_object(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    return (
        declared == "object"
        or (isinstance(declared, list) and "object" in declared)
        or (declared is None and "properties" in schema)
    )


def enum_value_ok(value: Any, allowed: str) -> bool:
    if allowed == "strings":
        return isinstance(value, str)
    if allowed == "strings_and_numbers":
        return isinstance(value, str | int | float) and not isinstance(value, bool)
    if allowed == "primitives":
        return value is None or isinstance(value, str | int | float | bool)
    return True


def upper_case_types(out: dict[str, Any]) -> None:
    declared = out.get("type")
    if isinstance(declared, str):
        out["type"] = declared.upper()


def short(value: Any, width: int = 120) -> str:
    text = dumps(value, indent=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def join_uri(base: str, reference: str) -> str:
    if reference.startswith("#"):
        return base.partition("#")[0] + reference  # urljoin ignores fragments of urn: bases
    try:
        return urljoin(base, reference)
    except ValueError:
        return reference


MISSING = object()


def exists(document: Any, pointer: str) -> bool:
    try:
        resolve(document, pointer)
    except KeyError:
        return False
    return True


def find(document: Any, fragment: str) -> Any:
    """What ``fragment`` names in ``document``: a JSON Pointer, or a plain-name ``$anchor``."""
    if fragment == "" or fragment.startswith("/"):
        try:
            return resolve(document, fragment)
        except KeyError:
            return MISSING
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("$anchor") == fragment or node.get("$dynamicAnchor") == fragment:
                return node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return MISSING
