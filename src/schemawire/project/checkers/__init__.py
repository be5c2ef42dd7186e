"""Target checkers: does a projected payload follow each target's documented rules?

The checkers are written apart from the projection code, from the facts in projections.md, so
that ``schemawire export --verify`` compares what we send with what the provider accepts, not
with what the projection meant to produce. Where sources disagree, a checker takes the side the
provider cannot reject and says so beside the rule.

A checker never raises on a payload: a payload of the wrong shape gives `Problem`s. Each target
module (`openai`, `anthropic`, `gemini`, `mcp`, `a2a`) keeps its rules in tables keyed by stable
rule id; a rule is a small function that yields `Flaw`s (where, and what is wrong) and the table
names them. This module holds the entry points and the pieces the target modules share: the walk
over the subschemas of a schema, envelope member checks and keyword shape checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote

from schemawire._json import quoted
from schemawire._pointer import join
from schemawire.errors import UsageError
from schemawire.schema.dialect import SUBSCHEMA_LISTS, SUBSCHEMA_MAPS, SUBSCHEMA_SINGLE

__all__ = [
    "JSON_TYPES",
    "TARGETS",
    "Flaw",
    "Member",
    "Problem",
    "SchemaTree",
    "Subschema",
    "check_payload",
    "check_request",
    "describe",
    "duplicate_names",
    "duplicate_payload_names",
    "each_schema",
    "keywords_outside",
    "malformed_json_schema",
    "malformed_keywords",
    "member_flaws",
    "opens_level",
    "regex_features",
    "resolve_ref",
    "run_rules",
    "types_of",
    "walk_schema",
    "walk_stopped",
]

TARGETS = (
    "openai.chat",
    "openai.responses",
    "openai.response_format",
    "openai.text_format",
    "anthropic",
    "gemini",
    "mcp",
    "a2a",
)
JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})

_OPTIONS: dict[str, frozenset[str]] = {"mcp": frozenset({"version"})}
# The walk stops here: real tool schemas are far smaller, and a Python payload that contains
# itself must not loop forever (JSON parsed by `schemawire._json` nests at most 128 levels).
_MAX_DEPTH = 128
_MAX_NODES = 100_000


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a payload breaks a target's rules.

    Attributes:
        pointer: RFC 6901 pointer into the payload checked (for a request, into the list).
        rule: stable short id, such as ``"openai.strict.additional-properties"``.
        message: one sentence: what is wrong and what the target requires.
    """

    pointer: str
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class Flaw:
    """What a rule function finds: where and what; the rule table adds the rule id."""

    pointer: str
    message: str


@dataclass(frozen=True, slots=True)
class Member:
    """One member an envelope object may have, and whether it must.

    ``kind`` is one of ``"string"``, ``"boolean"``, ``"object"``, ``"strings"`` (an
    array of strings) and ``"objects"`` (an array of objects).
    """

    kind: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class Subschema:
    """A schema position met by `walk_schema`.

    Attributes:
        pointer: where it is in the payload.
        schema: the value there; an object or a boolean when well formed, anything otherwise.
        keyword: the keyword it sits under, None for the root.
        key: the property name, definition name or index under that keyword, if any.
        depth: subschema steps from the root (the root is 0).
        levels: object and array schemas from the root down to this one, both included.
    """

    pointer: str
    schema: Any
    keyword: str | None = None
    key: str | int | None = None
    depth: int = 0
    levels: int = 0


@dataclass(frozen=True, slots=True)
class SchemaTree:
    """Every subschema of one schema in document order (root first), and where the walk stopped.

    ``stopped_at`` is the pointer where the walk gave up because the schema nests too deep or
    has too many subschemas to check, None when the walk was complete.
    """

    pointer: str
    nodes: tuple[Subschema, ...]
    stopped_at: str | None = None
    _index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def root(self) -> Subschema:
        """The schema itself."""
        return self.nodes[0]

    def at(self, pointer: str) -> Subschema | None:
        """The subschema at ``pointer`` (a payload pointer), if the walk met one there."""
        index = self._index.get(pointer)
        return None if index is None else self.nodes[index]

    def subtree(self, node: Subschema) -> Iterator[Subschema]:
        """``node`` and every subschema inside it (contiguous in document order)."""
        start = self._index.get(node.pointer, len(self.nodes))
        prefix = node.pointer + "/"
        yield from self.nodes[start : start + 1]
        for inner in self.nodes[start + 1 :]:
            if not inner.pointer.startswith(prefix):
                return
            yield inner


# --- entry points -----------------------------------------------------------------------------

PayloadCheck = Callable[[str, Any, Mapping[str, Any]], Iterator[Problem]]
RequestCheck = Callable[[str, list[Any], Mapping[str, Any]], Iterator[Problem]]


