"""Hypothesis strategies for the gate tests, and the verdict checks they share with
`tests.gates.fuzz`.

- `input_schemas` / `output_schemas`: tool schemas made of the keywords tools really use (typed
  properties; strings with a pattern, an enum, a format or lengths; bounded integers and numbers;
  booleans; nested objects; arrays with ``items`` and ``maxItems``; ``required``;
  ``additionalProperties: false``).
- `instances`: instances of those schemas, each leaf from hypothesis-jsonschema. jsonschema-rs
  agrees they are valid: no format or regex the two read differently (``email`` and
  ``hostname`` are left out: hypothesis makes punycode domains jsonschema-rs refuses), and
  every integer bounded inside 64 bits (the gate refuses larger ones, by design).
- `mutations`: a valid instance changed in one place so that it breaks its schema for sure.
- `hostile_values`, `hostile_texts`, `hostile_results`: what the gates must survive.
- `verdict_problems`: what is wrong with a verdict, if anything; `judge`: that, for a gate.
- `KNOWN_BUGS`: known limitations, each pinned by a strict xfail test.
"""

from __future__ import annotations

import functools
import math
import typing
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any, NamedTuple

import orjson
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from schemawire._json import dumps
from schemawire.gates import ArgumentGate, McpResult, ResultGate
from schemawire.gates.verdict import CODES, Change, ChangeKind, Verdict
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import Rejection, ToolResult, ToolSpec, Violation

__all__ = [
    "CHANGE_KINDS",
    "EXTRA_KEYS",
    "FORMATS",
    "KNOWN_BUGS",
    "MUTATION_KINDS",
    "PATTERNS",
    "Count",
    "Mutation",
    "Text",
    "hostile_results",
    "hostile_texts",
    "hostile_values",
    "input_schemas",
    "instances",
    "is_json",
    "json_problem",
    "judge",
    "mutations",
    "output_schemas",
    "pointer_of",
    "validator_for",
    "verdict_problems",
]

CHANGE_KINDS = frozenset(typing.get_args(ChangeKind))

# Keys as tools write them, and some a JSON Pointer must escape ("a/b" is "/a~1b"). Not "": see
# KNOWN_BUGS["empty_key_pointer"].
KEYS = st.sampled_from(
    ["city", "amount", "order_id", "tags", "meta", "n", "x.y", "a b", "é", "a/b", "t~1", "9lives"]
)

# Each pattern with strings it does not match (none of them a JSON object or array, which the
# argument gate would decode). Python's `re` and jsonschema-rs read all of these the same way.
PATTERNS: dict[str, tuple[str, ...]] = {
    "^[a-z]+$": ("ABC", "abc1", ""),
    "^A-[0-9]{4,}$": ("A-12", "B-1234", "A-123x"),
    "^[A-Z]{3}$": ("abc", "ABCD"),
    "^[0-9a-f]{8}$": ("xyz", "0123456789"),
    "@": ("no at sign", ""),
    "^(yes|no)$": ("maybe", "yes!", "no\n"),
}
FORMATS = ("date", "date-time", "time", "ipv4", "ipv6", "uri")
ENUM_WORDS = ("red", "green", "blue", "", "a/b", "ü", "0", "null", "[x")
EXTRA_KEYS = ("zz_unexpected", "extra/key", "~", "UNEXPECTED")


# --- schemas ---------------------------------------------------------------------------------


def _string() -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def plain(draw: st.DrawFn) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": draw(st.sampled_from(["string", ["string", "null"]]))}
        low = draw(st.none() | st.integers(0, 3))
        if low is not None:
            schema["minLength"] = low
        if draw(st.booleans()):
            schema["maxLength"] = (low or 0) + draw(st.integers(0, 8))
        return schema

    enums = st.builds(
        lambda values, typed: {"type": "string", "enum": values} if typed else {"enum": values},
        st.lists(st.sampled_from(ENUM_WORDS), min_size=1, max_size=4, unique=True),
        st.booleans(),
    )
    return st.one_of(
        plain(),
        st.sampled_from(sorted(PATTERNS)).map(lambda p: {"type": "string", "pattern": p}),
        enums,
        st.sampled_from(FORMATS).map(lambda f: {"type": "string", "format": f}),
    )


