"""A long random run of both gates, outside CI (``make fuzz``): no input may make a gate raise,
every verdict must be well formed, every value accepted must be valid by an independent
validator, and no planted secret may reach the model.

    python -m tests.gates.fuzz [--seconds N] [--inputs N] [--seed S] [--workers N]

It drives the argument gate (default, tolerant, tight limits) and the result gate (with and
without an output schema, several byte budgets) with, in turn:

- ``bytes``: random bytes, and valid payloads with bytes flipped, cut or prefixed;
- ``text``: random Unicode text (control characters, lone surrogates, bidi marks...);
- ``json-ish``: valid payloads spoiled: cut short, characters flipped, keys duplicated, NaN,
  Infinity, 1e999 or a 30-digit integer inserted, nested deep, double encoded, code fences,
  trailing commas, single quotes, comments, surrogate escapes;
- ``values``: random Python values: NaN, infinities, big and huge integers, tuples, sets,
  bytes, Decimals, subclasses of str and int, non-string keys, deep nesting, cycles;
- ``valid``: valid payloads as objects, text and bytes, which must be accepted unchanged;
- ``results``: what a tool may return (values, `ToolResult`, MCP results, exceptions), and
  valid results cut to a random budget, which must stay JSON and say whether they conform;
- ``secrets``: a secret of ``tests/data/secrets.json`` planted in a result (a value, a key, a
  nested key, a deep array, JSON in text, ``_meta``, a resource, a resource link, a value the
  rejection quotes: `tests.gates.fuzz_secrets`), which must not reach what the model reads.

Bad outcomes are counted, not fatal: exceptions, unsound verdicts (`judge`, and valid inputs
not accepted unchanged), accepted but invalid (an accepted argument, or a result said to
conform, that python-jsonschema finds invalid), and secrets escaped per placement. The counts
are printed as tables, with the first example of each; the exit status is 1 when any is not 0.

It uses the standard library's `random`: worker ``i`` is seeded ``seed + i``, so a seed and a
number of inputs give the same inputs in the same order.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import multiprocessing
import os
import random
import reprlib
import string
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

import jsonschema
import orjson

from schemawire.gates import (
    ArgumentGate,
    ArgumentOptions,
    McpResult,
    ResultGate,
    ResultOptions,
    ValueLimits,
)
from schemawire.types import ToolResult, ToolSpec
from tests.gates.fuzz_secrets import PLACEMENTS, Planted, escaped, plant, planted
from tests.gates.strategies import (
    CHANGE_KINDS,
    FORMATS,
    ODD_SCALARS,
    PATTERNS,
    Count,
    Text,
    judge,
    validator_for,
)

# --- the tools ------------------------------------------------------------------------------

REFUND = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^A-[0-9]{4,}$"},
        "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 10000},
        "currency": {"enum": ["EUR", "USD", "GBP"]},
        "reason": {"type": "string", "maxLength": 40},
        "items": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "pattern": "^[A-Z]{3}$"},
                    "qty": {"type": "integer", "minimum": 1, "maximum": 99},
                },
                "required": ["sku"],
                "additionalProperties": False,
            },
        },
        "notify": {"type": "boolean"},
    },
    "required": ["order_id", "amount"],
    "additionalProperties": False,
}
REFUND_OUTPUT = {
    "type": "object",
    "properties": {
        "refund_id": {"type": "string"},
        "status": {"enum": ["pending", "done"]},
        "api_token": {"type": "string", "x-redact": True},
        "lines": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["refund_id", "status"],
}
SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 60},
        "since": {"type": "string", "format": "date"},
        "host": {"type": ["string", "null"], "format": "ipv4"},
        "filters": {
            "type": "object",
            "properties": {
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^[a-z]+$"},
                    "maxItems": 5,
                },
                "score": {"type": "number", "minimum": -1, "maximum": 1},
            },
            "additionalProperties": False,
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "required": ["query"],
    "additionalProperties": {"type": "string"},
}
SEARCH_OUTPUT = {
    "type": "object",
    "properties": {
        "hits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "url": {"type": "string", "format": "uri"},
                    "rank": {"type": "integer", "minimum": 0, "maximum": 1000},
                },
                "required": ["title"],
            },
        },
        "total": {"type": "integer", "minimum": 0, "maximum": 10**9},
    },
}
TOOLS = [
    ToolSpec("create_refund", REFUND, REFUND_OUTPUT),
    ToolSpec("search", SEARCH, SEARCH_OUTPUT),
    ToolSpec("free_form", SEARCH),
]
TIGHT = ValueLimits(max_bytes=200, max_depth=4, max_string=16, max_items=4)
ARGUMENT_OPTIONS = {
    "default": ArgumentOptions(),
    "tolerant": ArgumentOptions(tolerant=True),
    "tight": ArgumentOptions(limits=TIGHT, decode_strings=False, allow_duplicate_keys=True),
}
BUDGETS = (1, 16, 64, 300, 32 * 1024)

# --- valid instances ------------------------------------------------------------------------

_MATCHING = {
    "^[a-z]+$": ["abc", "z", "refund"],
    "^A-[0-9]{4,}$": ["A-1042", "A-00000001"],
    "^[A-Z]{3}$": ["ABC", "XYZ"],
    "^[0-9a-f]{8}$": ["deadbeef", "01234567"],
    "@": ["a@b", "@"],
    "^(yes|no)$": ["yes", "no"],
}
_FORMAT_EXAMPLES = {
    "date": ["2024-02-29", "1999-12-31"],
    "date-time": ["2024-02-29T12:00:00Z", "2020-01-01T00:00:00+02:00"],
    "time": ["12:00:00Z", "23:59:59+01:00"],
    "ipv4": ["127.0.0.1", "10.0.0.255"],
    "ipv6": ["::1", "fe80::1"],
    "uri": ["https://example.com/a?b=c", "urn:isbn:0451450523"],
}
assert set(_MATCHING) == set(PATTERNS)
assert set(_FORMAT_EXAMPLES) == set(FORMATS)
_POOLS = (
    string.ascii_letters,
    string.digits + string.punctuation,
    " \t\n\r\x00\x1f\x7f",
    "éüßøΩЖ中文字ア😀🧪\u200b\u202e\u2028\ufeff",
)
_SURROGATES = "\ud800\udbff\udc00\udfff"


def _text(rng: random.Random, most: int = 12, surrogates: bool = False) -> str:
    pools = (*_POOLS, _SURROGATES) if surrogates else _POOLS
    return "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(0, most)))


def valid_instance(rng: random.Random, schema: dict[str, Any]) -> Any:
    """A random instance of ``schema`` (the keywords the tools above use)."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    return _INSTANCES[kind](rng, schema)


