"""Gate bench: the argument gate beside the raw floor and other validators, and the result gate
on a large result.

Two tool schemas: the articles' refund tool (self-contained: its `$ref`s written inline, so every
validator reads the same schema) and a medium nested order with 20 line items. Each gets a valid
and an invalid payload, arriving as JSON strings as OpenAI sends them. Contenders on the same
string: the floor (`orjson.loads` + jsonschema-rs `is_valid`), schemawire's `ArgumentGate.check`
(with duplicate-key rejection on, and off to show its cost), python-jsonschema, pydantic
`model_validate_json` on equivalent models, and fastjsonschema. For invalid payloads the anchor is
jsonschema-rs `iter_errors` (every violation), since the gate reports every violation too;
fastjsonschema and pydantic stop or differ, and are shown for reference.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import fastjsonschema
import jsonschema
import jsonschema_rs
import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schemawire.gates import ArgumentGate, ArgumentOptions, ResultGate, ResultOptions
from schemawire.types import ToolSpec

REFUND = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^A-[0-9]{4,}$"},
        "amount": {"type": "number", "exclusiveMinimum": 0},
        "reason": {"type": "string", "enum": ["late", "damaged", "duplicate", "other"]},
    },
    "required": ["order_id", "amount", "reason"],
    "additionalProperties": False,
}

ITEM = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
        "unit_price": {"type": "number", "exclusiveMinimum": 0},
        "gift": {"type": "boolean"},
        "options": {
            "type": "object",
            "properties": {
                "colour": {"type": "string", "maxLength": 20},
                "size": {"enum": ["S", "M", "L", "XL"]},
            },
            "additionalProperties": False,
        },
    },
    "required": ["sku", "quantity", "unit_price"],
    "additionalProperties": False,
}
ADDRESS = {
    "type": "object",
    "properties": {
        "street": {"type": "string", "minLength": 1},
        "city": {"type": "string", "minLength": 1},
        "postcode": {"type": "string", "pattern": "^[0-9]{5}$"},
        "country": {"type": "string", "minLength": 2, "maxLength": 2},
    },
    "required": ["street", "city", "postcode", "country"],
    "additionalProperties": False,
}
ORDER = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "minimum": 1},
                "email": {"type": "string", "maxLength": 254},
                "tier": {"enum": ["basic", "gold", "platinum"]},
            },
            "required": ["id", "email"],
            "additionalProperties": False,
        },
        "shipping": ADDRESS,
        "items": {"type": "array", "items": ITEM, "minItems": 1, "maxItems": 50},
        "note": {"type": "string", "maxLength": 500},
    },
    "required": ["customer", "shipping", "items"],
    "additionalProperties": False,
}


def _items(count: int) -> list[dict[str, Any]]:
    return [
        {
            "sku": f"ABC-{1000 + i}",
            "quantity": 1 + i % 5,
            "unit_price": 9.5 + i,
            "gift": i % 3 == 0,
            "options": {"colour": "blue", "size": "M"},
        }
        for i in range(count)
    ]


ORDER_VALID = {
    "customer": {"id": 42, "email": "ada@example.com", "tier": "gold"},
    "shipping": {
        "street": "1 Main St",
        "city": "Springfield",
        "postcode": "12345",
        "country": "US",
    },
    "items": _items(20),
    "note": "leave at the door",
}
ORDER_INVALID = {
    **ORDER_VALID,
    "customer": {"id": 0, "email": "ada@example.com", "tier": "silver"},
    "items": [
        *_items(18),
        {"sku": "abc", "quantity": 0, "unit_price": 1},
        {"sku": "ABC-0001", "quantity": 2, "unit_price": -3, "extra": True},
    ],
}


# --- the equivalent pydantic models ---------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RefundModel(_Strict):
    order_id: Annotated[str, Field(pattern=r"^A-[0-9]{4,}$")]
    amount: Annotated[float, Field(gt=0)]
    reason: Literal["late", "damaged", "duplicate", "other"]


class Options(_Strict):
    colour: Annotated[str, Field(max_length=20)] | None = None
    size: Literal["S", "M", "L", "XL"] | None = None


class Item(_Strict):
    sku: Annotated[str, Field(pattern=r"^[A-Z]{3}-[0-9]{4}$")]
    quantity: Annotated[int, Field(ge=1, le=1000)]
    unit_price: Annotated[float, Field(gt=0)]
    gift: bool | None = None
    options: Options | None = None


class Address(_Strict):
    street: Annotated[str, Field(min_length=1)]
    city: Annotated[str, Field(min_length=1)]
    postcode: Annotated[str, Field(pattern=r"^[0-9]{5}$")]
    country: Annotated[str, Field(min_length=2, max_length=2)]


class Customer(_Strict):
    id: Annotated[int, Field(ge=1)]
    email: Annotated[str, Field(max_length=254)]
    tier: Literal["basic", "gold", "platinum"] | None = None


class OrderModel(_Strict):
    customer: Customer
    shipping: Address
    items: Annotated[list[Item], Field(min_length=1, max_length=50)]
    note: Annotated[str, Field(max_length=500)] | None = None


@dataclass(frozen=True)
class Case:
    name: str
    schema: dict[str, Any]
    model: type[BaseModel]
    valid: str
    invalid: str


CASES = [
    Case(
        "refund",
        REFUND,
        RefundModel,
        orjson.dumps({"order_id": "A-1042", "amount": 25.5, "reason": "late"}).decode(),
        orjson.dumps({"order_id": "1042", "amount": -5, "reason": "bored", "x": 1}).decode(),
    ),
    Case(
        "order, 20 items",
        ORDER,
        OrderModel,
        orjson.dumps(ORDER_VALID).decode(),
        orjson.dumps(ORDER_INVALID).decode(),
    ),
]


def micros(call: Callable[[], Any], number: int, rounds: int = 7) -> float:
    """Median microseconds per call."""
    return statistics.median(timeit.repeat(call, number=number, repeat=rounds)) / number * 1e6


def _raises(call: Callable[[], Any], errors: tuple[type[Exception], ...]) -> Callable[[], None]:
    def run() -> None:
        with contextlib.suppress(errors):
            call()

    return run


def contenders(case: Case, text: str) -> dict[str, Callable[[], Any]]:
    """Every way to check ``text`` against the case's schema, by label."""
    rs = jsonschema_rs.validator_for(case.schema)
    py = jsonschema.Draft202012Validator(case.schema)
    fast = fastjsonschema.compile(case.schema)
    spec = ToolSpec(case.name, case.schema)
    gate = ArgumentGate(spec)
    gate_dupes_allowed = ArgumentGate(spec, options=ArgumentOptions(allow_duplicate_keys=True))
    return {
        "floor: orjson.loads + jsonschema-rs is_valid": lambda: rs.is_valid(orjson.loads(text)),
        "floor, every error: orjson.loads + jsonschema-rs iter_errors": lambda: list(
            rs.iter_errors(orjson.loads(text))
        ),
        "schemawire ArgumentGate.check": lambda: gate.check(text),
        "schemawire ArgumentGate.check, duplicate keys allowed": lambda: gate_dupes_allowed.check(
            text
        ),
        "python-jsonschema: json.loads + iter_errors": lambda: list(
            py.iter_errors(json.loads(text))
        ),
        "pydantic model_validate_json": _raises(
            lambda: case.model.model_validate_json(text), (ValidationError,)
        ),
        "fastjsonschema: json.loads + validate (first error)": _raises(
            lambda: fast(json.loads(text)), (fastjsonschema.JsonSchemaException,)
        ),
    }