def _integer() -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        low = draw(st.integers(-1000, 1000) | st.integers(-(2**53), 2**53))
        high = low + draw(st.integers(0, 10**6))
        if draw(st.booleans()):
            return {"type": "integer", "minimum": low, "maximum": high}
        return {"type": "integer", "exclusiveMinimum": low - 1, "exclusiveMaximum": high + 1}

    return build()


def _number() -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        low = draw(st.integers(-4000, 4000)) / 4
        high = low + draw(st.integers(1, 4000)) / 4
        if draw(st.booleans()):
            return {"type": "number", "minimum": low, "maximum": high}
        return {"type": "number", "exclusiveMinimum": low, "exclusiveMaximum": high}

    return build()


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        _string(), _integer(), _number(), st.just({"type": "boolean"}), st.just({"type": "null"})
    )


ADDITIONAL = st.sampled_from(
    [
        False,
        False,
        False,
        {"type": "string", "maxLength": 6},
        {"type": "integer", "minimum": -100, "maximum": 100},
        {"type": "boolean"},
    ]
)


def _object(children: st.SearchStrategy[Any], max_size: int = 4) -> st.SearchStrategy[Any]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        properties = draw(st.dictionaries(KEYS, children, max_size=max_size))
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if properties and draw(st.booleans()):
            schema["required"] = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
        schema["additionalProperties"] = draw(ADDITIONAL)
        return schema

    return build()


def _array(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "array", "items": draw(children)}
        most = draw(st.none() | st.integers(0, 4))
        if most is not None:
            schema["maxItems"] = most
        if draw(st.booleans()):
            schema["minItems"] = draw(st.integers(0, min(most if most is not None else 2, 2)))
        return schema

    return build()


SUBSCHEMAS: st.SearchStrategy[dict[str, Any]] = st.recursive(
    _leaf(), lambda children: st.one_of(_object(children), _array(children)), max_leaves=8
)


@st.composite
def input_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A tool's input schema: an object at the root, with typed properties."""
    schema = draw(_object(SUBSCHEMAS, max_size=5))
    schema["description"] = "A generated tool."
    return schema


def output_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """A tool's output schema (same keywords as an input schema)."""
    return input_schemas()


# Keys of members beyond "properties": some a JSON Pointer escapes, some the checked parser's
# duplicate-key test has to count right (a colon, an escaped colon, quotes, backslashes).
_EXTRA_KEY_TEXT = st.text(max_size=6) | st.lists(
    st.sampled_from(["a", "/", "~", "~1", ":", "\\", '"', "\\u003a", "é", " "]), max_size=4
).map("".join)


def instances(schema: Any) -> st.SearchStrategy[Any]:
    """Instances of a schema that `input_schemas` made: hypothesis-jsonschema's `from_schema`
    for every leaf; objects and arrays assembled here, member by member and item by item.

    (hypothesis-jsonschema 0.23.1, the latest, generates objects with a private Hypothesis API
    that Hypothesis 6.170 no longer has: ``AttributeError: 'many' object has no attribute
    'more'`` on any object schema.)
    """
    if not isinstance(schema, dict) or schema.get("type") not in ("object", "array"):
        return from_schema(schema)
    if schema["type"] == "array":
        return st.lists(
            instances(schema["items"]),
            min_size=schema.get("minItems", 0),
            max_size=schema.get("maxItems", 4),
        )
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    members = st.fixed_dictionaries(
        {key: instances(sub) for key, sub in properties.items() if key in required},
        optional={key: instances(sub) for key, sub in properties.items() if key not in required},
    )
    additional = schema.get("additionalProperties")
    if not isinstance(additional, dict):
        return members
    extra = st.dictionaries(
        _EXTRA_KEY_TEXT.filter(lambda key: key not in properties),
        from_schema(additional),
        max_size=2,
    )
    return st.builds(lambda named, more: {**named, **more}, members, extra)


@functools.lru_cache(maxsize=2048)
def _compiled(text: bytes) -> CompiledSchema:
    return compile_schema(orjson.loads(text))


def validator_for(schema: dict[str, Any]) -> CompiledSchema:
    """``schema`` compiled, formats asserted (as the gates compile it); cached."""
    return _compiled(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))


# --- mutations -------------------------------------------------------------------------------


class Mutation(NamedTuple):
    """One change that makes a valid instance invalid.

    Attributes:
        kind: type, extra_key, missing_key, enum, pattern, range, length or items.
        pointer: where (for a missing or an extra key, the pointer names that key, as the
            validator reports it), escaped as RFC 6901 says.
        value: the whole mutated instance.
    """

    kind: str
    pointer: str
    value: Any