def _object(rng: random.Random, schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    value = {
        key: valid_instance(rng, sub)
        for key, sub in properties.items()
        if key in schema.get("required", []) or rng.random() < 0.6
    }
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key in (_text(rng, 6) for _ in range(rng.randint(0, 2))):
            if key not in properties:
                value[key] = valid_instance(rng, extra)
    return value


def _number(rng: random.Random, schema: dict[str, Any]) -> float:
    low = schema.get("minimum", schema.get("exclusiveMinimum", -1e9))
    high = schema.get("maximum", schema.get("exclusiveMaximum", 1e9))
    value = rng.uniform(low, high)
    return high if value == schema.get("exclusiveMinimum") else value


def _string(rng: random.Random, schema: dict[str, Any]) -> str:
    if "pattern" in schema:
        return rng.choice(_MATCHING[schema["pattern"]])
    if "format" in schema:
        return rng.choice(_FORMAT_EXAMPLES[schema["format"]])
    text = _text(rng, schema.get("maxLength", 12))[: schema.get("maxLength")]
    return text.ljust(schema.get("minLength", 0), "x")


_INSTANCES: dict[str, Callable[[random.Random, dict[str, Any]], Any]] = {
    "object": _object,
    "array": lambda rng, schema: [
        valid_instance(rng, schema["items"])
        for _ in range(rng.randint(0, schema.get("maxItems", 6)))
    ],
    "integer": lambda rng, schema: rng.randint(
        schema.get("minimum", -(2**63)), schema.get("maximum", 2**63 - 1)
    ),
    "number": _number,
    "boolean": lambda rng, schema: rng.random() < 0.5,
    "null": lambda rng, schema: None,
    "string": _string,
}


def _dumps(rng: random.Random, value: Any) -> str:
    if rng.random() < 0.5:
        return orjson.dumps(value).decode()
    return json.dumps(value, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))