def check_payload(target: str, payload: Any, **options: Any) -> tuple[Problem, ...]:
    """Every way ``payload`` (one tool, format or card, as projected) breaks ``target``'s rules.

    Args:
        target: one of `TARGETS`.
        payload: the projected JSON value; any value is accepted and judged.
        options: per target; ``"mcp"`` takes ``version`` (``"2025-06-18"``, ``"2025-11-25"`` or
            ``"2026-07-28"``, the default).

    Raises:
        UsageError: an unknown target or option.
    """
    check, _ = _checks_for(target, options)
    return tuple(check(target, payload, options))


def check_request(target: str, payloads: Sequence[Any], **options: Any) -> tuple[Problem, ...]:
    """The per-request budgets of ``target`` over all ``payloads`` sent in one request.

    Only request-wide rules are checked here (tool counts, duplicate names, Anthropic's strict
    budgets); check each payload with `check_payload`. Pointers start with the payload's index.

    Raises:
        UsageError: an unknown target or option, or ``payloads`` that is not a list of payloads.
    """
    _, check = _checks_for(target, options)
    if isinstance(payloads, str | bytes) or not isinstance(payloads, Sequence):
        raise UsageError("check_request takes a sequence of payloads, one per tool")
    return tuple(check(target, list(payloads), options))


def _checks_for(target: str, options: Mapping[str, Any]) -> tuple[PayloadCheck, RequestCheck]:
    # The target modules import this package's shared pieces, so they are imported here, late.
    from schemawire.project.checkers import a2a, anthropic, gemini, mcp, openai

    if target not in TARGETS:
        raise UsageError(f"unknown target {quoted(target)}; expected one of {', '.join(TARGETS)}")
    unknown = set(options) - _OPTIONS.get(target, frozenset())
    if unknown:
        raise UsageError(f"target {quoted(target)} takes no option {quoted(sorted(unknown)[0])}")
    family = target.split(".", 1)[0]
    checks: dict[str, tuple[PayloadCheck, RequestCheck]] = {
        "openai": (openai.check_payload, openai.check_request),
        "anthropic": (anthropic.check_payload, anthropic.check_request),
        "gemini": (gemini.check_payload, gemini.check_request),
        "mcp": (mcp.check_payload, mcp.check_request),
        "a2a": (a2a.check_payload, a2a.check_request),
    }
    return checks[family]


# --- rule tables ------------------------------------------------------------------------------

Subject = TypeVar("Subject")


def run_rules(
    rules: Mapping[str, Callable[[Subject], Iterable[Flaw]]], subject: Subject
) -> Iterator[Problem]:
    """Every flaw each rule of ``rules`` finds in ``subject``, named by its rule id."""
    for rule_id, rule in rules.items():
        for flaw in rule(subject):
            yield Problem(flaw.pointer, rule_id, flaw.message)


def each_schema(
    rule: Callable[[Subschema], Iterable[Flaw]],
) -> Callable[[SchemaTree], Iterator[Flaw]]:
    """A tree rule that applies ``rule`` to every subschema that is a JSON object."""

    def over_tree(tree: SchemaTree) -> Iterator[Flaw]:
        for node in tree.nodes:
            if isinstance(node.schema, dict):
                yield from rule(node)

    return over_tree


# --- envelopes --------------------------------------------------------------------------------

_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "boolean": (lambda v: isinstance(v, bool), "true or false"),
    "object": (lambda v: isinstance(v, dict), "an object"),
    "strings": (
        lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
        "an array of strings",
    ),
    "objects": (
        lambda v: isinstance(v, list) and all(isinstance(i, dict) for i in v),
        "an array of objects",
    ),
}


def member_flaws(
    value: dict[Any, Any], shape: Mapping[str, Member], pointer: str, what: str
) -> dict[str, list[Flaw]]:
    """Members of ``value`` that ``shape`` requires and lacks, of the wrong kind, or unknown.

    Returns the flaws under the keys ``"missing"``, ``"type"`` and ``"unknown"``; ``what`` names
    the object in messages (``"a Chat Completions tool"``).
    """
    found: dict[str, list[Flaw]] = {"missing": [], "type": [], "unknown": []}
    for name, member in shape.items():
        if member.required and name not in value:
            found["missing"].append(Flaw(pointer, f"{what} needs the member {quoted(name)}"))
    for name, item in value.items():
        declared = shape.get(name) if isinstance(name, str) else None
        at = join(pointer, str(name))
        if declared is None:
            found["unknown"].append(Flaw(at, f"{what} has no member {quoted(name)}; remove it"))
        elif not _KINDS[declared.kind][0](item):
            expected = _KINDS[declared.kind][1]
            found["type"].append(
                Flaw(at, f"{quoted(name)} is {describe(item)}; it must be {expected}")
            )
    return found