Path = tuple[str | int, ...]
# Draws the new value of a place, and the path the validator names for the change.
_Make = Callable[[st.DrawFn], tuple[Any, Path]]

# Values of each JSON type, to put where the schema wants another type. None of them is a
# string holding JSON text (the argument gate decodes those), and 1.5 is no integer.
_FLIPS: tuple[Any, ...] = (None, True, 0, 1.5, "x", [], {})


def pointer_of(path: Path) -> str:
    """The RFC 6901 pointer of a path of keys and indexes (written here, not taken from src)."""
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in path)


def _json_types(value: Any) -> set[str]:
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"integer", "number"} if value.is_integer() else {"number"}
    if isinstance(value, str):
        return {"string"}
    return {"array"} if isinstance(value, list) else {"object"}


def _replaced(document: Any, path: Path, value: Any) -> Any:
    """``document`` with the value at ``path`` replaced (containers on the way copied)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    copy: Any = list(document) if isinstance(document, list) else dict(document)
    copy[head] = _replaced(document[head], rest, value)
    return copy


def _at(path: Path, values: list[Any] | tuple[Any, ...]) -> _Make:
    """A new value for the place at ``path``, one of ``values``; the violation names the place."""
    choices = list(values)
    return lambda draw: (draw(st.sampled_from(choices)), path)


def _options(schema: Any, value: Any, path: Path) -> Iterator[tuple[str, Path, _Make]]:
    """(kind, path of the place that changes, how) for every mutation at ``path`` or below."""
    if not isinstance(schema, dict):
        return
    yield from _type_options(schema, path)
    if "enum" in schema:
        yield "enum", path, _at(path, [max(schema["enum"], key=len) + "!"])
    if isinstance(value, str):
        yield from _string_options(schema, path)
    if isinstance(value, int | float) and not isinstance(value, bool):
        yield from _out_of_range(schema, path)
    if isinstance(value, list):
        if "maxItems" in schema:
            filler = value[0] if value else None
            longer = value + [filler] * (schema["maxItems"] + 1 - len(value))
            yield "items", path, _at(path, [longer])
        for index, item in enumerate(value):
            yield from _options(schema.get("items"), item, (*path, index))
    if isinstance(value, dict):
        yield from _object_options(schema, value, path)


def _type_options(schema: dict[str, Any], path: Path) -> Iterator[tuple[str, Path, _Make]]:
    types = schema.get("type")
    if types is None:
        return
    wanted = {types} if isinstance(types, str) else set(types)
    flips = [f for f in _FLIPS if not _json_types(f) & wanted]
    if not path:  # a str at the root would be read as JSON text, not as a string value
        flips = [f for f in flips if not isinstance(f, str)]
    if flips:
        yield "type", path, _at(path, flips)


def _string_options(schema: dict[str, Any], path: Path) -> Iterator[tuple[str, Path, _Make]]:
    if "pattern" in schema:
        yield "pattern", path, _at(path, PATTERNS[schema["pattern"]])
    if schema.get("minLength", 0) > 0:
        yield "length", path, _at(path, ["x" * (schema["minLength"] - 1)])
    if "maxLength" in schema:
        yield "length", path, _at(path, ["x" * (schema["maxLength"] + 1)])


def _object_options(
    schema: dict[str, Any], value: dict[str, Any], path: Path
) -> Iterator[tuple[str, Path, _Make]]:
    properties = schema.get("properties", {})
    for key in schema.get("required", []):
        if key in value:
            smaller = {k: v for k, v in value.items() if k != key}
            yield "missing_key", path, lambda draw, s=smaller, k=key: (s, (*path, k))
    if schema.get("additionalProperties") is False:
        extra = [k for k in EXTRA_KEYS if k not in properties and k not in value]

        def with_extra(draw: st.DrawFn) -> tuple[Any, Path]:
            key = draw(st.sampled_from(extra))
            return {**value, key: 1}, (*path, key)

        yield "extra_key", path, with_extra
    for key, subschema in properties.items():
        if key in value:
            yield from _options(subschema, value[key], (*path, key))


def _out_of_range(schema: dict[str, Any], path: Path) -> Iterator[tuple[str, Path, _Make]]:
    step = 1 if schema.get("type") == "integer" else 0.5
    if "minimum" in schema:
        yield "range", path, _at(path, [schema["minimum"] - step])
    if "maximum" in schema:
        yield "range", path, _at(path, [schema["maximum"] + step])
    for keyword in ("exclusiveMinimum", "exclusiveMaximum"):
        if keyword in schema:
            yield "range", path, _at(path, [schema[keyword]])


MUTATION_KINDS = ("enum", "extra_key", "items", "length", "missing_key", "pattern", "range", "type")


@st.composite
def mutations(
    draw: st.DrawFn, schema: dict[str, Any], instance: Any, kind: str | None = None
) -> Mutation:
    """``instance`` (valid against ``schema``) broken in one place (by a mutation of ``kind``,
    when given); the schema's own validator confirms that the result is invalid."""
    by_kind: dict[str, list[tuple[Path, _Make]]] = {}
    for option, place, make in _options(schema, instance, ()):
        by_kind.setdefault(option, []).append((place, make))
    assert by_kind, "the root always has a type to flip"
    if kind is None:
        kind = draw(st.sampled_from(sorted(by_kind)))  # each kind as likely, however many places
    assume(kind in by_kind)
    place, make = draw(st.sampled_from(by_kind[kind]))
    new, named = make(draw)
    mutated = _replaced(instance, place, new)
    assume(not validator_for(schema).is_valid(mutated))
    return Mutation(kind, pointer_of(named), mutated)


