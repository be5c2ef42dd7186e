"""The argument gate: hostile arguments are refused with a stable code and a pointer, and the
tool is never called on them; the repairs it makes are recorded."""

from __future__ import annotations

import functools
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire import Repository, project_repository
from schemawire.errors import UsageError
from schemawire.gates import ArgumentGate, ArgumentOptions, ValueLimits, Verdict
from schemawire.project import project_catalogue
from schemawire.types import ToolSpec
from tests.helpers import EXAMPLES, WriteRepo, tool_schema

VALID = {"order_id": "A-1042", "amount": 25.5, "reason": "late"}
LIMITS = ValueLimits(max_bytes=4096, max_depth=8, max_string=64, max_items=16)


@functools.cache
def refund_gate(**options: Any) -> ArgumentGate:
    """The example repository's create_refund tool, its $refs resolved by the repository."""
    repository = Repository.load(EXAMPLES / "support-desk")
    return ArgumentGate.from_repository(repository, "create_refund", ArgumentOptions(**options))


class SpyTool:
    """A tool that records its calls; the test fails if a refused call reached it."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, arguments: Any) -> None:
        self.calls.append(arguments)


def host_call(gate: ArgumentGate, arguments: Any, tool: SpyTool) -> Verdict:
    """What a host does: the gate decides, the tool runs only on an accepted verdict."""
    verdict = gate.check(arguments)
    if verdict.accepted:
        tool(verdict.value)
    return verdict


def text(value: Any) -> str:
    return orjson.dumps(value).decode()


def nested(depth: int) -> str:
    return (
        '{"order_id": "A-1042", "amount": 1, "reason": "late", "x": '
        + "[" * depth
        + "]" * depth
        + "}"
    )


# (label, arguments, code, pointer, keyword)
HOSTILE: list[tuple[str, Any, str, str, str]] = [
    (
        "negative amount",
        text({**VALID, "amount": -5}),
        "arguments_invalid",
        "/amount",
        "exclusiveMinimum",
    ),
    (
        "extra key",
        text({**VALID, "note": "vip"}),
        "arguments_invalid",
        "/note",
        "additionalProperties",
    ),
    (
        "missing required",
        text({"order_id": "A-1042", "amount": 5}),
        "arguments_invalid",
        "/reason",
        "required",
    ),
    ("wrong type", text({**VALID, "order_id": 1042}), "arguments_invalid", "/order_id", "type"),
    (
        "outside the enum",
        text({**VALID, "reason": "bored"}),
        "arguments_invalid",
        "/reason",
        "enum",
    ),
    (
        "pattern broken",
        text({**VALID, "order_id": "1042"}),
        "arguments_invalid",
        "/order_id",
        "pattern",
    ),
    ("an array, not an object", "[1, 2]", "arguments_invalid", "", "type"),
    ("null", "null", "arguments_invalid", "", "type"),
    ("a plain string", '"refund it"', "arguments_invalid", "", "type"),
    ("empty text", "", "arguments_malformed", "", "json_syntax"),
    ("cut off", '{"order_id": "A-1042", "amount":', "arguments_malformed", "", "json_syntax"),
    ("trailing comma", '{"order_id": "A-1042",}', "arguments_malformed", "", "json_syntax"),
    (
        "code fence",
        '```json\n{"order_id": "A-1042"}\n```',
        "arguments_malformed",
        "",
        "json_syntax",
    ),
    (
        "duplicate key",
        '{"order_id": "A-1042", "order_id": "A-9999", "amount": 5, "reason": "late"}',
        "arguments_malformed",
        "/order_id",
        "json_duplicate_key",
    ),
    (
        "nested duplicate key",
        '{"order_id": "A-1042", "amount": 5, "reason": "late", "meta": {"a": 1, "a": 2}}',
        "arguments_malformed",
        "/meta/a",
        "json_duplicate_key",
    ),
    (
        "NaN",
        '{"order_id": "A-1042", "amount": NaN, "reason": "late"}',
        "arguments_malformed",
        "",
        "json_non_finite",
    ),
    (
        "Infinity",
        '{"order_id": "A-1042", "amount": -Infinity, "reason": "late"}',
        "arguments_malformed",
        "",
        "json_non_finite",
    ),
    (
        "integer beyond 64 bits",
        '{"order_id": "A-1042", "amount": 123456789012345678901234567, "reason": "late"}',
        "arguments_malformed",
        "/amount",
        "json_big_integer",
    ),
    (
        "invalid UTF-8",
        b'{"order_id": "A-\xff1042"}',
        "arguments_malformed",
        "",
        "json_invalid_utf8",
    ),
    (
        "lone surrogate",
        '{"order_id": "A-1042\ud800"}',
        "arguments_malformed",
        "",
        "json_lone_surrogate",
    ),
    ("UTF-16", '{"a": 1}'.encode("utf-16"), "arguments_malformed", "", "json_unsupported_encoding"),
    (
        "too many bytes",
        text({**VALID, "pad": "x" * 5000}),
        "arguments_too_large",
        "",
        "json_too_large",
    ),
    ("too deep", nested(20), "arguments_too_large", "", "json_too_deep"),
    (
        "string too long",
        text({**VALID, "reason": "x" * 65}),
        "arguments_too_large",
        "/reason",
        "maxLength",
    ),
    (
        "array too long",
        text({**VALID, "tags": list(range(17))}),
        "arguments_too_large",
        "/tags",
        "maxItems",
    ),
    (
        "object NaN",
        {**VALID, "amount": float("nan")},
        "arguments_malformed",
        "/amount",
        "json_non_finite",
    ),
    (
        "object big integer",
        {**VALID, "amount": 2**70},
        "arguments_malformed",
        "/amount",
        "json_big_integer",
    ),
    ("object tuple", {**VALID, "reason": ("late",)}, "arguments_malformed", "/reason", "json_type"),
    ("object key not a string", {**VALID, 1: "x"}, "arguments_malformed", "", "json_type"),
    (
        "object too deep",
        {**VALID, "x": [[[[[[[[[[]]]]]]]]]]},
        "arguments_too_large",
        "/x/0/0/0/0/0/0/0/0",
        "maxDepth",
    ),
    (
        "object string too long",
        {**VALID, "reason": "x" * 65},
        "arguments_too_large",
        "/reason",
        "maxLength",
    ),
    ("a set", {1, 2}, "arguments_malformed", "", "json_type"),
]


@pytest.mark.parametrize(
    ("label", "arguments", "code", "pointer", "keyword"), HOSTILE, ids=[row[0] for row in HOSTILE]
)
def test_hostile_arguments_are_refused_and_the_tool_never_runs(
    label: str, arguments: Any, code: str, pointer: str, keyword: str
) -> None:
    tool = SpyTool()
    verdict = host_call(refund_gate(limits=LIMITS), arguments, tool)
    assert tool.calls == []
    assert not verdict.accepted
    assert verdict.value is None
    assert verdict.rejection is not None
    assert verdict.rejection.code == code
    assert (pointer, keyword) in [(v.pointer, v.keyword) for v in verdict.rejection.violations]


def test_a_rejection_lists_every_violation_in_the_model_facing_shape() -> None:
    arguments = text({"order_id": "1042", "amount": -5, "note": "vip"})
    verdict = refund_gate().check(arguments)
    assert verdict.rejection is not None
    error = verdict.rejection.to_json()["error"]
    assert error["code"] == "arguments_invalid"
    assert error["tool"] == "create_refund"
    assert error["schema"] == "https://example.com/schemas/tools/create_refund.json"
    assert error["version"] == "1.0.0"
    assert error["hint"] == "Call create_refund again with arguments that satisfy its schema."
    found = {(v["pointer"], v["keyword"]) for v in error["violations"]}
    assert found == {
        ("/order_id", "pattern"),
        ("/amount", "exclusiveMinimum"),
        ("/note", "additionalProperties"),
        ("/reason", "required"),
    }
    amount = next(v for v in error["violations"] if v["pointer"] == "/amount")
    assert amount == {
        "pointer": "/amount",
        "keyword": "exclusiveMinimum",
        "message": "must be greater than 0",
        "expected": 0,
        "got": -5,
    }


def test_malformed_json_says_line_and_column() -> None:
    verdict = refund_gate().check('{\n  "order_id": "A-1042",\n  "amount": ,\n}')
    assert verdict.rejection is not None
    (violation,) = verdict.rejection.violations
    assert violation.message.startswith("line 3, column 13: ")


FORMS = [text(VALID), text(VALID).encode(), bytearray(text(VALID).encode()), VALID]


@pytest.mark.parametrize("arguments", FORMS, ids=["str", "bytes", "bytearray", "object"])
def test_valid_arguments_are_accepted_in_every_form_providers_send(arguments: Any) -> None:
    tool = SpyTool()
    verdict = host_call(refund_gate(), arguments, tool)
    assert verdict.accepted
    assert verdict.outcome == "accepted"
    assert verdict.conforms
    assert tool.calls == [VALID]
    assert verdict.changes == ()


def test_arguments_sent_as_a_json_string_inside_the_json_string_are_decoded_once() -> None:
    double = orjson.dumps(text(VALID)).decode()
    verdict = refund_gate().check(double)
    assert verdict.accepted
    assert verdict.value == VALID
    assert [(c.kind, c.pointer) for c in verdict.changes] == [("double_encoded", "")]
    assert verdict.outcome == "repaired"
    triple = orjson.dumps(double).decode()
    assert not refund_gate().check(triple).accepted  # decoded once, not until it works


def test_the_decodings_can_be_turned_off() -> None:
    verdict = refund_gate(decode_strings=False).check(orjson.dumps(text(VALID)).decode())
    assert verdict.rejection is not None
    assert verdict.rejection.code == "arguments_invalid"


def spec(properties: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec("t", schema)


FILTERS = {
    "type": "object",
    "properties": {"status": {"enum": ["open", "closed"]}},
    "additionalProperties": False,
}


def test_an_object_sent_as_a_json_string_is_decoded_where_the_schema_wants_an_object() -> None:
    gate = ArgumentGate(
        spec(
            {"filters": FILTERS, "tags": {"type": "array"}, "note": {"type": "string"}}, ["filters"]
        )
    )
    arguments = {"filters": '{"status": "open"}', "tags": '["a"]', "note": '{"kept": "as text"}'}
    verdict = gate.check(arguments)
    assert verdict.accepted
    assert verdict.value == {
        "filters": {"status": "open"},
        "tags": ["a"],
        "note": '{"kept": "as text"}',
    }
    assert sorted(c.pointer for c in verdict.changes if c.kind == "string_decoded") == [
        "/filters",
        "/tags",
    ]
    assert arguments["filters"] == '{"status": "open"}'  # the caller's value is left as it was


def test_a_decoded_object_that_is_still_wrong_is_refused_for_what_is_wrong_inside() -> None:
    gate = ArgumentGate(spec({"filters": FILTERS}, ["filters"]))
    verdict = gate.check({"filters": '{"status": "lost"}'})
    assert verdict.rejection is not None
    assert [(v.pointer, v.keyword) for v in verdict.rejection.violations] == [
        ("/filters/status", "enum")
    ]
    assert [(c.kind, c.pointer) for c in verdict.changes] == [("string_decoded", "/filters")]


def test_a_string_that_decodes_to_the_wrong_kind_of_value_is_left_as_it_was() -> None:
    gate = ArgumentGate(spec({"filters": FILTERS}, ["filters"]))
    verdict = gate.check({"filters": "[1, 2]"})
    assert verdict.rejection is not None
    assert [(v.pointer, v.keyword) for v in verdict.rejection.violations] == [("/filters", "type")]
    assert verdict.changes == ()


def test_a_json_string_in_an_optional_object_union_is_decoded() -> None:
    gate = ArgumentGate(spec({"filters": {"anyOf": [FILTERS, {"type": "null"}]}}, []))
    verdict = gate.check('{"filters": "{\\"status\\": \\"closed\\"}"}')
    assert verdict.accepted
    assert verdict.value == {"filters": {"status": "closed"}}


MISTAKES = {
    "code fence": '```json\n{"order_id": "A-1042", "amount": 5, "reason": "late"}\n```',
    "trailing comma": '{"order_id": "A-1042", "amount": 5, "reason": "late",}',
    "single quotes": "{'order_id': 'A-1042', 'amount': 5, 'reason': 'late'}",
    "cut-off end": '{"order_id": "A-1042", "amount": 5, "reason": "late"',
    "Python literal": '{"order_id": "A-1042", "amount": 5, "reason": "late", "x": None}',
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_tolerant_mode_repairs_common_model_mistakes_and_records_them(mistake: str) -> None:
    broken = MISTAKES[mistake]
    assert not refund_gate().check(broken).accepted  # off by default
    verdict = refund_gate(tolerant=True).check(broken)
    (change,) = verdict.changes
    assert change.kind == "json_repaired"
    assert change.before == broken
    assert mistake.rsplit(maxsplit=1)[-1].lower() in change.detail.lower()
    if mistake == "Python literal":  # repaired, then refused for the extra key
        assert verdict.rejection is not None
        assert verdict.rejection.code == "arguments_invalid"
    else:
        assert verdict.accepted
        assert verdict.value == {**VALID, "amount": 5}


def test_tolerant_mode_does_not_guess_at_text_that_holds_no_json() -> None:
    verdict = refund_gate(tolerant=True).check("please refund order A-1042")
    assert verdict.rejection is not None
    assert verdict.rejection.code == "arguments_malformed"


def test_duplicate_keys_can_be_allowed_last_value_wins() -> None:
    arguments = '{"order_id": "A-1", "order_id": "A-1042", "amount": 5, "reason": "late"}'
    verdict = refund_gate(allow_duplicate_keys=True).check(arguments)
    assert verdict.accepted
    assert verdict.value["order_id"] == "A-1042"


def test_the_gate_checks_every_keyword_even_those_a_projection_drops() -> None:
    # OpenAI strict and Gemini drop `pattern` and `exclusiveMinimum` from this tool; the gate
    # holds the canonical schema.
    verdict = refund_gate().check({"order_id": "A-12", "amount": 0, "reason": "late"})
    assert verdict.rejection is not None
    keywords = {v.keyword for v in verdict.rejection.violations}
    assert keywords == {"pattern", "exclusiveMinimum"}


def test_verdicts_are_json_for_the_trace() -> None:
    verdict = refund_gate().check(orjson.dumps(text(VALID)).decode())
    assert verdict.to_json() == {
        "gate": "arguments",
        "tool": "create_refund",
        "outcome": "repaired",
        "accepted": True,
        "rejection": None,
        "conforms": True,
        "changes": [
            {
                "kind": "double_encoded",
                "pointer": "",
                "after": None,
                "before": None,
                "detail": "the arguments were a JSON string holding JSON text; decoded once",
            }
        ],
    }


def test_a_gate_that_knows_the_strict_projection_reads_null_as_absent() -> None:
    repository = Repository.load(EXAMPLES / "support-desk")
    served = project_repository(repository, "openai.chat", strict=True)
    projection = served.find("get_weather")
    gate = ArgumentGate.from_repository(repository, "get_weather", projection=projection)
    verdict = gate.check('{"city": "Paris", "unit": null}')
    assert verdict.accepted
    assert verdict.value == {"city": "Paris"}


def test_a_gate_without_the_projection_refuses_a_strict_models_null() -> None:
    repository = Repository.load(EXAMPLES / "support-desk")
    verdict = ArgumentGate.from_repository(repository, "get_weather").check(
        '{"city": "Paris", "unit": null}'
    )
    assert verdict.rejection is not None
    assert {v.pointer for v in verdict.rejection.violations} == {"/unit"}


def test_a_gate_refuses_the_projection_of_another_tool() -> None:
    repository = Repository.load(EXAMPLES / "support-desk")
    other = project_repository(repository, "openai.chat", strict=True).find("create_refund")
    with pytest.raises(UsageError, match="create_refund"):
        ArgumentGate.from_repository(repository, "get_weather", projection=other)


def test_a_catalogue_finds_a_tool_by_the_name_the_model_was_sent() -> None:
    spec = ToolSpec("billing.refund", {"type": "object"})
    served = project_catalogue([spec], "openai.chat")
    projection = served.find(served.projections[0].projected_name)
    assert projection.name == "billing.refund" != projection.projected_name
    assert served.find("billing.refund") is projection
    with pytest.raises(UsageError, match='no tool "nope"'):
        served.find("nope")


def test_an_integral_float_is_handed_on_as_an_int_where_the_schema_says_integer() -> None:
    schema = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer"},
            "pages": {"type": "array", "items": {"type": ["integer", "null"]}},
            "ratio": {"type": "number"},
        },
    }
    gate = ArgumentGate(ToolSpec("search", schema))
    verdict = gate.check('{"limit": 5.0, "pages": [1.0, 2e0, null], "ratio": 2.0}')
    assert verdict.accepted
    assert verdict.value == {"limit": 5, "pages": [1, 2, None], "ratio": 2.0}
    assert [type(verdict.value["limit"]), type(verdict.value["ratio"])] == [int, float]
    assert all(type(page) is int for page in verdict.value["pages"][:2])


def test_an_integer_behind_a_reference_to_another_file_is_an_int_too(
    write_repo: WriteRepo,
) -> None:
    common = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/schemas/common/paging.json",
        "x-version": "1.0.0",
        "$defs": {"limit": {"type": "integer", "minimum": 1}},
    }
    limit = {"$ref": "../common/paging.json#/$defs/limit"}
    tool = tool_schema("search", properties={"limit": limit}, required=["limit"])
    root = write_repo({"schemas/common/paging.json": common, "schemas/tools/search.json": tool})
    gate = ArgumentGate.from_repository(Repository.load(root), "search")
    value = gate.check({"limit": 5.0}).value
    assert value == {"limit": 5}
    assert type(value["limit"]) is int


PAGED = {
    "type": "object",
    "properties": {
        "limit": {"type": "integer"},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "weight": {"type": "number"},
        "nested": {"type": "object", "properties": {"n": {"type": ["integer", "string"]}}},
    },
}


def _integral_float_or_int(draw_integer: int, as_float: bool) -> Any:
    return float(draw_integer) if as_float else draw_integer


@pytest.mark.slow
@given(
    limit=st.integers(-(2**40), 2**40),
    ids=st.lists(st.tuples(st.integers(-1000, 1000), st.booleans()), max_size=5),
    weight=st.floats(allow_nan=False, allow_infinity=False, width=32),
    as_float=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_integral_floats_become_ints_only_where_integers_go_and_stay_equal(
    limit: int, ids: list[tuple[int, bool]], weight: float, as_float: bool
) -> None:
    arguments = {
        "limit": _integral_float_or_int(limit, as_float),
        "ids": [_integral_float_or_int(i, f) for i, f in ids],
        "weight": weight,
        "nested": {"n": _integral_float_or_int(limit, as_float)},
    }
    verdict = ArgumentGate(ToolSpec("page", PAGED)).check(orjson.dumps(arguments))
    assert verdict.accepted
    assert verdict.value == arguments  # the same numbers: 5 == 5.0
    value = verdict.value
    assert type(value["limit"]) is int
    assert type(value["nested"]["n"]) is int
    assert all(type(i) is int for i in value["ids"])
    assert type(value["weight"]) is float  # number: left as the model wrote it


@given(st.integers(-(2**53), 2**53))
@settings(max_examples=300)
def test_an_integral_float_in_a_compact_text_is_an_int_at_any_magnitude_up_to_2_53(
    number: int,
) -> None:
    # The usual call (a short str) is decided by a search of the parser's own writing of it.
    text = orjson.dumps({"limit": float(number), "weight": 0.5}).decode()
    value = ArgumentGate(ToolSpec("page", PAGED)).check(text).value
    assert value == {"limit": number, "weight": 0.5}
    assert type(value["limit"]) is int


@pytest.mark.parametrize(
    "literal", ["5e0", "2.50e1", "0.99999999999999999999", "-0.0", "3.000", "1E2"]
)
def test_an_integral_float_written_any_way_is_an_int(literal: str) -> None:
    value = ArgumentGate(ToolSpec("page", PAGED)).check(f'{{"limit": {literal}}}').value
    assert type(value["limit"]) is int
    assert value["limit"] == float(literal)


def test_a_string_that_looks_like_an_integral_float_changes_nothing() -> None:
    gate = ArgumentGate(ToolSpec("page", PAGED))
    value = gate.check('{"limit": 7, "nested": {"n": "v1.0"}, "weight": 2.5}').value
    assert value == {"limit": 7, "nested": {"n": "v1.0"}, "weight": 2.5}


@pytest.mark.parametrize("big", [2.0**53 + 2, 1e20, 1e300, -1e300])
def test_an_integral_float_too_large_to_be_exact_is_left_a_float(big: float) -> None:
    gate = ArgumentGate(ToolSpec("search", PAGED))
    value = gate.check(orjson.dumps({"limit": big})).value
    assert type(value["limit"]) is float
    assert orjson.loads(orjson.dumps(value)) == {"limit": big}  # still JSON orjson can write