# --- spoiled payloads -----------------------------------------------------------------------

_NUMBERS = (
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e999",
    "123456789012345678901234567890",
    "-0",
    "01",
    "18446744073709551616",
    "1.0e+400",
)
_ESCAPES = ('"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', '"\\u0000"', '"\\x41"', '"\\u12"')


def _cut(rng: random.Random, text: str) -> str:
    return text[: rng.randrange(len(text) + 1)]


def _flip(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        if chars:
            chars[rng.randrange(len(chars))] = rng.choice('{}[]":,\\ 0aeE-+.nt\x00\ud800é')
    return "".join(chars)


def _insert(rng: random.Random, text: str, what: str) -> str:
    """``what`` in place of a value: after a colon, or as an array item."""
    places = [i + 1 for i, char in enumerate(text) if char in ":["]
    if not places:
        return what
    at = rng.choice(places)
    return text[:at] + what + ("," if text[at : at + 1] not in "]}" else "") + text[at:]


def _duplicate_key(rng: random.Random, text: str) -> str:
    start = text.find("{")
    colon = text.find(":", start)
    if start < 0 or colon < 0:
        return text
    key = text[start + 1 : colon].strip()
    return text[: start + 1] + f"{key}: {rng.choice(['1', 'null', '{}'])}, " + text[start + 1 :]


def _odd_number(rng: random.Random, text: str) -> str:
    return _insert(rng, text, rng.choice(_NUMBERS))


def _odd_escape(rng: random.Random, text: str) -> str:
    return _insert(rng, text, rng.choice(_ESCAPES))


def _nested(rng: random.Random, text: str) -> str:
    depth = rng.choice([3, 31, 33, 200, 5000])
    return "[" * depth + text + "]" * depth


def _nested_inside(rng: random.Random, text: str) -> str:
    return _insert(rng, text, "[" * rng.choice([30, 40, 300]) + "]" * rng.choice([0, 300]))


_SPOILERS: tuple[Callable[[random.Random, str], str], ...] = (
    _cut,
    _flip,
    _duplicate_key,
    _odd_number,
    _odd_escape,
    _nested,
    _nested_inside,
    lambda rng, text: json.dumps(text),  # double encoded
    lambda rng, text: f"```json\n{text}\n```",
    lambda rng, text: text.replace("}", ",}", 1).replace("]", ",]", 1),
    lambda rng, text: text.replace('"', "'"),
    lambda rng, text: text.replace("true", "True").replace("null", "None"),
    lambda rng, text: "// a comment\n" + text + " /* end */",
    lambda rng, text: "\ufeff" + text,
    lambda rng, text: text * 2,
    lambda rng, text: text.replace(":", "", 1),
)


def json_ish(rng: random.Random, spec: ToolSpec) -> str | bytes:
    """A valid payload of ``spec``, spoiled one to three times."""
    text = _dumps(rng, valid_instance(rng, spec.input_schema))
    for _ in range(rng.randint(1, 3)):
        text = rng.choice(_SPOILERS)(rng, text)
    return text.encode("utf-8", "surrogatepass") if rng.random() < 0.2 else text


def random_bytes(rng: random.Random, spec: ToolSpec) -> bytes:
    """Random bytes, or a valid payload with bytes changed (and maybe a byte order mark)."""
    if rng.random() < 0.5:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
    raw = bytearray(orjson.dumps(valid_instance(rng, spec.input_schema)))
    for _ in range(rng.randint(1, 3)):
        if raw:
            raw[rng.randrange(len(raw))] = rng.randrange(256)
    prefix = rng.choice([b"", b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff"])
    return prefix + bytes(raw)


# --- random Python values -------------------------------------------------------------------


def random_value(rng: random.Random, depth: int = 0) -> Any:
    """A random Python value: JSON-like, or not at all."""
    roll = rng.random()
    if depth > 4 or roll < 0.35:
        value = _scalar(rng)
    elif roll < 0.4:
        value = _deep(rng, random_value(rng, 5), rng.choice([10, 33, 254, 255, 1000, 5000]))
    elif roll < 0.43:
        cycle: list[Any] = [1]
        cycle.append(cycle)
        value = cycle if rng.random() < 0.5 else {"order_id": "A-1042", "self": {"c": cycle}}
    else:
        value = _container(rng, depth)
    return value


def _container(rng: random.Random, depth: int) -> Any:
    children = [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    shape = rng.random()
    if shape < 0.3:
        return children
    if shape < 0.4:
        return tuple(children)
    if shape < 0.45:
        return {child for child in children if _hashable(child)}
    members = dict(zip((_key(rng) for _ in children), children, strict=False))
    # Sometimes nearly the right arguments.
    return {**valid_instance(rng, REFUND), **members} if shape < 0.55 and not depth else members


def _scalar(rng: random.Random) -> Any:
    return rng.choice(
        [
            lambda: None,
            lambda: rng.random() < 0.5,
            lambda: rng.randint(-(2**70), 2**70),
            lambda: rng.randint(-5, 5),
            lambda: rng.uniform(-1e300, 1e300),
            lambda: _text(rng),
            lambda: _text(rng, surrogates=True),
            lambda: rng.choice(ODD_SCALARS),
            lambda: 10 ** rng.choice([4000, 4301, 5000]),
            lambda: Text(_text(rng, 4)),
            lambda: Count(rng.randint(0, 9)),
        ]
    )()


def _key(rng: random.Random) -> Any:
    if rng.random() < 0.8:
        return rng.choice(["order_id", "amount", "items", "", "a/b", "~0", _text(rng, 5)])
    return rng.choice([1, None, True, math.nan, (1, 2), b"k", "\udfff", Text("amount")])


def _deep(rng: random.Random, value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = {"k": value} if rng.random() < 0.5 else [value]
    return value


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


# --- results --------------------------------------------------------------------------------


def random_result(rng: random.Random, spec: ToolSpec) -> Any:
    """What a tool may return: a value, a `ToolResult`, an MCP result, an exception, text."""
    schema = spec.output_schema or REFUND_OUTPUT
    roll = rng.random()
    if roll < 0.3:
        return random_value(rng)
    text = json_ish(rng, spec) if rng.random() < 0.5 else _dumps(rng, valid_instance(rng, schema))
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    block = {"type": "text", "text": text}
    if roll < 0.5:
        structured = valid_instance(rng, schema) if rng.random() < 0.5 else random_value(rng)
        content = rng.choice([[block], text, random_value(rng)])
        return ToolResult("c1", content, rng.random() < 0.2, structured)
    if roll < 0.7:
        image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        return McpResult([block, image] * rng.randint(1, 2), rng.random() < 0.2)
    if roll < 0.8:
        message = rng.choice([text, "Traceback (most recent call last):\n  x\nKeyError: 'a'", ""])
        return rng.choice([RuntimeError, ValueError, KeyError, OSError])(message)
    return text


# --- the run --------------------------------------------------------------------------------


class Case(NamedTuple):
    """One random input: its category, the tool, the input, and (valid results) the budget."""

    category: str
    spec: ToolSpec
    given: Any
    budget: int = 0


def make_case(rng: random.Random) -> Case:
    """The next random input; a function of ``rng`` alone, so a seed replays a run."""
    category = rng.choice(_CATEGORIES)
    spec = rng.choice(TOOLS[:2])
    if category == "valid-results":
        assert spec.output_schema is not None
        return Case(category, spec, valid_instance(rng, spec.output_schema), rng.randint(1, 400))
    return Case(category, spec, _MAKERS[category](rng, spec))


_MAKERS: dict[str, Callable[[random.Random, ToolSpec], Any]] = {
    "bytes": random_bytes,
    "text": lambda rng, spec: _text(rng, 80, surrogates=rng.random() < 0.3),
    "json-ish": json_ish,
    "values": lambda rng, spec: random_value(rng),
    "results": lambda rng, spec: random_result(rng, rng.choice(TOOLS)),
    "valid": lambda rng, spec: valid_instance(rng, spec.input_schema),
    "secrets": lambda rng, spec: plant(rng),
}
_CATEGORIES = (*_MAKERS, "json-ish", "valid-results")  # json-ish twice as often


class FuzzError(Exception):
    """A gate raised, or gave a verdict that is not well formed."""


_SHOW = reprlib.Repr()
_SHOW.maxlevel, _SHOW.maxstring, _SHOW.maxother = 8, 300, 200
_SHOW.maxdict = _SHOW.maxlist = _SHOW.maxtuple = _SHOW.maxset = 12
_SHOW.repr_int = lambda value, level: (  # type: ignore[method-assign]
    f"<int of {value.bit_length()} bits>" if value.bit_length() > 4000 else repr(value)
)


def shown(value: Any) -> str:
    """``value``'s repr, cut to 500 characters (and never raising: huge integers, cycles)."""
    try:
        text = _SHOW.repr(value)
    except Exception as error:  # whatever repr raises, the input is still shown
        text = f"<{type(value).__name__}: repr failed: {error!r:.100}>"
    return text if len(text) <= 500 else text[:499] + "…"


@functools.cache
def independent(schema_json: bytes) -> jsonschema.protocols.Validator:
    """python-jsonschema's validator of a schema (formats asserted): not the gates' own
    jsonschema-rs, so that a value both accept is valid by two readings of the spec."""
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def independently_valid(schema: dict[str, Any], value: Any) -> bool:
    return independent(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)).is_valid(value)


BAD_COUNTS = ("exceptions", "unsound verdicts", "accepted but invalid")


class Run:
    """The gates under test, and what they did so far: inputs, outcomes, and bad counts (each
    with its first example)."""

    def __init__(self) -> None:
        self.inputs: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.bad: Counter[str] = Counter(dict.fromkeys(BAD_COUNTS, 0))
        self.bad.update({f"secrets escaped: {placement}": 0 for placement in PLACEMENTS})
        self.planted: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.slowest: tuple[float, str, str] = (0.0, "", "")
        self.argument_gates = [
            (f"arguments/{spec.name}/{name}", ArgumentGate(spec, options=options))
            for spec in TOOLS[:2]
            for name, options in ARGUMENT_OPTIONS.items()
        ]
        self.result_gates = [
            (f"results/{spec.name}/{budget}", ResultGate(spec, options=ResultOptions(budget)))
            for spec in TOOLS
            for budget in BUDGETS
        ]

    def fail(self, kind: str, message: str, given: Any) -> None:
        """Count one bad outcome of ``kind``; the first of each kind is kept to show."""
        self.bad[kind] += 1
        self.examples.setdefault(kind, f"{message}\n    input: {shown(given)}")

    def run(self, case: Case) -> None:
        """``case`` through every gate it is for, counting what went wrong."""
        self.inputs[case.category] += 1
        if case.category in ("bytes", "text", "json-ish", "values"):
            for label, gate in self.argument_gates:
                self.check(label, gate, case.given)
        if case.category in ("values", "results"):
            for label, gate in self.result_gates:
                self.check(label, gate, case.given)
        if case.category == "valid":
            self.valid(case)
        if case.category == "valid-results":
            self.valid_result(case)
        if case.category == "secrets":
            self.secret(case.given)

    def check(self, label: str, gate: ArgumentGate | ResultGate, given: Any) -> Any:
        """The verdict of ``gate`` on ``given``, counted; None when the gate raised."""
        started = time.perf_counter()
        try:
            verdict = gate.check(given)
        except Exception as error:
            self.fail("exceptions", f"{label} raised {type(error).__name__}: {error}", given)
            return None
        took = time.perf_counter() - started
        if took > self.slowest[0]:
            self.slowest = (took, label, shown(given)[:120])
        rejection = verdict.rejection
        code = f" {rejection.code}" if rejection is not None else ""
        self.outcomes[f"{label.split('/', maxsplit=1)[0]}: {verdict.outcome}{code}"] += 1
        problems = judge(gate, verdict)
        if problems:
            self.fail("unsound verdicts", f"{label}: {'; '.join(problems)}", given)
        self.independently(label, gate, verdict, given)
        return verdict

    def independently(
        self, label: str, gate: ArgumentGate | ResultGate, verdict: Any, given: Any
    ) -> None:
        """An accepted value that python-jsonschema finds invalid is counted."""
        if isinstance(gate, ArgumentGate):
            schema, value, claimed = gate.spec.input_schema, verdict.value, verdict.accepted
        else:
            structured = verdict.value.structured if verdict.value is not None else None
            schema, value, claimed = gate.spec.output_schema, structured, verdict.conforms is True
        if claimed and schema is not None and not independently_valid(schema, value):
            message = f"{label}: accepted, and python-jsonschema says invalid: {shown(value)}"
            self.fail("accepted but invalid", message, given)

    def valid(self, case: Case) -> None:
        instance = case.given
        for given in (instance, json.dumps(instance), orjson.dumps(instance)):
            for label, gate in self.argument_gates:
                if gate.spec is not case.spec or gate.options.limits is TIGHT:
                    continue
                verdict = self.check(label, gate, given)
                if verdict is not None and (not verdict.accepted or verdict.value != instance):
                    message = f"a valid instance was not accepted unchanged: {verdict.rejection}"
                    self.fail("unsound verdicts", f"{label}: {message}", given)

    def valid_result(self, case: Case) -> None:
        spec, instance, budget = case.spec, case.given, case.budget
        assert spec.output_schema is not None
        gate = ResultGate(spec, options=ResultOptions(max_bytes=budget))
        label = f"results/{spec.name}/{budget}"
        verdict = self.check(label, gate, ToolResult("c", None, False, instance))
        if verdict is None:
            return
        problem = _result_problem(verdict, instance, budget, spec.output_schema)
        if problem is not None:
            self.fail("unsound verdicts", f"{label}: {problem}: {verdict}", instance)

    def secret(self, case: Planted) -> None:
        """A secret planted in a result: it must not reach what the model reads."""
        self.planted[case.placement] += 1
        try:
            verdict = planted(case)
        except Exception as error:
            self.fail("exceptions", f"results raised {type(error).__name__}: {error}", case)
            return
        if escaped(case, verdict):
            message = f"a {case.secret.kind} in {case.placement} reached the model"
            self.fail(f"secrets escaped: {case.placement}", message, case.text)

    def summary(self) -> dict[str, Any]:
        """What this run counted, to merge with other workers' (`merged`)."""
        return {
            "inputs": self.inputs,
            "outcomes": self.outcomes,
            "bad": self.bad,
            "planted": self.planted,
            "examples": self.examples,
            "slowest": self.slowest,
        }


def _result_problem(verdict: Any, instance: Any, budget: int, schema: dict[str, Any]) -> str | None:
    """What is wrong with the verdict on a valid result cut to ``budget``, if anything."""
    if not verdict.accepted or any(c.kind not in CHANGE_KINDS for c in verdict.changes):
        return "a valid result was refused, or changed oddly"
    structured = verdict.value.structured
    size = len(orjson.dumps(structured))
    if size > budget and not any("over the budget" in c.detail for c in verdict.changes):
        return f"{size} bytes, over the budget, and not said"
    if size > max(budget, len(orjson.dumps(instance))) and not verdict.redacted:
        return f"cut to {size} bytes, more than it was"
    if verdict.conforms != validator_for(schema).is_valid(structured):
        return f"conforms is {verdict.conforms}, wrongly"
    return None


def merged(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The workers' summaries as one."""
    total: dict[str, Any] = {key: Counter() for key in ("inputs", "outcomes", "bad", "planted")}
    total["examples"], total["slowest"] = {}, (0.0, "", "")
    for summary in summaries:
        for key in ("inputs", "outcomes", "bad", "planted"):
            total[key].update(summary[key])
        for kind, example in summary["examples"].items():
            total["examples"].setdefault(kind, example)
        total["slowest"] = max(total["slowest"], summary["slowest"])
    return total


def report(summary: dict[str, Any], seconds: float) -> int:
    """Print the counts as tables; the number of bad outcomes (0: all good)."""
    inputs = summary["inputs"]
    print(f"{sum(inputs.values()):,} inputs in {seconds:.1f} s")
    print()
    print("| category | inputs |")
    print("|---|---:|")
    for category, count in sorted(inputs.items()):
        print(f"| {category} | {count:,} |")
    print()
    print("| verdicts per gate, outcome and code | count |")
    print("|---|---:|")
    for outcome, count in sorted(summary["outcomes"].items()):
        print(f"| {outcome} | {count:,} |")
    print()
    print("| bad outcome | count | of |")
    print("|---|---:|---:|")
    for kind, count in summary["bad"].items():
        placement = kind.removeprefix("secrets escaped: ")
        of = summary["planted"][placement] if placement != kind else ""
        print(f"| {kind} | {count:,} | {of if of == '' else f'{of:,}'} |")
    took, label, given = summary["slowest"]
    print()
    print(f"slowest check: {took * 1000:.1f} ms ({label}) on {given}")
    for kind, example in summary["examples"].items():
        print(f"first of {kind}: {example}")
    return sum(summary["bad"].values())


def work(seed: int, seconds: float, inputs: int | None) -> dict[str, Any]:
    """One worker: random cases from ``seed`` until ``seconds`` pass or ``inputs`` are done."""
    rng = random.Random(seed)
    run = Run()
    deadline = time.monotonic() + seconds
    done = 0
    while time.monotonic() < deadline and (inputs is None or done < inputs):
        run.run(make_case(rng))
        done += 1
    return run.summary()


def fuzz(seed: int, seconds: float, inputs: int | None = None, workers: int = 1) -> dict[str, Any]:
    """``workers`` processes (worker ``i`` seeded ``seed + i``), their counts merged."""
    share = None if inputs is None else -(-inputs // workers)
    jobs = [(seed + number, seconds, share) for number in range(workers)]
    if workers == 1:
        return merged([work(*jobs[0])])
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return merged(pool.starmap(work, jobs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.gates.fuzz", description=(__doc__ or "").split("\n\n", maxsplit=1)[0]
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    parser.add_argument("--inputs", type=int, default=None, help="stop after this many inputs")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (default: one per CPU)"
    )
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    target = f", or {args.inputs:,} inputs" if args.inputs else ""
    print(
        f"fuzzing the gates for {args.seconds:g} s{target}, seed {seed}, {args.workers} workers",
        flush=True,
    )
    started = time.monotonic()
    summary = fuzz(seed, args.seconds, args.inputs, args.workers)
    bad = report(summary, time.monotonic() - started)
    print()
    print(f"FAILED: {bad:,} bad outcomes (seed {seed})" if bad else "no bad outcome")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