# --- hostile input ---------------------------------------------------------------------------


class Text(str):
    """A subclass of str (libraries hand those out: enums, markup-safe strings...)."""

    __slots__ = ()


class Count(int):
    """A subclass of int."""

    __slots__ = ()


def _nested(value: Any, depth: int, as_dict: bool) -> Any:
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


def _cyclic(as_dict: bool) -> Any:
    if as_dict:
        node: dict[str, Any] = {}
        node["self"] = node
        return node
    items: list[Any] = []
    items.append(items)
    return items


# Values no JSON has, or that JSON holds only at its edges; the fuzzer draws from them too.
ODD_SCALARS = (
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    2**63,
    2**64,
    -(2**63) - 1,
    10**30,
    b"",
    b"{}",
    bytearray(b"[1]"),
    Ellipsis,
    complex(1, 2),
    Decimal("1.5"),
    Decimal("NaN"),
    Fraction(1, 3),
    "\ud800",
    "a\udfff",
    "\x00",
    "\u2028",
    '{"a": 1}',
    '{"order_id": "A-1042", "amount": 1}',
    "[1, 2]",
    object(),
)
_ODD_SCALARS = st.sampled_from(ODD_SCALARS) | st.sampled_from([5000, -5000]).map(
    lambda n: 10**n if n > 0 else -(10**-n)
)
_ODD_KEYS = st.one_of(
    st.integers(-3, 3),
    st.none(),
    st.booleans(),
    st.just(math.nan),
    st.tuples(st.integers(0, 2)),
    st.just(b"k"),
    st.just(frozenset({1})),
    st.just("\ud800"),
)