def run_arguments(rounds: int) -> list[tuple[str, str, str, float]]:
    """(case, valid or invalid, contender, µs) for every case and contender."""
    rows = []
    for case in CASES:
        for kind, text in (("valid", case.valid), ("invalid", case.invalid)):
            gate = ArgumentGate(ToolSpec(case.name, case.schema))
            assert gate.check(text).accepted is (kind == "valid"), (case.name, kind)
            for label, call in contenders(case, text).items():
                number = 2000 if "20 items" in case.name else 20000
                rows.append((case.name, kind, label, micros(call, number, rounds)))
    return rows


def large_result() -> tuple[ToolSpec, dict[str, Any]]:
    """A search tool's result of about 100 KB: 200 records, a few with secrets in them."""
    records = [
        {
            "id": i,
            "title": f"Ticket {i}",
            "body": "Customer reports a late delivery. " * 12,
            "reporter": {"email": f"user{i}@example.com", "api_key": f"key-{i:06d}-FAKE"},
            "tags": ["delivery", "refund"],
        }
        for i in range(200)
    ]
    records[7]["body"] += " token ghp_" + "A1b2" * 9
    records[42]["body"] += " creds postgres://svc:FAKEpass123@db:5432/app"
    records_schema = {"type": "array", "items": {"type": "object"}}
    schema = {
        "type": "object",
        "required": ["total", "records"],
        "properties": {"total": {"type": "integer"}, "records": records_schema},
    }
    spec = ToolSpec("search_tickets", {"type": "object"}, schema)
    return spec, {"total": 200, "records": records}


def run_results(rounds: int) -> dict[str, float]:
    spec, result = large_result()
    size = len(orjson.dumps(result))
    gate = ResultGate(spec, options=ResultOptions(max_bytes=16 * 1024))
    no_cut = ResultGate(spec, options=ResultOptions(max_bytes=1024 * 1024))
    plain = ResultGate(spec, options=ResultOptions(max_bytes=1024 * 1024, redact=False))
    validator = jsonschema_rs.validator_for(spec.output_schema or {})
    calls: dict[str, Callable[[], Any]] = {
        "validate only (jsonschema-rs is_valid)": lambda: validator.is_valid(result),
        "ResultGate: validate": lambda: plain.check(result),
        "ResultGate: validate + redact": lambda: no_cut.check(result),
        "ResultGate: validate + redact + cut to 16 KiB": lambda: gate.check(result),
    }
    timed = {label: micros(call, 20, rounds) for label, call in calls.items()}
    return {"size_kib": size / 1024, **timed}


def run_options(rounds: int) -> dict[str, float]:
    """The refund tool's valid arguments in the forms and with the options that cost something:
    µs per call of `ArgumentGate.check`."""
    case = CASES[0]
    spec = ToolSpec(case.name, case.schema)
    default = ArgumentGate(spec)
    dupes = ArgumentGate(spec, options=ArgumentOptions(allow_duplicate_keys=True))
    tolerant = ArgumentGate(spec, options=ArgumentOptions(tolerant=True))
    valid = orjson.loads(case.valid)
    double = orjson.dumps(case.valid).decode()
    comma = case.valid[:-1] + ",}"
    assert tolerant.check(comma).repaired
    assert default.check(double).repaired
    calls: dict[str, Callable[[], Any]] = {
        "JSON string (the default: duplicate keys refused)": lambda: default.check(case.valid),
        "JSON string, duplicate keys allowed": lambda: dupes.check(case.valid),
        "already parsed object (checked for NaN, big integers, types)": lambda: default.check(
            valid
        ),
        "double-encoded string, decoded once": lambda: default.check(double),
        "trailing comma, repaired (tolerant=True)": lambda: tolerant.check(comma),
    }
    return {label: micros(call, 5000, rounds) for label, call in calls.items()}