# --- walking schemas --------------------------------------------------------------------------


def walk_schema(schema: Any, pointer: str) -> SchemaTree:
    """Every subschema of ``schema`` (which sits at ``pointer`` in the payload), root first.

    Only keywords that hold subschemas are followed, so values under ``enum``, ``const`` or
    ``default`` are never taken for schemas. The walk stops past 128 levels or 100,000
    subschemas, and records where.
    """
    nodes: list[Subschema] = []
    stack = [Subschema(pointer, schema, levels=opens_level(schema))]
    stopped_at: str | None = None
    while stack:
        node = stack.pop()
        if node.depth > _MAX_DEPTH or len(nodes) >= _MAX_NODES:
            stopped_at = node.pointer
            break
        nodes.append(node)
        stack.extend(reversed(list(_children(node))))
    index = {node.pointer: position for position, node in enumerate(nodes)}
    return SchemaTree(pointer, tuple(nodes), stopped_at, index)


def _children(node: Subschema) -> Iterator[Subschema]:
    if not isinstance(node.schema, dict):
        return
    for keyword, value in node.schema.items():
        if keyword in SUBSCHEMA_MAPS and isinstance(value, dict):
            members: Iterable[tuple[str | int, Any]] = value.items()
        elif keyword in SUBSCHEMA_LISTS and isinstance(value, list):
            members = enumerate(value)
        elif keyword in SUBSCHEMA_SINGLE:
            yield _child(node, keyword, None, value)
            continue
        else:
            continue
        for key, child in members:
            yield _child(node, keyword, key, child)


def _child(node: Subschema, keyword: str, key: str | int | None, schema: Any) -> Subschema:
    pointer = join(node.pointer, keyword) if key is None else join(node.pointer, keyword, key)
    levels = node.levels + opens_level(schema)
    return Subschema(pointer, schema, keyword, key, node.depth + 1, levels)


def opens_level(schema: Any) -> int:
    """1 when ``schema`` describes an object or an array (a level of nesting), else 0."""
    if not isinstance(schema, dict):
        return 0
    shaped = {"object", "array"} & set(types_of(schema))
    return int(bool(shaped) or "properties" in schema or "items" in schema)


def walk_stopped(tree: SchemaTree) -> Iterator[Flaw]:
    """A flaw where the walk of ``tree`` stopped: a schema this large cannot be vouched for."""
    if tree.stopped_at is not None:
        message = "schema nests over 128 levels or has over 100,000 subschemas; checks stop here"
        yield Flaw(tree.stopped_at, message)


def types_of(schema: dict[Any, Any]) -> list[str]:
    """The type names ``schema`` declares, in order (strings only)."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    return [t for t in declared if isinstance(t, str)] if isinstance(declared, list) else []


def resolve_ref(tree: SchemaTree, ref: Any) -> Subschema | None:
    """The subschema a local ``$ref`` (``#`` or ``#/...``) names in ``tree``, if any."""
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        return None
    return tree.at(tree.pointer + unquote(ref[1:]))


# --- keyword shapes ---------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_distinct_strings(value: Any) -> bool:
    strings = isinstance(value, list) and all(isinstance(item, str) for item in value)
    return strings and len(set(value)) == len(value)


_SCHEMA_MAP = (lambda v: isinstance(v, dict), "an object whose values are schemas")
_SCHEMA_LIST = (lambda v: isinstance(v, list) and bool(v), "a non-empty array of schemas")
_STRING = (lambda v: isinstance(v, str), "a string")
_BOOLEAN = (lambda v: isinstance(v, bool), "true or false")
_NUMBER = (_is_number, "a number")
_COUNT = (lambda v: _is_number(v) and isinstance(v, int) and v >= 0, "a non-negative integer")
_DISTINCT_STRINGS = (_is_distinct_strings, "an array of distinct strings")
_KEYWORD_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    **dict.fromkeys(SUBSCHEMA_MAPS, _SCHEMA_MAP),
    **dict.fromkeys(("allOf", "anyOf", "oneOf", "prefixItems"), _SCHEMA_LIST),
    # A non-schema under items, not, if... is reported where it sits, as a subschema.
    "items": (lambda v: not isinstance(v, list), "one schema (the array form is pre-2020-12)"),
    **dict.fromkeys(
        (
            "$ref",
            "$id",
            "$schema",
            "$anchor",
            "$comment",
            "description",
            "title",
            "format",
            "pattern",
        ),
        _STRING,
    ),
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), _NUMBER),
    **dict.fromkeys(
        ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"), _COUNT
    ),
    "multipleOf": (lambda v: _is_number(v) and v > 0, "a number above 0"),
    **dict.fromkeys(("required", "propertyOrdering"), _DISTINCT_STRINGS),
    **dict.fromkeys(("uniqueItems", "nullable"), _BOOLEAN),
    "enum": (lambda v: isinstance(v, list) and bool(v), "a non-empty array"),
}