def hostile_values() -> st.SearchStrategy[Any]:
    """Python values no JSON text could produce, mixed with ones it could: NaN, infinities,
    integers beyond 64 bits and beyond ``int``'s digit limit, tuples, sets, bytes, subclasses
    of str and int, lone surrogates, non-string keys, deep nesting, cycles."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=8),
        _ODD_SCALARS,
        st.text(max_size=4).map(Text),
        st.integers(-5, 5).map(Count),
    )
    keys = st.one_of(st.text(max_size=4), st.sampled_from(["order_id", "amount", "items"]))

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, max_size=4),
            st.lists(children, max_size=3).map(tuple),
            st.frozensets(st.integers(0, 5) | st.text(max_size=2), max_size=3).map(set),
            st.dictionaries(keys, children, max_size=4),
            st.dictionaries(keys | _ODD_KEYS, children, max_size=3),
        )

    values = st.recursive(scalars, extend, max_leaves=12)
    deep = st.builds(_nested, values, st.integers(20, 3000), st.booleans())
    return st.one_of(values, values, deep, st.builds(_cyclic, st.booleans()))


NEAR_JSON = (
    "{",
    "}",
    "[",
    "]",
    '"',
    ":",
    ",",
    '"a"',
    "1",
    "-",
    "e9",
    "NaN",
    "Infinity",
    "true",
    "null",
    " ",
    "\\",
    "\\u",
    "\\ud800",
    '"a":1',
    "99999999999999999999999",
    "'",
    "```json",
    '"order_id":"A-1234"',
    '"amount":5',
)


def hostile_texts() -> st.SearchStrategy[str | bytes]:
    """Random text and bytes, and near-JSON: unbalanced brackets, NaN, big integers, duplicate
    keys, surrogate escapes..."""
    near_json = st.lists(st.sampled_from(NEAR_JSON), max_size=30).map("".join)
    return st.one_of(
        st.binary(max_size=64),
        st.text(max_size=64),
        near_json,
        near_json.map(lambda t: t.encode("utf-8", "surrogatepass")),
    )


def hostile_results() -> st.SearchStrategy[Any]:
    """What a tool may hand the result gate: a value, a `ToolResult`, an MCP result object,
    an exception."""
    values = hostile_values()
    text = st.text(max_size=40) | st.lists(st.sampled_from(NEAR_JSON), max_size=12).map("".join)
    blocks = st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, text | values),
            st.builds(lambda d: {"type": "image", "data": d, "mimeType": "image/png"}, text),
            values,
        ),
        max_size=3,
    )
    return st.one_of(
        values,
        st.builds(ToolResult, st.text(max_size=4), values | blocks, st.booleans(), values),
        st.builds(McpResult, blocks | values, st.booleans(), values, values),
        st.builds(RuntimeError, text),
        st.builds(ValueError, text, values),
    )


# --- verdicts --------------------------------------------------------------------------------

_REJECTIONS = frozenset(CODES) - CHANGE_KINDS
_ARGUMENT_CODES = frozenset(c for c in _REJECTIONS if c.startswith("arguments_")) | {"gate_error"}
_RESULT_CODES = _REJECTIONS - _ARGUMENT_CODES | {"gate_error"}
_INT64 = (-(2**63), 2**64 - 1)  # what the argument gate keeps exact (as `_values` says)
_PLAIN = (type(None), bool, int, float, str, list, dict)


_TOO_DEEP = object()  # what `_nodes` yields for what is deeper than its limit, or a cycle


def _nodes(value: Any, limit: int = 400) -> Iterator[tuple[Any, int]]:
    """Every value and key inside ``value``, with its depth; each container once, and
    `_TOO_DEEP` for a cycle or for what sits at depth ``limit``."""
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth >= limit:
            yield _TOO_DEEP, depth
            continue
        yield node, depth
        if isinstance(node, list | tuple | set | frozenset | dict):
            if id(node) in seen:
                yield _TOO_DEEP, limit
                continue
            seen.add(id(node))
            if isinstance(node, dict):
                stack.extend((key, depth + 1) for key in node)
                stack.extend((item, depth + 1) for item in node.values())
            else:
                stack.extend((item, depth + 1) for item in node)


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def json_problem(value: Any, max_depth: int = 250) -> str | None:
    """Why ``value`` is not a JSON object or array the argument gate may pass on (a type JSON
    does not have, a subclass, NaN, an integer beyond 64 bits, a lone surrogate, nesting deeper
    than ``max_depth``, a cycle), else None."""
    for node, _ in _nodes(value, max_depth + 1):
        if node is _TOO_DEEP:
            return f"nested deeper than {max_depth}, or a cycle"
        why = _node_problem(node)
        if why is not None:
            return why
    return None


def _node_problem(node: Any) -> str | None:
    kind = type(node)
    if kind not in _PLAIN:
        why = f"a {kind.__name__}"
    elif kind is dict and not all(type(key) is str for key in node):
        why = "a key that is not a str"
    elif kind is float and not math.isfinite(node):
        why = f"the float {node}"
    elif kind is int and not _INT64[0] <= node <= _INT64[1]:
        why = "an integer beyond 64 bits"
    elif kind is str and _has_surrogate(node):
        why = "a lone surrogate"
    else:
        why = None
    return why


def _is_pointer(pointer: Any) -> bool:
    return isinstance(pointer, str) and (pointer == "" or pointer.startswith("/"))


def is_json(value: Any) -> bool:
    """Whether ``value`` can be written as JSON text in UTF-8."""
    try:
        dumps(value, indent=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def verdict_problems(verdict: Any, spec: ToolSpec, gate: str, max_depth: int = 32) -> list[str]:
    """What is wrong with ``verdict`` from the ``gate`` ("arguments" or "results") of ``spec``:
    its shape, a ``gate_error`` (a bug, as `CODES` says), or accepted arguments that are not
    JSON (``max_depth``: the gate's limit). Empty when nothing is."""
    if not isinstance(verdict, Verdict):
        return [f"not a Verdict: {type(verdict).__name__}"]
    problems: list[str] = []
    if verdict.gate != gate or verdict.tool != spec.name:
        problems.append(f"gate/tool {verdict.gate!r}/{verdict.tool!r}")
    if not isinstance(verdict.accepted, bool):
        problems.append("accepted is not a bool")
    if not isinstance(verdict.changes, tuple):
        problems.append("changes is not a tuple")
    for change in verdict.changes:
        if not isinstance(change, Change) or change.kind not in CHANGE_KINDS:
            problems.append(f"unknown change {change!r:.200}")
        elif not _is_pointer(change.pointer):
            problems.append(f"change pointer {change.pointer!r}")
    if verdict.accepted:
        problems += _accepted_problems(verdict, gate, max_depth)
    else:
        problems += _rejected_problems(verdict, gate)
    if not problems and not is_json(verdict.to_json()):
        problems.append("the verdict's trace form is not JSON")
    return problems


def _accepted_problems(verdict: Verdict, gate: str, max_depth: int) -> list[str]:
    problems = []
    if verdict.rejection is not None:
        problems.append("accepted with a rejection")
    if gate == "arguments":
        if not isinstance(verdict.value, dict):
            problems.append(f"accepted arguments are not an object: {type(verdict.value)}")
        elif (why := json_problem(verdict.value, max_depth)) is not None:
            problems.append(f"accepted arguments are not JSON: {why}")
        if verdict.conforms is not True:
            problems.append("accepted arguments do not conform")
    else:
        if not isinstance(verdict.value, ToolResult) or verdict.value.is_error:
            problems.append("accepted result is not a ToolResult without error")
        if verdict.conforms not in (True, False, None):
            problems.append(f"conforms is {verdict.conforms!r}")
    return problems


def _rejected_problems(verdict: Verdict, gate: str) -> list[str]:
    problems = []
    rejection = verdict.rejection
    if not isinstance(rejection, Rejection):
        return ["rejected without a Rejection"]
    codes = _ARGUMENT_CODES if gate == "arguments" else _RESULT_CODES
    if rejection.code not in codes:
        problems.append(f"unknown code {rejection.code!r}")
    if not rejection.violations:
        problems.append("a rejection without violations")
    for violation in rejection.violations:
        if not isinstance(violation, Violation) or not _is_pointer(violation.pointer):
            problems.append(f"violation without a pointer: {violation!r:.200}")
        elif not isinstance(violation.message, str) or not isinstance(violation.keyword, str):
            problems.append(f"violation without message or keyword: {violation!r:.200}")
    if rejection.code == "gate_error":
        message = rejection.violations[0].message if rejection.violations else ""
        problems.append(f"gate_error: {message}")
    if verdict.conforms is not False:
        problems.append("rejected, yet conforms is not False")
    if gate == "arguments" and verdict.value is not None:
        problems.append("rejected arguments still carry a value")
    if gate == "results":
        value = verdict.value
        if not isinstance(value, ToolResult) or not value.is_error:
            problems.append("a rejected result is not an error ToolResult")
        elif not isinstance(value.content, dict) or not is_json(value.content):
            problems.append("a rejected result's content is not a JSON object")
    return problems


# --- known bugs ------------------------------------------------------------------------------

# Known limitations, each pinned by a strict xfail test in test_gate_properties.py.
KNOWN_BUGS = {
    "tolerant_duplicates": "the argument gate, tolerant mode: json-repair keeps the last of "
    "duplicate keys in text it repairs, though allow_duplicate_keys is off",
    "empty_key_pointer": "jsonschema-rs 0.61 leaves a member named '' out of instance_path, so "
    "a violation inside it points at the parent object",
}


def judge(gate: ArgumentGate | ResultGate, verdict: Any) -> list[str]:
    """What is wrong with ``verdict``, the verdict of ``gate``, if anything."""
    if isinstance(gate, ArgumentGate):
        return verdict_problems(verdict, gate.spec, "arguments", gate.options.limits.max_depth)
    return verdict_problems(verdict, gate.spec, "results")