def malformed_keywords(node: Subschema, type_names: frozenset[str] | None) -> Iterator[Flaw]:
    """Where ``node`` is not a schema, or a keyword of it has a value of the wrong shape.

    ``type_names`` are the names ``type`` may use (None: ``type`` is left to the caller).
    """
    schema = node.schema
    if not isinstance(schema, dict):
        if not isinstance(schema, bool):
            yield Flaw(node.pointer, f"a schema is expected here, not {describe(schema)}")
        return
    for keyword, value in schema.items():
        shape = _KEYWORD_SHAPES.get(keyword) if isinstance(keyword, str) else None
        if shape is not None and not shape[0](value):
            message = f"{quoted(keyword)} is {describe(value)}; it must be {shape[1]}"
            yield Flaw(join(node.pointer, keyword), message)
    if type_names is not None and "type" in schema:
        yield from _malformed_type(schema["type"], join(node.pointer, "type"), type_names)


def malformed_json_schema(tree: SchemaTree) -> Iterator[Flaw]:
    """`malformed_keywords` over every subschema of ``tree``, ``type`` naming JSON types."""
    for node in tree.nodes:
        yield from malformed_keywords(node, JSON_TYPES)


def keywords_outside(node: Subschema, allowed: frozenset[str], refusal: str) -> Iterator[Flaw]:
    """A flaw at each key of ``node`` that is not ``allowed``, saying the key ``refusal``
    (``"is not supported by strict tools"``)."""
    for key in node.schema:
        if key not in allowed:
            yield Flaw(join(node.pointer, str(key)), f"{quoted(str(key))} {refusal}")


def _malformed_type(declared: Any, pointer: str, names: frozenset[str]) -> Iterator[Flaw]:
    listed = declared if isinstance(declared, list) else [declared]
    valid = all(isinstance(name, str) and name in names for name in listed)
    if valid and listed and len(set(listed)) == len(listed):
        return
    expected = f"one of {', '.join(sorted(names))}, or an array of distinct ones"
    yield Flaw(pointer, f'"type" is {describe(declared)}; it must be {expected}')


# --- regular expressions ----------------------------------------------------------------------

# One token of an ECMA-262 pattern: an escape, a whole character class, a lookaround opener, a
# counted quantifier, or any other character.
_REGEX_TOKEN = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\(\?<?[=!]|\{(\d+)(?:,(\d*))?\}|.", re.DOTALL)
_LARGE_COUNT = 100


def regex_features(pattern: str) -> frozenset[str]:
    """The features of ``pattern`` constrained decoders refuse.

    Returns a subset of ``"backreference"``, ``"lookaround"``, ``"word-boundary"`` and
    ``"large-quantifier"`` (a counted repetition above 100).
    """
    found: set[str] = set()
    for match in _REGEX_TOKEN.finditer(pattern):
        token = match.group()
        if token in ("\\b", "\\B"):
            found.add("word-boundary")
        elif re.fullmatch(r"\\[1-9k]", token):
            found.add("backreference")
        elif token.startswith("(?"):
            found.add("lookaround")
        elif match.group(1) is not None and _large_count(match.group(1), match.group(2)):
            found.add("large-quantifier")
    return frozenset(found)


def _large_count(low: str, high: str | None) -> bool:
    return any(len(n) > 3 or int(n) > _LARGE_COUNT for n in (low, high or "") if n)


# --- requests and messages --------------------------------------------------------------------


def duplicate_payload_names(payloads: list[Any]) -> Iterator[Flaw]:
    """`duplicate_names` over the ``name`` members of a request's payloads."""
    named = [(f"/{i}/name", p.get("name")) for i, p in enumerate(payloads) if isinstance(p, dict)]
    yield from duplicate_names(named)


def duplicate_names(named: Iterable[tuple[str, Any]]) -> Iterator[Flaw]:
    """A flaw for each (pointer, name) whose string name an earlier one already used."""
    seen: dict[str, str] = {}
    for pointer, name in named:
        if not isinstance(name, str):
            continue
        if name in seen:
            message = f"name {describe(name)} is already used at {seen[name]}; names must differ"
            yield Flaw(pointer, message)
        else:
            seen[name] = pointer


def describe(value: Any) -> str:
    """A short, safe rendering of ``value`` for messages (never fails, never recurses)."""
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return json.dumps(shown, ensure_ascii=False)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if _is_number(value):
        # repr of an integer of thousands of digits raises; such a number is not worth showing
        small = not isinstance(value, int) or value.bit_length() <= 64
        return repr(value) if small else "a number"
    names = {dict: "an object", list: "an array"}
    return next((n for kind, n in names.items() if isinstance(value, kind)), "not JSON")
